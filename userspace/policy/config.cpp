// config.cpp - the TOML config file (docs/CONFIG.md) into a validated Policy.
//
// A Reader walks the document one table at a time and keeps the first error it meets,
// as one line "FILE:LINE: KEY: problem; hint". What no single key shows (a class
// without a limit, a network listed twice) is left to validate(), which reports it at
// the Where of its class, override or list entry.
#include "policy/config.hpp"

#include <fmt/format.h>
#include <time.h>
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>

#include "core/clock.hpp"
#include "core/units.hpp"
#include "policy/validate.hpp"

namespace levee {
namespace {

constexpr uint64_t kMaxSources = 100'000'000;  // as `levee attach --max-sources`
constexpr uint64_t kMaxBans = 100'000'000;
constexpr size_t kMaxFileBytes = 64u << 20;
constexpr const char* kCountHint = "write e.g. 500, \"10k\" or \"1.5M\"";

using Keys = std::initializer_list<std::string_view>;

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}
std::string index(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }
unsigned line_of(const toml::node& n) { return n.source().begin.line; }

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      diag = std::exchange(row[j], std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])}));
  }
  return row[b.size()];
}

// A decimal number that is all of `s`, at most `max`.
std::optional<uint64_t> number(std::string_view s, uint64_t max) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v > max) return std::nullopt;
  return v;
}

constexpr const char* kDurationHint = "write a duration like \"500ms\", \"2s\", \"10m\", \"1h\" or \"1h30m\"";

// Keys a class may set and otherwise takes from [defaults] (prefix4 and prefix6 aside).
// Each with where it was given, for errors.
template <typename T>
struct Given {
  std::optional<T> value;
  Where where;
  explicit operator bool() const { return value.has_value(); }
  const T& operator*() const { return *value; }
};
struct Inheritable {
  Given<uint64_t> new_sources, new_sources_burst;
  Given<uint64_t> ban, ban_max, forget_after;
  Given<bool> ban_all, monitor;
};
constexpr std::array<std::string_view, 7> kInheritableKeys = {"new_sources",  "new_sources_burst", "ban", "ban_max",
                                                              "forget_after", "ban_scope",         "mode"};

class Reader {
 public:
  Reader(std::string file, uint64_t now_ns) : file_(std::move(file)), now_ns_(now_ns) {}

