// config_values.cpp - the config reader's errors (the first one kept, unknown keys with
// a "did you mean") and its value readers: counts, prefixes, CIDRs, choices, durations,
// expiries and rate/burst pairs, each naming FILE:LINE: KEY when it refuses a value.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <sstream>

#include "core/clock.hpp"
#include "core/names.hpp"
#include "core/quote.hpp"
#include "core/units.hpp"
#include "policy/config_reader.hpp"

namespace levee::config_reader {
namespace {

constexpr const char* kCountHint = R"(write e.g. 500, "10k" or "1.5M")";
constexpr const char* kDurationHint = R"(write a duration like "500ms", "2s", "10m", "1h" or "1h30m")";

constexpr Named<toml::node_type> kTypeNames[] = {{toml::node_type::string, "a string"},
                                                 {toml::node_type::integer, "an integer"},
                                                 {toml::node_type::floating_point, "a float"},
                                                 {toml::node_type::boolean, "a boolean"},
                                                 {toml::node_type::table, "a table"},
                                                 {toml::node_type::array, "an array"},
                                                 {toml::node_type::date, "a date"},
                                                 {toml::node_type::time, "a time"},
                                                 {toml::node_type::date_time, "a date-time"}};

const char* type_name(const toml::node& n) { return name_in(kTypeNames, n.type(), "nothing"); }

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

}  // namespace

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}
std::string index(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }
unsigned line_of(const toml::node& n) { return n.source().begin.line; }

// A decimal number that is all of `s`, at most `max`.
std::optional<uint64_t> number(std::string_view s, uint64_t max) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v > max) return std::nullopt;
  return v;
}

void Reader::fail(unsigned line, const std::string& key, const std::string& what, std::string hint) {
  if (error_) return;
  const Where w{file_, line, key};
  error_ = usage_error(fmt::format("{}: {}", w.describe(), what), std::move(hint));
}

void Reader::fail(const toml::node& n, const std::string& key, const std::string& what, std::string hint) {
  fail(line_of(n), key, what, std::move(hint));
}

void Reader::wrong_type(const toml::node& n, const std::string& key, const std::string& want, std::string hint) {
  fail(n, key, fmt::format("expected {}, got {}", want, type_name(n)), std::move(hint));
}

Where Reader::where(const toml::node& n, const std::string& key) const { return {file_, line_of(n), key}; }

void Reader::known(const toml::table& t, const std::string& path, Keys keys) {
  known(t, path, std::vector<std::string_view>(keys));
}

