// config_class.cpp - the config reader's [[class]] and [default] tables: the name, the
// match, the limits, the network and total limits, and the keys a class takes from
// [defaults] unless it sets them.
#include <fmt/format.h>

#include <algorithm>

#include "core/quote.hpp"
#include "core/units.hpp"
#include "policy/config_reader.hpp"
#include "policy/validate.hpp"

namespace levee::config_reader {

ClassSpec Reader::klass(const toml::table& t, const std::string& path, bool is_default) {
  ClassSpec c;
  c.where = where(t, path);
  if (const toml::node* m = t.get("match"); m && is_default)
    fail(*m, "default.match", "the default class has no match",
         "it takes everything no [[class]] matches; put this match in a [[class]]");
  const Keys keys = {"name",    "rate",    "burst",   "bytes_rate", "bytes_burst",
                     "prefix4", "prefix6", "network", "total",      "syn_auth"};
  std::vector<std::string_view> all(keys);
  if (!is_default) all.emplace_back("match");
  known(t, path, with_inheritable(all));
  c.name = name(t, path, class_lines_, "class", is_default ? "default" : nullptr);
  if (const toml::node* m = t.get("match"); m && !is_default) c.match = match(*m, join(path, "match"));
  limits(t, path, c.packets, c.bytes, "how much one source may send at once");
  c.prefix4 = prefix(t, path, "prefix4", 32).value_or(prefix4_);
  c.prefix6 = prefix(t, path, "prefix6", 128).value_or(prefix6_);
  if (const toml::node* n = t.get("network")) network(*n, join(path, "network"), c);
  if (const toml::node* n = t.get("total")) total(*n, join(path, "total"), c);
  if (const toml::node* n = t.get("syn_auth")) {
    if (auto v = choice(*n, join(path, "syn_auth"), {"cookie", "proxy", "reset", "auto", "off"})) {
      c.syn_auth = *v == "cookie"  ? SynAuth::Cookie
                   : *v == "proxy" ? SynAuth::Proxy
                   : *v == "reset" ? SynAuth::Reset
                   : *v == "auto"  ? SynAuth::Auto
                                   : SynAuth::Off;
      c.syn_auth_given = true;
    }
  }
  inherit(t, path, inheritable(t, path), c);
  return c;
}

std::vector<std::string_view> Reader::with_inheritable(std::vector<std::string_view> keys) const {
  keys.insert(keys.end(), kInheritableKeys.begin(), kInheritableKeys.end());
  return keys;
}

Inheritable Reader::inheritable(const toml::table& t, const std::string& path) {
  Inheritable in;
  auto given = [&](const char* key) -> std::pair<const toml::node*, Where> {
    const toml::node* n = t.get(key);
    return {n, n ? where(*n, join(path, key)) : Where{}};
  };
  if (auto [n, w] = given("new_sources"); n) in.new_sources = {new_sources(*n, w.key), w};
  if (auto [n, w] = given("new_sources_burst"); n) in.new_sources_burst = {count(*n, w.key, 1, kMaxBurst), w};
  if (auto [n, w] = given("ban"); n) in.ban = {duration(*n, w.key), w};
  if (auto [n, w] = given("ban_max"); n) in.ban_max = {duration(*n, w.key), w};
  if (auto [n, w] = given("forget_after"); n) in.forget_after = {duration(*n, w.key), w};
  if (auto [n, w] = given("ban_scope"); n)
    if (auto v = choice(*n, w.key, {"class", "all"})) in.ban_all = {*v == "all", w};
  if (auto [n, w] = given("mode"); n)
    if (auto v = choice(*n, w.key, {"enforce", "monitor"})) in.monitor = {*v == "monitor", w};
  if (auto [n, w] = given("escalate"); n)
    if (auto v = choice(*n, w.key, {"auto", "off"})) in.escalate = {*v == "auto", w};
  return in;
}

std::optional<NewSources> Reader::new_sources(const toml::node& n, const std::string& key) {
  constexpr const char* hint = R"(give "auto" (the autopilot), "off" or new sources per second, e.g. 500 or "10k")";
  if (const auto* s = n.as_string()) {
    if (s->get() == "auto" || s->get() == "off")
      return NewSources{s->get() == "auto" ? Admission::Auto : Admission::Off, 0};
    if (!parse_count(s->get()))
      return fail(n, key, fmt::format(R"({} is neither "auto", "off" nor a count)", quote_value(s->get())), hint),
             std::nullopt;
  } else if (!n.is_integer()) {
    return wrong_type(n, key, R"("auto", "off" or a count)", hint), std::nullopt;
  }
  auto v = count(n, key, 1, kMaxRatePps, " (for no admission control, give new_sources = \"off\")");
  if (!v) return std::nullopt;
  return NewSources{Admission::Budget, *v};
}

void Reader::inherit_admission(const Inheritable& own, ClassSpec& c) {
  const Inheritable& d = defaults_;
  const Given<NewSources>& ns = own.new_sources ? own.new_sources : d.new_sources;
  if (ns) c.admission = ns->admission;
  if (!ns || ns->admission != Admission::Budget) return burst_without_budget(own.new_sources_burst, ns);
  uint64_t burst = default_new_sources_burst(ns->rate);
  if (own.new_sources_burst)
    burst = *own.new_sources_burst;
  else if (!own.new_sources && d.new_sources_burst)
    burst = *d.new_sources_burst;
  c.new_sources = {ns->rate, burst};
}

void Reader::burst_without_budget(const Given<uint64_t>& burst, const Given<NewSources>& ns) {
  if (!burst) return;
  if (!ns)
    return fail(burst.where.line, burst.where.key, "given without new_sources",
                "add new_sources: the new sources per second the class admits");
  fail(burst.where.line, burst.where.key, fmt::format("given with new_sources = \"{}\"", admission_name(ns->admission)),
       "new_sources_burst is the burst of a number of new sources per second: give new_sources one, or leave "
       "new_sources_burst out");
}

void Reader::inherit(const toml::table& t, const std::string& path, const Inheritable& own, ClassSpec& c) {
  const Inheritable& d = defaults_;
  auto pick = [](const auto& mine, const auto& theirs) -> const auto& { return mine ? mine : theirs; };
  inherit_admission(own, c);
  if (const auto& e = pick(own.escalate, d.escalate)) c.escalate = *e;
  const auto& ban = pick(own.ban, d.ban);
  for (const Given<uint64_t>* g : {&own.ban_max, &own.forget_after})
    if (*g && !ban)
      fail(g->where.line, g->where.key, "given without ban", "add ban: how long a source over its limit is banned");
  if (own.ban_all && !ban)
    fail(own.ban_all.where.line, own.ban_all.where.key, "given without ban",
         "add ban: how long a source over its limit is banned");
  if (ban) {
    c.ban.ban_ns = *ban;
    c.ban.where = ban.where;
    if (const auto& m = pick(own.ban_max, d.ban_max)) {
      c.ban.max_ns = *m;
      if (*m < *ban)
        fail(m.where.line, m.where.key,
             fmt::format("{} is shorter than the first ban, {}", format_duration(*m), format_duration(*ban)),
             "give ban_max at least as long as ban");
    }
    if (const auto& f = pick(own.forget_after, d.forget_after)) c.ban.forget_ns = *f;
    if (const auto& a = pick(own.ban_all, d.ban_all)) c.ban.all_classes = *a, c.ban.scope_where = a.where;
    if (!c.per_source_limited())
      fail(own.ban ? ban.where.line : line_of(t), own.ban ? ban.where.key : path,
           fmt::format("class '{}' bans sources (ban{}) but has no limit per source to be over", c.name,
                       own.ban ? "" : " from [defaults]"),
           "give it rate and burst, or bytes_rate and bytes_burst (network and total limits do not ban)");
  }
  if (const auto& m = pick(own.monitor, d.monitor)) c.monitor = *m;
}

void Reader::network(const toml::node& n, const std::string& path, ClassSpec& c) {
  const toml::table* t = n.as_table();
  if (!t) return wrong_type(n, path, "a table", R"(write network = { prefix4 = 24, rate = "10k", burst = "1k" })");
  known(*t, path, {"prefix4", "prefix6", "rate", "burst", "bytes_rate", "bytes_burst"});
  NetworkLimit& net = c.network;
  net.where = where(n, path);
  limits(*t, path, net.packets, net.bytes, "how much one network may send at once");
  if (!net.packets.set() && !net.bytes.set() && !t->get("rate") && !t->get("bytes_rate") && !t->get("burst") &&
      !t->get("bytes_burst"))
    fail(n, path, "no limit", "give rate and burst, bytes_rate and bytes_burst, or both: what each network may send");
  struct Fam {
    const char* key;
    unsigned max, NetworkLimit::*net, ClassSpec::*cls;
  };
  for (Fam f : {Fam{"prefix4", 32, &NetworkLimit::prefix4, &ClassSpec::prefix4},
                Fam{"prefix6", 128, &NetworkLimit::prefix6, &ClassSpec::prefix6}}) {
    if (auto v = prefix(*t, path, f.key, f.max)) net.*f.net = *v;
    if (net.*f.net > c.*f.cls) {
      const toml::node* at = t->get(f.key);
      fail(at ? *at : n, join(path, f.key),
           fmt::format("/{} is narrower than one source of the class, /{}", net.*f.net, c.*f.cls),
           fmt::format("a network holds whole sources: give {} = {} or less", join("network", f.key), c.*f.cls));
    }
  }
}

void Reader::total(const toml::node& n, const std::string& path, ClassSpec& c) {
  const toml::table* t = n.as_table();
  if (!t) return wrong_type(n, path, "a table", R"(write total = { rate = "100k", burst = "10k" })");
  known(*t, path, {"rate", "burst", "bytes_rate", "bytes_burst"});
  c.total.where = where(n, path);
  limits(*t, path, c.total.packets, c.total.bytes, "how much the class may pass at once");
  if (t->empty())
    fail(n, path, "no limit",
         "give rate and burst, bytes_rate and bytes_burst, or both: what the class may pass as a whole");
}

std::string Reader::name(const toml::table& t, const std::string& path, std::map<std::string, unsigned>& seen,
                         const char* what, const char* fallback) {
  const toml::node* n = t.get("name");
  const std::string key = join(path, "name");
  if (!n && !fallback) return fail(t, key, "missing", fmt::format("every {} needs a name", what)), "";
  std::string v = n ? string(*n, key).value_or("") : fallback;
  const unsigned line = n ? line_of(*n) : line_of(t);
  if (!valid_name(v))
    fail(line, key, fmt::format("{} is not a valid name", quote_value(v)),
         fmt::format("use 1 to {} letters, digits, '-', '_' or '.'", LV_NAME_LEN - 1));
  else if (auto [it, fresh] = seen.emplace(v, line); !fresh)
    fail(line, key, fmt::format("{} {} is defined twice (first at line {})", what, quote_value(v), it->second),
         "give each a name of its own");
  return v;
}

Match Reader::match(const toml::node& n, const std::string& path) {
  Match m;
  const toml::table* t = n.as_table();
  if (!t) return wrong_type(n, path, "a table", "write match.proto = \"udp\", match.port = 53, match.syn = true"), m;
  known(*t, path, {"proto", "port", "sport", "syn"});
  if (const toml::node* p = t->get("proto")) protos(*p, join(path, "proto"), m.protos);
  if (const toml::node* p = t->get("port")) ports(*p, join(path, "port"), m.ports);
  if (const toml::node* p = t->get("sport")) {
    ports(*p, join(path, "sport"), m.sports);
    if (!m.ports.empty())
      fail(*p, join(path, "sport"), "a class matches source ports or destination ports, not both",
           "keep sport and put the destination ports in a class of their own, placed after it");
  }
  if (const toml::node* s = t->get("syn")) {
    if (!s->is_boolean()) wrong_type(*s, join(path, "syn"), "true or false");
    m.syn = s->value_or(false);
  }
  for (Proto pr : m.protos) {
    if (m.ported() && pr != Proto::Tcp && pr != Proto::Udp) {
      const char* key = m.ports.empty() ? "sport" : "port";
      fail(*t->get(key), join(path, key), fmt::format("protocol {} has no ports", proto_name(pr)),
           "ports apply to tcp and udp; match other protocols in a class of their own");
    }
    if (m.syn && pr != Proto::Tcp)
      fail(*t->get("syn"), join(path, "syn"),
           fmt::format("syn matches TCP only, and proto includes {}", proto_name(pr)),
           "set proto = \"tcp\", or leave proto out");
  }
  return m;
}

void Reader::protos(const toml::node& n, const std::string& key, std::vector<Proto>& out) {
  auto one = [&](const toml::node& el, const std::string& k) {
    auto s = string(el, k);
    if (!s) return;
    auto p = parse_proto(*s);
    if (!p)
      return fail(el, k, fmt::format("{} is not a protocol", quote_value(*s)), "give tcp, udp, icmp, icmpv6 or other");
    if (std::find(out.begin(), out.end(), *p) == out.end()) out.push_back(*p);
  };
  if (n.is_array())
    elements(n, key, "a protocol or an array of them", one);
  else
    one(n, key);
}

void Reader::ports(const toml::node& n, const std::string& key, std::vector<PortRange>& out) {
  auto one = [&](const toml::node& el, const std::string& k) {
    constexpr const char* hint = "give 0 to 65535";
    if (const auto* i = el.as_integer()) {
      if (i->get() < 0 || i->get() > 65535) return fail(el, k, fmt::format("{} is not a port", i->get()), hint);
      const auto p = static_cast<uint16_t>(i->get());
      return out.push_back({p, p});
    }
    if (!el.is_string()) return wrong_type(el, k, "a port or a range \"A-B\"");
    const std::string s = *el.value<std::string>();
    const size_t dash = s.find('-');
    const std::string a = s.substr(0, dash), b = dash == std::string::npos ? a : s.substr(dash + 1);
    auto first = number(a, 99999), last = number(b, 99999);
    if (!first || !last)
      return fail(el, k, fmt::format("{} is not a port or a range", quote_value(s)), "write e.g. 53 or \"1000-2000\"");
    if (*first > 65535 || *last > 65535)
      return fail(el, k, fmt::format("{} is not a port", std::max(*first, *last)), hint);
    if (*first > *last)
      return fail(el, k, fmt::format("port range {} is empty", s),
                  fmt::format("write the lower port first: \"{}-{}\"", *last, *first));
    out.push_back({static_cast<uint16_t>(*first), static_cast<uint16_t>(*last)});
  };
  if (n.is_array())
    elements(n, key, "a port, a range or an array of them", one);
  else
    one(n, key);
}

}  // namespace levee::config_reader
