#include "export/suggest.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace levee {
namespace {

// What a source offered (passed + dropped) between two readings of its counters, by
// top's rule (counts_since): modulo 2^32, or all of `now` if the state was remade.
struct Offered {
  uint64_t packets = 0, bytes = 0;
};
Offered offered(const TopCounts& before, const TopCounts& now) {
  const TopCounts d = counts_since(before, now);
  return {uint64_t{d.passed_packets} + d.dropped_packets, uint64_t{d.passed_bytes} + d.dropped_bytes};
}

Spread spread_of(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  return {percentile(v, 0.50), percentile(v, 0.90), percentile(v, 0.99), v.empty() ? 0 : v.back()};
}

// The value suggested from a p99, with the share of `values` it covers.
Suggested suggested(double p99, double headroom, const std::vector<double>& sorted) {
  Suggested s;
  s.value = round_up_2sig(p99 * headroom);
  const auto at = std::upper_bound(sorted.begin(), sorted.end(), static_cast<double>(s.value));
  s.covers = sorted.empty() ? 1.0 : static_cast<double>(at - sorted.begin()) / static_cast<double>(sorted.size());
  return s;
}

}  // namespace

double percentile(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  const auto n = static_cast<double>(sorted.size());
  // The rank rounded up, with a little slack so that 0.9 * 10 is rank 9, not 10.
  auto rank = static_cast<size_t>(std::ceil(q * n - 1e-9));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

uint64_t round_up_2sig(double v) {
  if (!(v > 1)) return 1;  // NaN too
  const double step = std::pow(10.0, std::floor(std::log10(v)) - 1);
  // The slack keeps a value already on 2 figures (150, or 1.5e6 read back as
  // 1500000.0000001) where it is.
  const double r = std::ceil(v / step - 1e-9) * step;
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(r - 1e-6)));
}

SuggestSampler::SuggestSampler(std::vector<SuggestClass> classes)
    : classes_(std::move(classes)), index_of_id_(LV_MAX_CLASSES, -1), arrivals_(classes_.size()) {
  for (size_t i = 0; i < classes_.size(); ++i) index_of_id_[classes_[i].id % LV_MAX_CLASSES] = static_cast<int>(i);
}

void SuggestSampler::add(std::span<const lv_key> keys, std::span<const lv_state> states, double at_s) {
  const bool first = walks_ == 0;
  std::vector<uint64_t> arrived(classes_.size(), 0);
  for (size_t i = 0; i < keys.size(); ++i) {
    const lv_key& k = keys[i];
    if (k.family & LV_KEY_NETWORK || k.class_id >= LV_MAX_CLASSES) continue;
    const int cls = index_of_id_[k.class_id];
    if (cls < 0 || classes_[static_cast<size_t>(cls)].epoch != k.epoch) continue;
    auto [it, added] = sources_.try_emplace(k);
    Source& src = it->second;
    const TopCounts now = TopCounts::of(states[i]);
    if (added) {
      src.cls = static_cast<size_t>(cls);
      src.since_s = first ? at_s : last_s_;
      // Before the first walk nothing is known: its counts are the baseline. After it, a
      // new key is a new source whose every count is from this interval.
      src.last = first ? now : TopCounts{};
    }
    const bool arrived_now = added ? !first : remade(src.last, now);
    const Offered d = offered(src.last, now);
    if (arrived_now) ++arrived[src.cls];
    src.last = now;
    src.last_s = at_s;
    src.packets += d.packets;
    src.bytes += d.bytes;
    src.peak_packets = std::max(src.peak_packets, d.packets);
    src.peak_bytes = std::max(src.peak_bytes, d.bytes);
  }
  if (!first && at_s > last_s_)
    for (size_t c = 0; c < classes_.size(); ++c) {
      arrivals_[c].total += arrived[c];
      arrivals_[c].per_second.push_back(static_cast<double>(arrived[c]) / (at_s - last_s_));
    }
  if (first) first_s_ = at_s;
  last_s_ = at_s;
  ++walks_;
}

std::vector<SuggestSampler::Source> SuggestSampler::sources() const {
  std::vector<Source> out;
  out.reserve(sources_.size());
  for (const auto& [k, s] : sources_) out.push_back(s);
  return out;
}

SuggestReport suggest(const SuggestSampler& s, const SuggestOptions& o) {
  SuggestReport r;
  r.window_s = s.window_s();
  r.walks = s.walks();
  r.options = o;
  struct Values {
    std::vector<double> pps, bps, burst_packets, burst_bytes;
  };
  std::vector<Values> per_class(s.classes().size());
  for (const SuggestSampler::Source& src : s.sources()) {
    // A source that sent nothing in the window is state left from before: not traffic.
    if (!src.packets || src.last_s <= src.since_s) continue;
    const double seconds = src.last_s - src.since_s;
    Values& v = per_class[src.cls];
    v.pps.push_back(static_cast<double>(src.packets) / seconds);
    v.bps.push_back(static_cast<double>(src.bytes) / seconds);
    v.burst_packets.push_back(static_cast<double>(src.peak_packets));
    v.burst_bytes.push_back(static_cast<double>(src.peak_bytes));
  }
  for (size_t c = 0; c < s.classes().size(); ++c) {
    ClassSuggestion cs;
    cs.name = s.classes()[c].name;
    cs.admission = s.classes()[c].admission;
    Values& v = per_class[c];
    cs.sources = v.pps.size();
    cs.pps = spread_of(v.pps);
    cs.bps = spread_of(v.bps);
    cs.burst_packets = spread_of(v.burst_packets);
    cs.burst_bytes = spread_of(v.burst_bytes);
    const SuggestSampler::Arrivals& a = s.arrivals()[c];
    cs.arrivals = a.total;
    cs.arrivals_per_s = r.window_s > 0 ? static_cast<double>(a.total) / r.window_s : 0;
    std::vector<double> arrivals = a.per_second;
    std::sort(arrivals.begin(), arrivals.end());
    cs.arrivals_peak_per_s = arrivals.empty() ? 0 : arrivals.back();
    if (cs.sources >= std::max<size_t>(o.min_sources, 1)) {
      cs.rate = suggested(cs.pps.p99, o.headroom, v.pps);
      cs.burst = suggested(cs.burst_packets.p99, o.headroom, v.burst_packets);
      cs.bytes_rate = suggested(cs.bps.p99, o.headroom, v.bps);
      cs.bytes_burst = suggested(cs.burst_bytes.p99, o.headroom, v.burst_bytes);
      Suggested ns = suggested(cs.arrivals_peak_per_s, o.headroom, arrivals);
      if (ns.value < kMinNewSources) ns = suggested(kMinNewSources, 1.0, arrivals);
      cs.new_sources = ns;
      cs.new_sources_kept = cs.admission != Admission::Budget && !o.budget_new_sources;
    }
    r.classes.push_back(std::move(cs));
  }
  return r;
}

}  // namespace levee
