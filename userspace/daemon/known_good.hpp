// known_good.hpp - which sources `levee run` marks known-good (datapath/known_good.hpp): those
// that behaved before an attack, remembered beyond the LRU so that a flood of new
// sources cannot lock them out once their state is evicted.
//
// "Behaved" is judged on the maintenance walks of lv_state (every --prune-every). A
// source behaved when, between its first sight and a walk at least known_good_after
// later:
//   - it kept its state as a source of a class with the autopilot (not on probation);
//   - it passed packets (its passed count moved) and had none dropped (its dropped
//     count did not move: over its limit, banned, a network's limit all reset the
//     clock, to that walk);
//   - its class was calm throughout (no abnormal arrival since its first sight): a
//     source that arrived in a flood proves nothing, however well it behaves after.
// Such a source is marked at every walk while it keeps behaving, so its mark outlives
// the filter's ageing (known_good_for) as long as it comes back. Nothing here needs
// root or the kernel: the walk hands it what it read.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "levee_abi.h"
#include "policy/keys.hpp"

namespace levee::daemon {

// The known-good filter ages every known_good_for, and earlier once the half packets read
// would let more than kGoodMaxFalsePositive of the sources never marked through (its
// estimate: datapath/filters.hpp, good_fill()), but not within kGoodEarliestAgeing of the last
// ageing: a mark then lasts at least that long whatever fills the filter, and a flood of
// proven sources cannot make levee run clear it at every walk. At 1 % a half holds some
// 600,000 random sources (19 % of its bits set; filters_test.cpp), where 4M would let 44 %
// of unknown sources through.
inline constexpr double kGoodMaxFalsePositive = 0.01;
inline constexpr uint64_t kGoodEarliestAgeingNs = 60'000'000'000;

// Whether the filter ages at `now_ns`: Scheduled once `next_ns` (the last ageing plus
// known_good_for) is reached, Early when its half packets read has more false positives
// than kGoodMaxFalsePositive and the last ageing (`last_ns`) is kGoodEarliestAgeingNs
// ago. Any one clock, in ns.
enum class Ageing { None, Scheduled, Early };
Ageing ageing_due(double false_positive, uint64_t now_ns, uint64_t last_ns, uint64_t next_ns);

class GoodJudge {
 public:
  // What the judge needs of each class (by id) at the walk.
  struct ClassNow {
    bool autopilot = false;  // LV_CLASS_AUTO_ADMIT
    bool calm = false;       // no abnormal arrival for its release time
    uint64_t last_over_ns = 0;
  };
  using Classes = std::array<ClassNow, LV_MAX_CLASSES>;

  explicit GoodJudge(uint64_t after_ns) : after_ns_(after_ns) {}
  void set_after(uint64_t after_ns) { after_ns_ = after_ns; }

  // A walk at `now` (CLOCK_MONOTONIC): begin, every batch of entries, end. The keys to
  // mark known-good are appended to `marks`.
  void begin(uint64_t now, const Classes& classes);
  void batch(std::span<const lv_key> keys, std::span<const lv_state> states, std::vector<lv_key>& marks);
  void end();  // sources not seen by this walk are forgotten
  size_t watched() const { return seen_.size(); }

 private:
  struct Seen {
    uint64_t first_ns;  // when it began to behave (first sight, or its last drop)
    uint32_t passed;    // its counts then (packets, modulo 2^32)
    uint32_t dropped;
    uint64_t walk;  // the last walk that saw it
  };
  uint64_t after_ns_;
  uint64_t now_ = 0, walk_ = 0;
  Classes classes_{};
  std::unordered_map<lv_key, Seen, KeyHash, KeyEq> seen_;
};

// levee run's own marks, bounded per network as the datapath bounds its proven sources':
// the network is the policy's answer prefix (lv_answer.mask4, mask6), the bound
// lv_answer.marks_per_network, the rule lv_syn_mark_take() (bpf/shared/syn_cells.h). Counted in
// a table of its own (the datapath's lv_syn is not pinned), which starts over when the
// filter ages (lv_control.good_epoch moves). A source the walks mark again and again
// while it behaves counts once per ageing.
class NetworkMarks {
 public:
  // May `k` be marked now, in ageing `epoch`? Counts it if it is new to the ageing.
  bool take(const lv_key& k, const lv_answer& a, uint32_t epoch);
  uint64_t capped() const { return capped_; }  // marks refused, all time
  size_t networks() const { return cells_.size(); }

 private:
  uint32_t epoch_ = 0;
  std::unordered_map<lv_key, uint64_t, KeyHash, KeyEq> cells_;  // by network: lv_syn_mark_take()'s cell
  std::unordered_set<lv_key, KeyHash, KeyEq> counted_;          // sources counted in this ageing
  uint64_t capped_ = 0;
};

}  // namespace levee::daemon
