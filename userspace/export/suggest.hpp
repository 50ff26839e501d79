// suggest.hpp - `levee suggest`: limits learnt from the traffic levee observed.
//
// The sampling (walks of lv_state an interval apart) is in cli/suggest.cpp; this is the
// arithmetic, without the kernel: each source's offered packets and bytes between walks
// (32-bit counters, wrapping), its rate over the window and its busiest interval, the
// sources new to each class, and per class the spread of those over its sources and
// the limits that would let nearly all of them through with some headroom.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "export/top.hpp"
#include "levee_abi.h"
#include "policy/keys.hpp"
#include "policy/policy.hpp"

namespace levee {

inline constexpr double kDefaultHeadroom = 1.5;
inline constexpr size_t kDefaultMinSources = 10;  // fewer sources in a class: no suggestion
// The least new_sources suggested: a class that saw no new source in the window still
// gets clients it has not seen yet (a restart, a new office).
inline constexpr uint64_t kMinNewSources = 10;

// A class of the active policy, as its sources' keys name it, and how it admits new
// sources (a number for new_sources is a budget that replaces the autopilot).
struct SuggestClass {
  std::string name;
  uint8_t id = 0;
  uint8_t epoch = 0;
  Admission admission = Admission::Auto;
};

// The nearest-rank percentile (q in (0, 1]) of sorted values: the least value that at
// least q of them do not exceed. 0 for no values.
double percentile(std::span<const double> sorted, double q);

// Up to 2 significant figures, rounded up (a suggestion never falls under what it is
// computed from), at least 1: 151 -> 160, 150 -> 150, 7.2 -> 8, 0 -> 1.
uint64_t round_up_2sig(double v);

// Walks of lv_state, in order, each taken about an interval after the one before.
// Network keys and keys of classes not given (removed, or another epoch) are skipped.
class SuggestSampler {
 public:
  explicit SuggestSampler(std::vector<SuggestClass> classes);

  // One walk, begun `at_s` seconds after any fixed origin (later than the last walk's).
  void add(std::span<const lv_key> keys, std::span<const lv_state> states, double at_s);

  struct Source {
    size_t cls = 0;        // index into classes()
    TopCounts last;        // its counters at the last walk it was in
    double since_s = 0;    // what the totals count from: the first walk, or the walk before it appeared
    double last_s = 0;     // the last walk it was in
    uint64_t packets = 0;  // offered (passed + dropped) since since_s
    uint64_t bytes = 0;
    uint64_t peak_packets = 0;  // the most in one interval
    uint64_t peak_bytes = 0;
  };
  struct Arrivals {
    uint64_t total = 0;
    std::vector<double> per_second;  // each interval's arrivals / its length
  };

  const std::vector<SuggestClass>& classes() const { return classes_; }
  const std::vector<Arrivals>& arrivals() const { return arrivals_; }
  // Every source seen, in no order.
  std::vector<Source> sources() const;
  unsigned walks() const { return walks_; }
  double window_s() const { return walks_ ? last_s_ - first_s_ : 0; }

 private:
  std::vector<SuggestClass> classes_;
  std::vector<int> index_of_id_;  // class id -> index into classes_, -1 if not sampled
  std::vector<Arrivals> arrivals_;
  std::unordered_map<lv_key, Source, KeyHash, KeyEq> sources_;
  unsigned walks_ = 0;
  double first_s_ = 0, last_s_ = 0;
};

// Per-source values of a class: the spread.
struct Spread {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// A suggested value, and the share of the class's sources (for new_sources: of the
// intervals) whose observed value it does not fall under.
struct Suggested {
  uint64_t value = 0;
  double covers = 0;  // 0..1
};

struct ClassSuggestion {
  std::string name;
  size_t sources = 0;                 // sources that sent anything in the window
  Spread pps, bps;                    // offered packets and bytes per second, per source over the time it was seen
  Spread burst_packets, burst_bytes;  // per source, the most in one interval
  uint64_t arrivals = 0;              // sources new to the class during the window
  double arrivals_per_s = 0, arrivals_peak_per_s = 0;
  Admission admission = Admission::Auto;  // the class's, in the active policy
  // Set when sources >= min_sources. new_sources is the budget the arrivals call for.
  std::optional<Suggested> rate, burst, bytes_rate, bytes_burst, new_sources;
  // The class keeps its admission (the autopilot, or "off"): new_sources is only what a
  // budget would be, not a suggestion to set, since a budget would turn the autopilot off.
  bool new_sources_kept = false;
};

struct SuggestOptions {
  double headroom = kDefaultHeadroom;
  size_t min_sources = kDefaultMinSources;
  // Suggest new_sources as a budget also where the class has none (its autopilot, or
  // "off"), replacing it: --new-sources-budget.
  bool budget_new_sources = false;
};

struct SuggestReport {
  std::string iface;
  double window_s = 0;    // first walk to last
  double interval_s = 0;  // asked for
  unsigned walks = 0;
  SuggestOptions options;
  std::vector<ClassSuggestion> classes;  // in the order the sampler was given them
};

// The statistics and suggestions of what the sampler saw: rate = p99 pps x headroom,
// burst = p99 of the busiest interval's packets x headroom, bytes_rate and bytes_burst
// likewise from bytes, new_sources = the peak arrivals per second x headroom (at least
// kMinNewSources); each rounded up to 2 significant figures. new_sources is kept out
// (new_sources_kept) of a class without a budget unless o.budget_new_sources.
SuggestReport suggest(const SuggestSampler& s, const SuggestOptions& o);

}  // namespace levee
