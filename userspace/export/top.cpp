#include "export/top.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "core/names.hpp"
#include "core/units.hpp"
#include "export/render_show.hpp"
#include "export/render_units.hpp"
#include "policy/keys.hpp"

namespace levee {
namespace {

constexpr Named<TopBy> kTopBy[] = {{TopBy::Drops, "drops"}, {TopBy::Packets, "packets"}, {TopBy::Bytes, "bytes"}};

}  // namespace

std::optional<TopBy> parse_top_by(const std::string& s) { return value_in(kTopBy, s); }
const char* top_by_name(TopBy by) { return name_in(kTopBy, by, "?"); }

TopCounts TopCounts::of(const lv_state& s) {
  return {LV_COUNT_PACKETS(s.passed), LV_COUNT_BYTES(s.passed), LV_COUNT_PACKETS(s.dropped), LV_COUNT_BYTES(s.dropped)};
}

uint64_t top_score(const TopCounts& c, TopBy by) {
  switch (by) {
    case TopBy::Drops:
      return c.dropped_packets;
    case TopBy::Packets:
      return uint64_t{c.passed_packets} + c.dropped_packets;
    case TopBy::Bytes:
      return uint64_t{c.passed_bytes} + c.dropped_bytes;
  }
  return 0;
}

bool remade(const TopCounts& a, const TopCounts& b) {
  return static_cast<uint32_t>(b.passed_packets - a.passed_packets) >= 0x8000'0000u ||
         static_cast<uint32_t>(b.dropped_packets - a.dropped_packets) >= 0x8000'0000u;
}

TopCounts counts_since(const TopCounts& a, const TopCounts& b) {
  if (remade(a, b)) return b;
  // Unsigned 32-bit arithmetic: a byte count that wrapped comes out right.
  return {b.passed_packets - a.passed_packets, b.passed_bytes - a.passed_bytes, b.dropped_packets - a.dropped_packets,
          b.dropped_bytes - a.dropped_bytes};
}

size_t KeyedCounts::slot_of(const lv_key& k) const { return static_cast<size_t>(key_hash(k) >> 32) & mask_; }

void KeyedCounts::assign(std::span<const lv_key> keys, std::span<const lv_state> states) {
  size_t cap = 16;
  while (cap < keys.size() + keys.size() / 2) cap <<= 1;  // at most 2/3 full
  slots_.assign(cap, Slot{});
  mask_ = cap - 1;
  size_ = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    size_t at = slot_of(keys[i]);
    while (slots_[at].key.family && !same_key(slots_[at].key, keys[i])) at = (at + 1) & mask_;
    if (!slots_[at].key.family) ++size_;
    slots_[at] = Slot{keys[i], TopCounts::of(states[i])};
  }
}

const TopCounts* KeyedCounts::find(const lv_key& k) const {
  if (slots_.empty()) return nullptr;
  for (size_t at = slot_of(k);; at = (at + 1) & mask_) {
    const Slot& s = slots_[at];
    if (!s.key.family) return nullptr;
    if (same_key(s.key, k)) return &s.counts;
  }
}

