// config.cpp - the TOML config file (docs/CONFIG.md) into a validated Policy: the file
// read, the document parsed, and its top-level tables ([interface], [auto], [defaults],
// the classes, [lists], [[override]]) handed to the readers of policy/config_reader.hpp.
#include "policy/config.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <utility>

#include "core/clock.hpp"
#include "core/iface.hpp"
#include "core/input_file.hpp"
#include "core/quote.hpp"
#include "policy/config_reader.hpp"
#include "policy/validate.hpp"

namespace levee {
namespace config_reader {
namespace {

constexpr uint64_t kMaxSources = 100'000'000;  // as `levee attach --max-sources`
constexpr uint64_t kMaxBans = 100'000'000;
constexpr uint64_t kMaxAnswerCap = 1'000'000'000;
constexpr uint64_t kMaxKnownGoodPerNetwork = 1'000'000;  // 0 is no bound

}  // namespace

Result<Policy> Reader::read(const toml::table& root) {
  Policy p;
  p.source = file_;
  known(root, "", {"interface", "defaults", "class", "default", "lists", "override", "auto", "syn_auth", "crowdsec"});
  if (const toml::table* t = table(root, "interface")) interface(*t, p.iface);
  if (const toml::table* t = table(root, "auto")) autopilot(*t, p.autop);
  if (const toml::table* t = table(root, "syn_auth")) syn_auth(*t, p.syn_auth);
  if (const toml::table* t = table(root, "crowdsec")) crowdsec(*t, p.crowdsec);
  // The publisher learns of bans from the datapath's events: without them it shares nothing.
  const toml::node* events = root["interface"]["events_per_second"].node();
  if (p.crowdsec.publish && p.iface.events_per_second == 0 && events)
    fail(*events, "interface.events_per_second", "off, but [crowdsec] publish = true shares the bans the events report",
         "give events_per_second a rate (default 100), or publish = false");
  if (const toml::table* t = table(root, "defaults")) {
    known(*t, "defaults", with_inheritable({"prefix4", "prefix6"}));
    prefix4_ = prefix(*t, "defaults", "prefix4", 32).value_or(32);
    prefix6_ = prefix(*t, "defaults", "prefix6", 128).value_or(64);
    defaults_ = inheritable(*t, "defaults");
    if (!defaults_.new_sources || defaults_.new_sources->admission != Admission::Budget)
      burst_without_budget(defaults_.new_sources_burst, defaults_.new_sources);
  }
  if (const toml::node* n = root.get("class"))
    for (const auto& [t, path] : tables(*n, "class", LV_MAX_CLASSES - 1, "levee holds 64 classes, [default] included"))
      p.classes.push_back(klass(*t, path, false));
  if (const toml::table* t = table(root, "default"))
    p.classes.push_back(klass(*t, "default", true));
  else if (!root.get("default"))
    fail(1, "default", "there is no [default] table",
         R"(add [default] with the limits of everything no [[class]] matches, e.g. rate = "10k" and burst = "1k")");
  for (ClassSpec& c : p.classes) c.autop = p.autop;  // [auto] is the interface's: every class has it
  if (const toml::table* t = table(root, "lists")) {
    known(*t, "lists", {"allow", "deny", "deny_in_monitor"});
    if (const toml::node* n = t->get("allow")) list(*n, "lists.allow", LV_LIST_ALLOW, p);
    if (const toml::node* n = t->get("deny")) list(*n, "lists.deny", LV_LIST_DENY, p);
    if (const toml::node* n = t->get("deny_in_monitor"))
      if (auto v = choice(*n, "lists.deny_in_monitor", {"count", "drop"})) p.deny_in_monitor = *v == "drop";
  }
  if (const toml::node* n = root.get("override"))
    for (const auto& [t, path] : tables(*n, "override", LV_MAX_OVERRIDES, "levee holds 64 overrides"))
      override_(*t, path, p);
  if (!error_) ban_scopes(p);
  if (error_) return *error_;
  return p;
}

void Reader::interface(const toml::table& t, InterfaceSettings& s) {
  known(t, "interface", {"name", "mode", "max_sources", "when_full", "max_bans", "events_per_second"});
  if (const toml::node* n = t.get("name"); n && string(*n, "interface.name")) {
    const std::string v = *n->value<std::string>();
    if (!valid_iface_name(v))
      fail(*n, "interface.name", fmt::format("{} is not an interface name", quote_value(v)), "give e.g. eth0");
    else
      s.name = v;
  }
  if (const toml::node* n = t.get("events_per_second")) {
    const auto* str = n->as_string();
    if (str && str->get() == "off")
      s.events_per_second = 0;
    else if (auto v = count(*n, "interface.events_per_second", 0, kMaxEventsPerSecond))
      s.events_per_second = *v;
  }
  if (const toml::node* n = t.get("when_full"))
    if (auto v = choice(*n, "interface.when_full", {"evict", "refuse"})) s.refuse_full = *v == "refuse";
  if (const toml::node* n = t.get("max_bans"))
    if (auto v = count(*n, "interface.max_bans", 1, kMaxBans)) s.max_bans = static_cast<uint32_t>(*v);
  if (const toml::node* n = t.get("mode"); n && string(*n, "interface.mode")) {
    const std::string m = *n->value<std::string>();
    if (auto mode = parse_attach_mode(m))
      s.mode = *mode;
    else
      fail(*n, "interface.mode", fmt::format("{} is not a mode", quote_value(m)), "give auto, native or generic");
  }
  if (const toml::node* n = t.get("max_sources"))
    if (auto v = count(*n, "interface.max_sources", 1, kMaxSources)) s.max_sources = static_cast<uint32_t>(*v);
}

void Reader::syn_auth(const toml::table& t, SynAuthSpec& s) {
  known(t, "syn_auth",
        {"answer_rate", "answer_burst", "answer_prefix4", "answer_prefix6", "answer_cap", "known_good_per_network"});
  if (Rate r = pair(t, "syn_auth", "answer_rate", "answer_burst", kMaxRatePps, kMaxBurst,
                    "how many SYN-ACKs levee may send one network at once");
      r.set())
    s.per_network = r;
  s.prefix4 = prefix(t, "syn_auth", "answer_prefix4", 32).value_or(s.prefix4);
  s.prefix6 = prefix(t, "syn_auth", "answer_prefix6", 128).value_or(s.prefix6);
  if (const toml::node* n = t.get("answer_cap"))
    if (auto v = count(*n, "syn_auth.answer_cap", 1, kMaxAnswerCap)) s.cap = *v;
  if (const toml::node* n = t.get("known_good_per_network"))
    if (auto v = count(*n, "syn_auth.known_good_per_network", 0, kMaxKnownGoodPerNetwork))
      s.marks_per_network = static_cast<uint32_t>(*v);
  s.where = where(t, "syn_auth");
  for (const char* key : {"answer_cap", "answer_rate"})
    if (const toml::node* n = t.get(key)) s.where = Where{file_, line_of(*n), join("syn_auth", key)};
}

void Reader::autopilot(const toml::table& t, AutoSpec& a) {
  known(t, "auto",
        {"floor", "margin", "burst", "sustain", "release", "network_prefix4", "network_prefix6", "network_sources",
         "network_rate", "network_burst", "known_good_after", "known_good_for"});
  a.where = where(t, "auto");
  struct Count {
    const char* key;
    uint64_t hi, AutoSpec::*field;
  };
  for (Count k : {Count{"floor", kMaxAutoFloor, &AutoSpec::floor}, Count{"margin", kMaxAutoMargin, &AutoSpec::margin},
                  Count{"network_sources", kMaxNetworkSources, &AutoSpec::network_sources}})
    if (const toml::node* n = t.get(k.key))
      if (auto v = count(*n, join("auto", k.key), 1, k.hi)) a.*k.field = *v;
  struct Span {
    const char* key;
    uint64_t AutoSpec::*field;
  };
  for (Span k : {Span{"burst", &AutoSpec::burst_ns}, Span{"sustain", &AutoSpec::sustain_ns},
                 Span{"release", &AutoSpec::release_ns}, Span{"known_good_after", &AutoSpec::known_good_after_ns},
                 Span{"known_good_for", &AutoSpec::known_good_for_ns}})
    if (const toml::node* n = t.get(k.key))
      if (auto v = duration(*n, join("auto", k.key), k.field == &AutoSpec::sustain_ns)) a.*k.field = *v;
  a.network_prefix4 = prefix(t, "auto", "network_prefix4", 32).value_or(a.network_prefix4);
  a.network_prefix6 = prefix(t, "auto", "network_prefix6", 128).value_or(a.network_prefix6);
  if (Rate r = pair(t, "auto", "network_rate", "network_burst", kMaxRatePps, kMaxBurst,
                    "how much one escalated network may send at once");
      r.set())
    a.network_rate = r;
  if (error_) return;
  // What no single key shows (release shorter than sustain): at the key the file gave.
  Status st = check_auto(a, [&](std::string_view key) {
    const toml::node* n = t.get(key);
    return Where{file_, n ? line_of(*n) : 0, join("auto", key)};
  });
  if (!st) error_ = st.error();
}

void Reader::list(const toml::node& n, const std::string& key, lv_list_kind kind, Policy& p) {
  if (const toml::array* a = n.as_array()) p.lists.reserve(p.lists.size() + a->size());
  elements(n, key, "an array of CIDRs", [&](const toml::node& el, const std::string& k) {
    ListEntry e;
    e.kind = kind;
    e.where = where(el, k);
    const toml::node* c = &el;
    std::string ck = k;
    if (const toml::table* t = el.as_table()) {
      known(*t, k, {"cidr", "expires"});
      c = t->get("cidr");
      ck = join(k, "cidr");
      if (!c) return fail(el, ck, "missing", R"(write { cidr = "203.0.113.0/24", expires = "2h" })");
      if (const toml::node* x = t->get("expires")) {
        if (kind != LV_LIST_DENY)
          fail(*x, join(k, "expires"), "only deny entries expire", "remove expires, or put the entry on the deny list");
        e.expires_unix_ns = expiry(*x, join(k, "expires"));
      }
    }
    if (auto v = cidr(*c, ck)) e.cidr = *v, p.lists.push_back(std::move(e));
  });
}

void Reader::override_(const toml::table& t, const std::string& path, Policy& p) {
  OverrideSpec o;
  o.where = where(t, path);
  known(t, path, {"name", "networks", "rate", "burst", "bytes_rate", "bytes_burst", "classes"});
  o.name = name(t, path, override_lines_, "override", nullptr);
  if (const toml::node* n = t.get("networks")) {
    elements(*n, join(path, "networks"), "an array of CIDRs", [&](const toml::node& el, const std::string& k) {
      auto c = cidr(el, k);
      if (!c) return;
      o.cidrs.push_back(*c);
      p.lists.push_back(ListEntry{*c, LV_LIST_OVERRIDE, o.name, 0, LV_ORIGIN_CONFIG, where(el, k)});
    });
  } else {
    fail(t, join(path, "networks"), "missing",
         "give the networks it applies to, e.g. networks = [\"198.18.100.0/24\"]");
  }
  limits(t, path, o.packets, o.bytes, "how much one source may send at once");
  if (const toml::node* n = t.get("classes")) {
    elements(*n, join(path, "classes"), "an array of class names", [&](const toml::node& el, const std::string& k) {
      auto s = string(el, k);
      if (!s) return;
      if (!class_lines_.contains(*s)) {
        std::string names;
        for (const ClassSpec& c : p.classes) names += fmt::format("{}{}", names.empty() ? "" : ", ", c.name);
        return fail(el, k, fmt::format("there is no class {}", quote_value(*s)),
                    fmt::format("the classes are {}", names));
      }
      o.classes.push_back(*s);
    });
  }
  p.overrides.push_back(std::move(o));
}

void Reader::ban_scopes(const Policy& p) {
  if (Status st = check_ban_scopes(p.classes); !st) error_ = st.error();
}

}  // namespace config_reader

Result<Policy> parse_config(const std::string& text, const std::string& name, uint64_t now_unix_ns) {
  toml::table root;
  try {
    root = toml::parse(std::string_view(text), std::string_view(name));
  } catch (const toml::parse_error& e) {
    std::string why(e.description());
    std::replace(why.begin(), why.end(), '\n', ' ');
    return usage_error(
        fmt::format("{}:{}:{}: not valid TOML: {}", name, e.source().begin.line, e.source().begin.column, why));
  }
  auto policy = config_reader::Reader(name, now_unix_ns).read(root);
  if (policy) LV_TRY(validate(*policy, now_unix_ns));
  return policy;
}

Result<Policy> parse_config(const std::string& text, const std::string& name) {
  return parse_config(text, name, unix_now_ns());
}

Result<std::string> read_config_text(const std::string& path) {
  LV_TRY_ASSIGN(InputFile f,
                read_input(path, {.what = "the config file",
                                  .max_bytes = kMaxInputFileBytes,
                                  .hint = "give the path of a levee config file (see examples/levee.toml)"}));
  return std::move(f.text);
}

Result<Policy> load_config(const std::string& path) {
  LV_TRY_ASSIGN(auto text, read_config_text(path));
  return parse_config(text, path);
}

Status check_config_iface(const Policy& p, const std::string& iface) {
  if (p.iface.name.empty() || p.iface.name == iface) return {};
  return usage_error(fmt::format("{} is the config of {} ([interface] name), not of {}", p.source, p.iface.name, iface),
                     fmt::format("give {} or the config of {}", p.iface.name, iface));
}

Result<Policy> load_config(const std::string& path, const std::string& iface) {
  auto p = load_config(path);
  if (!p) return p;
  LV_TRY(check_config_iface(*p, iface));
  return p;
}

}  // namespace levee