  Result<Policy> read(const toml::table& root) {
    Policy p;
    p.source = file_;
    known(root, "", {"interface", "defaults", "class", "default", "lists", "override"});
    if (const toml::table* t = table(root, "interface")) interface(*t, p.iface);
    if (const toml::table* t = table(root, "defaults")) {
      known(*t, "defaults", with_inheritable({"prefix4", "prefix6"}));
      prefix4_ = prefix(*t, "defaults", "prefix4", 32).value_or(32);
      prefix6_ = prefix(*t, "defaults", "prefix6", 128).value_or(64);
      defaults_ = inheritable(*t, "defaults");
      if (defaults_.new_sources_burst && !defaults_.new_sources)
        fail(defaults_.new_sources_burst.where.line, defaults_.new_sources_burst.where.key, "given without new_sources",
             "add new_sources: the new sources per second a class admits");
    }
    if (const toml::node* n = root.get("class"))
      for (const auto& [t, path] :
           tables(*n, "class", LV_MAX_CLASSES - 1, "levee holds 64 classes, [default] included"))
        p.classes.push_back(klass(*t, path, false));
    if (const toml::table* t = table(root, "default"))
      p.classes.push_back(klass(*t, "default", true));
    else if (!root.get("default"))
      fail(1, "default", "there is no [default] table",
           "add [default] with the limits of everything no [[class]] matches, e.g. rate = \"10k\" and burst = \"1k\"");
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

 private:
  // ---- errors: the first one is kept ----
  void fail(unsigned line, const std::string& key, const std::string& what, std::string hint = {}) {
    if (error_) return;
    const Where w{file_, line, key};
    error_ = usage_error(fmt::format("{}: {}", w.describe(), what), std::move(hint));
  }
  void fail(const toml::node& n, const std::string& key, const std::string& what, std::string hint = {}) {
    fail(line_of(n), key, what, std::move(hint));
  }
  void wrong_type(const toml::node& n, const std::string& key, const std::string& want, std::string hint = {}) {
    fail(n, key, fmt::format("expected {}, got {}", want, type_name(n)), std::move(hint));
  }
  Where where(const toml::node& n, const std::string& key) const { return {file_, line_of(n), key}; }

  // Every key of `t` is one of `keys`; the first unknown one (by line) is the error.
  void known(const toml::table& t, const std::string& path, Keys keys) {
    known(t, path, std::vector<std::string_view>(keys));
  }
  void known(const toml::table& t, const std::string& path, const std::vector<std::string_view>& keys) {
    const toml::key* bad = nullptr;
    for (const auto& [k, v] : t)
      if (std::find(keys.begin(), keys.end(), k.str()) == keys.end() &&
          (!bad || k.source().begin.line < bad->source().begin.line))
        bad = &k;
    if (!bad) return;
    std::string_view best;
    for (std::string_view k : keys)
      if (edit_distance(bad->str(), k) <= 2 &&
          (best.empty() || edit_distance(bad->str(), k) < edit_distance(bad->str(), best)))
        best = k;
    std::string known_keys;
    for (std::string_view k : keys) known_keys += fmt::format("{}{}", known_keys.empty() ? "" : ", ", k);
    fail(bad->source().begin.line, join(path, bad->str()), "unknown key",
         best.empty() ? fmt::format("the keys here are {}", known_keys) : fmt::format("did you mean '{}'?", best));
  }

  // ---- values ----
  const toml::table* table(const toml::table& parent, const char* key) {
    const toml::node* n = parent.get(key);
    if (n && !n->is_table()) wrong_type(*n, key, fmt::format("a table [{}]", key));
    return n ? n->as_table() : nullptr;
  }

  // An array of tables ([[class]]), each with its key path; more than `max` is an error.
  std::vector<std::pair<const toml::table*, std::string>> tables(const toml::node& n, const std::string& key,
                                                                 size_t max, const char* max_hint) {
    std::vector<std::pair<const toml::table*, std::string>> out;
    const toml::array* a = n.as_array();
    if (!a)
      wrong_type(n, key, fmt::format("[[{}]] tables", key), fmt::format("write [[{}]], with double brackets", key));
    for (size_t i = 0; a && i < a->size(); ++i) {
      const toml::node& el = (*a)[i];
      if (i == max) return fail(el, index(key, i), fmt::format("more than {} [[{}]] tables", max, key), max_hint), out;
      if (el.is_table())
        out.emplace_back(el.as_table(), index(key, i));
      else
        wrong_type(el, index(key, i), "a table");
    }
    return out;
  }

  // An array with at least one element; each is passed to `each` with its key path.
  template <typename F>
  void elements(const toml::node& n, const std::string& key, const std::string& want, F each) {
    const toml::array* a = n.as_array();
    if (!a) return wrong_type(n, key, want);
    if (a->empty()) return fail(n, key, "empty array", "give at least one, or leave the key out");
    for (size_t i = 0; i < a->size(); ++i) each((*a)[i], index(key, i));
  }

  std::optional<std::string> string(const toml::node& n, const std::string& key) {
    if (const auto* s = n.as_string()) return s->get();
    return wrong_type(n, key, "a string"), std::nullopt;
  }

  // A count: a TOML integer or a string like "10k", within [lo, hi].
  std::optional<uint64_t> count(const toml::node& n, const std::string& key, uint64_t lo, uint64_t hi,
                                const std::string& zero_hint = {}) {
    std::optional<uint64_t> v;
    if (const auto* i = n.as_integer()) {
      if (i->get() < 0) return fail(n, key, fmt::format("{} is negative", i->get()), kCountHint), std::nullopt;
      v = static_cast<uint64_t>(i->get());
    } else if (const auto* s = n.as_string()) {
      v = parse_count(s->get());
      if (!v) return fail(n, key, fmt::format("'{}' is not a count", s->get()), kCountHint), std::nullopt;
    } else {
      return wrong_type(n, key, "a count", kCountHint), std::nullopt;
    }
    if (*v < lo || *v > hi)
      return fail(n, key, fmt::format("{} is out of range", *v),
                  fmt::format("give {} to {}{}", lo, format_count(hi), *v == 0 ? zero_hint : "")),
             std::nullopt;
    return v;
  }

  std::optional<unsigned> prefix(const toml::table& t, const std::string& path, const char* key, unsigned max) {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    const auto* i = n->as_integer();
    if (!i) return wrong_type(*n, join(path, key), "an integer"), std::nullopt;
    if (i->get() < 1 || i->get() > max)
      return fail(*n, join(path, key), fmt::format("/{} is out of range", i->get()), fmt::format("give 1 to {}", max)),
             std::nullopt;
    return static_cast<unsigned>(i->get());
  }

  std::optional<Cidr> cidr(const toml::node& n, const std::string& key) {
    auto s = string(n, key);
    if (!s) return std::nullopt;
    auto c = Cidr::parse(*s);
    if (!c) return fail(n, key, c.error().what, c.error().hint), std::nullopt;
    return *c;
  }

  // One of `options`, as a string.
  std::optional<std::string> choice(const toml::node& n, const std::string& key,
                                    std::initializer_list<std::string_view> options) {
    auto v = string(n, key);
    std::string list;
    for (size_t i = 0; i < options.size(); ++i)
      list += fmt::format("{}\"{}\"", i == 0 ? "" : i + 1 == options.size() ? " or " : ", ", options.begin()[i]);
    const std::string name = key.substr(key.rfind('.') + 1);  // "ban_scope" of "class[0].ban_scope"
    if (v && std::find(options.begin(), options.end(), *v) == options.end())
      return fail(n, key, fmt::format("'{}' is not a valid {}", *v, name), fmt::format("give {}", list)), std::nullopt;
    if (!v) return std::nullopt;
    return v;
  }

  // A positive duration as a string ("500ms", "2s", "1h30m"): ns.
  std::optional<uint64_t> duration(const toml::node& n, const std::string& key) {
    const auto* str = n.as_string();
    if (!str) return wrong_type(n, key, "a duration string", kDurationHint), std::nullopt;
    auto ns = parse_duration_ns(str->get());
    if (!ns) return fail(n, key, fmt::format("'{}' is not a duration", str->get()), kDurationHint), std::nullopt;
    if (*ns == 0)
      return fail(n, key, fmt::format("'{}' is no time at all", str->get()), "give a positive duration"), std::nullopt;
    return ns;
  }

  // A duration from now ("2h") or a date-time, as a TOML date-time or a string: Unix ns, 0
  // after an error. The same rule as --expires (parse_expiry).
  uint64_t expiry(const toml::node& n, const std::string& key) {
    std::string text;
    if (const auto* s = n.as_string()) {
      text = s->get();
    } else if (const auto* d = n.as_date_time()) {
      std::ostringstream out;  // RFC 3339, as TOML writes it
      out << d->get();
      text = out.str();
      if (!d->get().offset)
        return fail(n, key, fmt::format("{} has no time zone", text), "add Z for UTC, or an offset like +02:00"), 0;
    } else {
      return wrong_type(n, key, "a duration or a date-time",
                        "write a duration like \"90s\", \"30m\", \"2h\", \"7d\" or \"1w\", "
                        "or a date-time like 2026-12-01T00:00:00Z"),
             0;
    }
    auto t = parse_expiry(text, now_ns_);
    if (!t) return fail(n, key, t.error().what, t.error().hint), 0;
    return *t;
  }

  // ---- tables ----
  void interface(const toml::table& t, InterfaceSettings& s) {
    known(t, "interface", {"name", "mode", "max_sources", "when_full", "max_bans", "events_per_second"});
    if (const toml::node* n = t.get("name"); n && string(*n, "interface.name")) {
      const std::string v = *n->value<std::string>();
      if (!valid_iface_name(v))
        fail(*n, "interface.name", fmt::format("'{}' is not an interface name", v), "give e.g. eth0");
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
        fail(*n, "interface.mode", fmt::format("'{}' is not a mode", m), "give auto, native or generic");
    }
    if (const toml::node* n = t.get("max_sources"))
      if (auto v = count(*n, "interface.max_sources", 1, kMaxSources)) s.max_sources = static_cast<uint32_t>(*v);
  }

  ClassSpec klass(const toml::table& t, const std::string& path, bool is_default) {
    ClassSpec c;
    c.where = where(t, path);
    if (const toml::node* m = t.get("match"); m && is_default)
      fail(*m, "default.match", "the default class has no match",
           "it takes everything no [[class]] matches; put this match in a [[class]]");
    const Keys keys = {"name", "rate", "burst", "bytes_rate", "bytes_burst", "prefix4", "prefix6", "network", "total"};
    std::vector<std::string_view> all(keys);
    if (!is_default) all.push_back("match");
    known(t, path, with_inheritable(all));
    c.name = name(t, path, class_lines_, "class", is_default ? "default" : nullptr);
    if (const toml::node* m = t.get("match"); m && !is_default) c.match = match(*m, join(path, "match"));
    limits(t, path, c.packets, c.bytes);
    c.prefix4 = prefix(t, path, "prefix4", 32).value_or(prefix4_);
    c.prefix6 = prefix(t, path, "prefix6", 128).value_or(prefix6_);
    if (const toml::node* n = t.get("network")) network(*n, join(path, "network"), c);
    if (const toml::node* n = t.get("total")) total(*n, join(path, "total"), c);
    inherit(t, path, inheritable(t, path), c);
    return c;
  }

  std::vector<std::string_view> with_inheritable(std::vector<std::string_view> keys) const {
    keys.insert(keys.end(), kInheritableKeys.begin(), kInheritableKeys.end());
    return keys;
  }

  // The keys a class may take from [defaults], as given in `t` (a class or [defaults]).
  Inheritable inheritable(const toml::table& t, const std::string& path) {
    Inheritable in;
    auto given = [&](const char* key) -> std::pair<const toml::node*, Where> {
      const toml::node* n = t.get(key);
      return {n, n ? where(*n, join(path, key)) : Where{}};
    };
    if (auto [n, w] = given("new_sources"); n)
      in.new_sources = {count(*n, w.key, 1, kMaxRatePps, " (for no admission limit, leave out new_sources)"), w};
    if (auto [n, w] = given("new_sources_burst"); n) in.new_sources_burst = {count(*n, w.key, 1, kMaxBurst), w};
    if (auto [n, w] = given("ban"); n) in.ban = {duration(*n, w.key), w};
    if (auto [n, w] = given("ban_max"); n) in.ban_max = {duration(*n, w.key), w};
    if (auto [n, w] = given("forget_after"); n) in.forget_after = {duration(*n, w.key), w};
    if (auto [n, w] = given("ban_scope"); n)
      if (auto v = choice(*n, w.key, {"class", "all"})) in.ban_all = {*v == "all", w};
    if (auto [n, w] = given("mode"); n)
      if (auto v = choice(*n, w.key, {"enforce", "monitor"})) in.monitor = {*v == "monitor", w};
    return in;
  }

  // A class's own settings over [defaults]'.
  void inherit(const toml::table& t, const std::string& path, const Inheritable& own, ClassSpec& c) {
    const Inheritable& d = defaults_;
    auto pick = [](const auto& mine, const auto& theirs) -> const auto& { return mine ? mine : theirs; };
    const auto& rate = pick(own.new_sources, d.new_sources);
    if (rate) {
      uint64_t burst = default_new_sources_burst(*rate);
      if (own.new_sources_burst)
        burst = *own.new_sources_burst;
      else if (!own.new_sources && d.new_sources_burst)
        burst = *d.new_sources_burst;
      c.new_sources = {*rate, burst};
    } else if (own.new_sources_burst) {
      fail(own.new_sources_burst.where.line, own.new_sources_burst.where.key, "given without new_sources",
           "add new_sources: the new sources per second the class admits");
    }
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

  // network = { prefix4, prefix6, rate, burst, bytes_rate, bytes_burst }
  void network(const toml::node& n, const std::string& path, ClassSpec& c) {
    const toml::table* t = n.as_table();
    if (!t) return wrong_type(n, path, "a table", "write network = { prefix4 = 24, rate = \"10k\", burst = \"1k\" }");
    known(*t, path, {"prefix4", "prefix6", "rate", "burst", "bytes_rate", "bytes_burst"});
    NetworkLimit& net = c.network;
    net.where = where(n, path);
    limits(*t, path, net.packets, net.bytes);
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

  // total = { rate, burst, bytes_rate, bytes_burst }
  void total(const toml::node& n, const std::string& path, ClassSpec& c) {
    const toml::table* t = n.as_table();
    if (!t) return wrong_type(n, path, "a table", "write total = { rate = \"100k\", burst = \"10k\" }");
    known(*t, path, {"rate", "burst", "bytes_rate", "bytes_burst"});
    c.total.where = where(n, path);
    limits(*t, path, c.total.packets, c.total.bytes);
    if (t->empty())
      fail(n, path, "no limit",
           "give rate and burst, bytes_rate and bytes_burst, or both: what the class may pass as a whole");
  }

  // Classes banning in every class share one ban per source, so one prefix.
  void ban_scopes(const Policy& p) {
    if (Status st = check_ban_scopes(p.classes); !st) error_ = st.error();
  }

  // A class's or override's name, valid and unique; `fallback` if absent (null: required).
  std::string name(const toml::table& t, const std::string& path, std::map<std::string, unsigned>& seen,
                   const char* what, const char* fallback) {
    const toml::node* n = t.get("name");
    const std::string key = join(path, "name");
    if (!n && !fallback) return fail(t, key, "missing", fmt::format("every {} needs a name", what)), "";
    const std::string v = n ? string(*n, key).value_or("") : fallback;
    const unsigned line = n ? line_of(*n) : line_of(t);
    if (!valid_name(v))
      fail(line, key, fmt::format("'{}' is not a valid name", v),
           fmt::format("use 1 to {} letters, digits, '-', '_' or '.'", LV_NAME_LEN - 1));
    else if (auto [it, fresh] = seen.emplace(v, line); !fresh)
      fail(line, key, fmt::format("{} '{}' is defined twice (first at line {})", what, v, it->second),
           "give each a name of its own");
    return v;
  }

  Match match(const toml::node& n, const std::string& path) {
    Match m;
    const toml::table* t = n.as_table();
    if (!t) return wrong_type(n, path, "a table", "write match.proto = \"udp\", match.port = 53, match.syn = true"), m;
    known(*t, path, {"proto", "port", "syn"});
    if (const toml::node* p = t->get("proto")) protos(*p, join(path, "proto"), m.protos);
    if (const toml::node* p = t->get("port")) ports(*p, join(path, "port"), m.ports);
    if (const toml::node* s = t->get("syn")) {
      if (!s->is_boolean()) wrong_type(*s, join(path, "syn"), "true or false");
      m.syn = s->value_or(false);
    }
    for (Proto pr : m.protos) {
      if (!m.ports.empty() && pr != Proto::Tcp && pr != Proto::Udp)
        fail(*t->get("port"), join(path, "port"), fmt::format("protocol {} has no ports", proto_name(pr)),
             "ports apply to tcp and udp; match other protocols in a class of their own");
      if (m.syn && pr != Proto::Tcp)
        fail(*t->get("syn"), join(path, "syn"),
             fmt::format("syn matches TCP only, and proto includes {}", proto_name(pr)),
             "set proto = \"tcp\", or leave proto out");
    }
    return m;
  }

  void protos(const toml::node& n, const std::string& key, std::vector<Proto>& out) {
    auto one = [&](const toml::node& el, const std::string& k) {
      auto s = string(el, k);
      if (!s) return;
      auto p = parse_proto(*s);
      if (!p) return fail(el, k, fmt::format("'{}' is not a protocol", *s), "give tcp, udp, icmp, icmpv6 or other");
      if (std::find(out.begin(), out.end(), *p) == out.end()) out.push_back(*p);
    };
    if (n.is_array())
      elements(n, key, "a protocol or an array of them", one);
    else
      one(n, key);
  }

  void ports(const toml::node& n, const std::string& key, std::vector<PortRange>& out) {
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
        return fail(el, k, fmt::format("'{}' is not a port or a range", s), "write e.g. 53 or \"1000-2000\"");
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

  // rate/burst and bytes_rate/bytes_burst: each pair both or neither.
  void limits(const toml::table& t, const std::string& path, Rate& packets, Rate& bytes) {
    packets = pair(t, path, "rate", "burst", kMaxRatePps, kMaxBurst);
    bytes = pair(t, path, "bytes_rate", "bytes_burst", kMaxRateBytes, kMaxBurstBytes);
  }

  Rate pair(const toml::table& t, const std::string& path, const char* rk, const char* bk, uint64_t max_rate,
            uint64_t max_burst) {
    Rate r;
    const toml::node* rate = t.get(rk);
    const toml::node* burst = t.get(bk);
    const std::string zero = fmt::format(" (for no limit of this kind, leave out {} and {})", rk, bk);
    if (rate) r.rate = count(*rate, join(path, rk), 1, max_rate, zero).value_or(0);
    if (burst) r.burst = count(*burst, join(path, bk), 1, max_burst, zero).value_or(0);
    if (rate && !burst)
      fail(*rate, join(path, rk), fmt::format("given without {}", bk),
           fmt::format("add {}: how much one source may send at once", bk));
    if (burst && !rate)
      fail(*burst, join(path, bk), fmt::format("given without {}", rk), fmt::format("add {}: the rate per second", rk));
    return r;
  }

  void list(const toml::node& n, const std::string& key, lv_list_kind kind, Policy& p) {
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
        if (!c) return fail(el, ck, "missing", "write { cidr = \"203.0.113.0/24\", expires = \"2h\" }");
        if (const toml::node* x = t->get("expires")) {
          if (kind != LV_LIST_DENY)
            fail(*x, join(k, "expires"), "only deny entries expire",
                 "remove expires, or put the entry on the deny list");
          e.expires_unix_ns = expiry(*x, join(k, "expires"));
        }
      }
      if (auto v = cidr(*c, ck)) e.cidr = *v, p.lists.push_back(e);
    });
  }

  void override_(const toml::table& t, const std::string& path, Policy& p) {
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
    limits(t, path, o.packets, o.bytes);
    if (const toml::node* n = t.get("classes")) {
      elements(*n, join(path, "classes"), "an array of class names", [&](const toml::node& el, const std::string& k) {
        auto s = string(el, k);
        if (!s) return;
        if (!class_lines_.count(*s)) {
          std::string names;
          for (const ClassSpec& c : p.classes) names += fmt::format("{}{}", names.empty() ? "" : ", ", c.name);
          return fail(el, k, fmt::format("there is no class '{}'", *s), fmt::format("the classes are {}", names));
        }
        o.classes.push_back(*s);
      });
    }
    p.overrides.push_back(std::move(o));
  }

  std::string file_;
  uint64_t now_ns_;
  std::optional<Error> error_;
  unsigned prefix4_ = 32, prefix6_ = 64;                          // [defaults]
  std::map<std::string, unsigned> class_lines_, override_lines_;  // name -> line
  Inheritable defaults_;                                          // [defaults]
};

}  // namespace

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
  auto policy = Reader(name, now_unix_ns).read(root);
  if (policy) LV_TRY(validate(*policy, now_unix_ns));
  return policy;
}

Result<Policy> parse_config(const std::string& text, const std::string& name) {
  return parse_config(text, name, unix_now_ns());
}

Result<Policy> load_config(const std::string& path) {
  const char* hint = "give the path of a levee config file (see examples/levee.toml)";
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "re"), std::fclose);
  if (!f) return Error{fmt::format("{}: cannot open the config file", path), errno, hint, true};
  std::string text;
  char buf[65536];
  while (size_t n = std::fread(buf, 1, sizeof buf, f.get())) {
    text.append(buf, n);
    if (text.size() > kMaxFileBytes)
      return usage_error(fmt::format("{}: larger than {} MiB", path, kMaxFileBytes >> 20), hint);
  }
  if (std::ferror(f.get())) return Error{fmt::format("{}: cannot read the config file", path), errno, hint, true};
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
