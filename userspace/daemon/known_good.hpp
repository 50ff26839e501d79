// known_good.hpp - which sources `levee run` marks known-good (bpf/known_good.hpp): those
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
#include <vector>

#include "levee_abi.h"
#include "policy/keys.hpp"

namespace levee::daemon {

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

}  // namespace levee::daemon