void Reader::known(const toml::table& t, const std::string& path, const std::vector<std::string_view>& keys) {
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

const toml::table* Reader::table(const toml::table& parent, const char* key) {
  const toml::node* n = parent.get(key);
  if (n && !n->is_table()) wrong_type(*n, key, fmt::format("a table [{}]", key));
  return n ? n->as_table() : nullptr;
}

std::vector<std::pair<const toml::table*, std::string>> Reader::tables(const toml::node& n, const std::string& key,
                                                                       size_t max, const char* max_hint) {
  std::vector<std::pair<const toml::table*, std::string>> out;
  const toml::array* a = n.as_array();
  if (!a) wrong_type(n, key, fmt::format("[[{}]] tables", key), fmt::format("write [[{}]], with double brackets", key));
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

std::optional<std::string> Reader::string(const toml::node& n, const std::string& key) {
  if (const auto* s = n.as_string()) return s->get();
  return wrong_type(n, key, "a string"), std::nullopt;
}

std::optional<uint64_t> Reader::count(const toml::node& n, const std::string& key, uint64_t lo, uint64_t hi,
                                      const std::string& zero_hint) {
  std::optional<uint64_t> v;
  if (const auto* i = n.as_integer()) {
    if (i->get() < 0) return fail(n, key, fmt::format("{} is negative", i->get()), kCountHint), std::nullopt;
    v = static_cast<uint64_t>(i->get());
  } else if (const auto* s = n.as_string()) {
    v = parse_count(s->get());
    if (!v) return fail(n, key, fmt::format("{} is not a count", quote_value(s->get())), kCountHint), std::nullopt;
  } else {
    return wrong_type(n, key, "a count", kCountHint), std::nullopt;
  }
  if (*v < lo || *v > hi)
    return fail(n, key, fmt::format("{} is out of range", *v),
                fmt::format("give {} to {}{}", lo, format_count(hi), *v == 0 ? zero_hint : "")),
           std::nullopt;
  return v;
}

std::optional<unsigned> Reader::prefix(const toml::table& t, const std::string& path, const char* key, unsigned max) {
  const toml::node* n = t.get(key);
  if (!n) return std::nullopt;
  const auto* i = n->as_integer();
  if (!i) return wrong_type(*n, join(path, key), "an integer"), std::nullopt;
  if (i->get() < 1 || i->get() > max)
    return fail(*n, join(path, key), fmt::format("/{} is out of range", i->get()), fmt::format("give 1 to {}", max)),
           std::nullopt;
  return static_cast<unsigned>(i->get());
}

std::optional<Cidr> Reader::cidr(const toml::node& n, const std::string& key) {
  const auto* s = n.as_string();
  if (!s) return wrong_type(n, key, "a string"), std::nullopt;
  auto c = Cidr::parse(s->get());  // parsed where toml++ holds it: no copy per entry of a long list
  if (!c) return fail(n, key, c.error().what, c.error().hint), std::nullopt;
  return *c;
}

std::optional<std::string> Reader::choice(const toml::node& n, const std::string& key,
                                          std::initializer_list<std::string_view> options) {
  auto v = string(n, key);
  std::string list;
  for (size_t i = 0; i < options.size(); ++i)
    list += fmt::format("{}\"{}\"", i == 0 ? "" : i + 1 == options.size() ? " or " : ", ", options.begin()[i]);
  const std::string name = key.substr(key.rfind('.') + 1);  // "ban_scope" of "class[0].ban_scope"
  if (v && std::find(options.begin(), options.end(), *v) == options.end())
    return fail(n, key, fmt::format("{} is not a valid {}", quote_value(*v), name), fmt::format("give {}", list)),
           std::nullopt;
  if (!v) return std::nullopt;
  return v;
}

std::optional<uint64_t> Reader::duration(const toml::node& n, const std::string& key, bool zero_ok) {
  const auto* str = n.as_string();
  if (!str) return wrong_type(n, key, "a duration string", kDurationHint), std::nullopt;
  auto ns = parse_duration_ns(str->get());
  if (!ns)
    return fail(n, key, fmt::format("{} is not a duration", quote_value(str->get())), kDurationHint), std::nullopt;
  if (*ns == 0 && !zero_ok)
    return fail(n, key, fmt::format("{} is no time at all", quote_value(str->get())), "give a positive duration"),
           std::nullopt;
  return ns;
}

uint64_t Reader::expiry(const toml::node& n, const std::string& key) {
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

void Reader::limits(const toml::table& t, const std::string& path, Rate& packets, Rate& bytes, const char* burst_is) {
  packets = pair(t, path, "rate", "burst", kMaxRatePps, kMaxBurst, burst_is);
  bytes = pair(t, path, "bytes_rate", "bytes_burst", kMaxRateBytes, kMaxBurstBytes, burst_is);
}

Rate Reader::pair(const toml::table& t, const std::string& path, const char* rk, const char* bk, uint64_t max_rate,
                  uint64_t max_burst, const char* burst_is) {
  Rate r;
  const toml::node* rate = t.get(rk);
  const toml::node* burst = t.get(bk);
  const std::string zero = fmt::format(" (for no limit of this kind, leave out {} and {})", rk, bk);
  if (rate) r.rate = count(*rate, join(path, rk), 1, max_rate, zero).value_or(0);
  if (burst) r.burst = count(*burst, join(path, bk), 1, max_burst, zero).value_or(0);
  if (rate && !burst)
    fail(*rate, join(path, rk), fmt::format("given without {}", bk), fmt::format("add {}: {}", bk, burst_is));
  if (burst && !rate)
    fail(*burst, join(path, bk), fmt::format("given without {}", rk), fmt::format("add {}: the rate per second", rk));
  return r;
}

}  // namespace levee::config_reader