std::vector<size_t> top_indices(std::span<const uint64_t> scores, size_t n) {
  std::vector<size_t> idx(scores.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  auto higher = [&](size_t a, size_t b) { return scores[a] != scores[b] ? scores[a] > scores[b] : a < b; };
  n = std::min(n, idx.size());
  if (n < idx.size()) std::nth_element(idx.begin(), idx.begin() + static_cast<ptrdiff_t>(n), idx.end(), higher);
  idx.resize(n);
  std::sort(idx.begin(), idx.end(), higher);
  return idx;
}

void top_limiter(TopRow& row, const lv_state& s, const lv_limit& pkt, const lv_limit& bytes, uint64_t now) {
  const ShowLimiter l = limiter_view(s, pkt, bytes, now);
  row.tokens = l.tokens;
  row.byte_tokens = l.byte_tokens;
  row.wait_ns = l.wait_ns;
}

namespace {

using nlohmann::json;

double per_second(uint32_t n, double seconds) { return seconds > 0 ? n / seconds : 0.0; }

}  // namespace

json top_json(const TopView& v) {
  json rows = json::array();
  for (const TopRow& r : v.rows) {
    const bool v4 = lv_key_family(r.key.family) == LV_AF_INET;
    json rates = nullptr;
    if (r.delta && v.interval) {
      const double s = *v.interval;
      rates = {{"passed_pps", per_second(r.delta->passed_packets, s)},
               {"passed_bps", per_second(r.delta->passed_bytes, s)},
               {"dropped_pps", per_second(r.delta->dropped_packets, s)},
               {"dropped_bps", per_second(r.delta->dropped_bytes, s)}};
    }
    json row = {{"address", r.address},
                {"family", v4 ? 4 : 6},
                {"prefix", r.prefix},
                {"class", r.class_name},
                {"class_id", r.key.class_id},
                {"kind", r.network ? "network" : "source"},
                {"override", r.override_name.empty() ? json(nullptr) : json(r.override_name)},
                {"tokens", json_or_null(r.tokens)},
                {"byte_tokens", json_or_null(r.byte_tokens)},
                {"wait_ns", r.wait_ns},
                {"banned", r.banned},
                {"ban_remaining_ms", r.ban_remaining_ns / 1'000'000},
                {"rates", rates}};
    row.update(
        counts_json(r.counts.passed_packets, r.counts.passed_bytes, r.counts.dropped_packets, r.counts.dropped_bytes));
    rows.push_back(std::move(row));
  }
  return {{"interface", v.iface},
          {"by", top_by_name(v.by)},
          {"sources", v.sources},
          {"networks", v.with_networks ? json(v.networks) : json(nullptr)},
          {"counter_bits", 32},
          {"walk_ms", static_cast<uint64_t>(std::llround(v.walk_seconds * 1000))},
          {"interval_s", json_or_null(v.interval)},
          {"rows", rows}};
}

std::string top_text(const TopView& v) {
  const bool rates = v.interval.has_value();
  std::string what = fmt::format("{} source{}", group_digits(v.sources), v.sources == 1 ? "" : "s");
  if (v.with_networks) what += fmt::format(" and {} network{}", group_digits(v.networks), v.networks == 1 ? "" : "s");
  std::string out =
      fmt::format("{}: top {} of {} by {}{} (walk {:.0f} ms)\n", v.iface, v.rows.size(), what, top_by_name(v.by),
                  rates ? fmt::format(" per second over {:.1f} s", *v.interval) : "", v.walk_seconds * 1000);
  if (v.rows.empty()) return out;
  size_t aw = 6, cw = 5;
  for (const TopRow& r : v.rows) {
    aw = std::max(aw, r.address.size() + (r.network ? 4 : 0));
    cw = std::max(cw, r.class_name.size());
  }
  if (rates)
    out += fmt::format("  {:<{}}  {:<{}}  {:>10}  {:>10}  {:>10}  {:>10}  {:>12}  {:>10}  {}\n", "SOURCE", aw, "CLASS",
                       cw, "PASSED/s", "PASSED B/s", "DROPPED/s", "DROPPED B/s", "TOKENS", "WAIT", "BANNED");
  else
    out += fmt::format("  {:<{}}  {:<{}}  {:>13}  {:>15}  {:>13}  {:>15}  {:>12}  {:>10}  {}\n", "SOURCE", aw, "CLASS",
                       cw, "PASSED", "PASSED BYTES", "DROPPED", "DROPPED BYTES", "TOKENS", "WAIT", "BANNED");
  for (const TopRow& r : v.rows) {
    const std::string addr = r.network ? r.address + " net" : r.address;
    const std::string tokens = r.tokens        ? group_digits(*r.tokens)
                               : r.byte_tokens ? group_digits(*r.byte_tokens) + " B"
                                               : "-";
    const std::string wait = r.wait_ns ? format_ns(r.wait_ns) : "now";
    const std::string banned = r.banned ? "for " + format_remaining(r.ban_remaining_ns) : "";
    if (rates) {
      const TopCounts d = r.delta.value_or(TopCounts{});
      const double s = *v.interval;
      out += fmt::format("  {:<{}}  {:<{}}  {:>10}  {:>10}  {:>10}  {:>10}  {:>12}  {:>10}  {}\n", addr, aw,
                         r.class_name, cw, format_si(per_second(d.passed_packets, s)),
                         format_si(per_second(d.passed_bytes, s)), format_si(per_second(d.dropped_packets, s)),
                         format_si(per_second(d.dropped_bytes, s)), tokens, wait, banned);
    } else {
      out += fmt::format("  {:<{}}  {:<{}}  {:>13}  {:>15}  {:>13}  {:>15}  {:>12}  {:>10}  {}\n", addr, aw,
                         r.class_name, cw, group_digits(r.counts.passed_packets), group_digits(r.counts.passed_bytes),
                         group_digits(r.counts.dropped_packets), group_digits(r.counts.dropped_bytes), tokens, wait,
                         banned);
    }
  }
  out += per_source_counters_note();
  return out;
}

}  // namespace levee
