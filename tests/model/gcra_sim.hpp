// gcra_sim.hpp - the datapath's per-source step on an injected clock, for the unit tests.
//
// Mirrors bpf/levee.bpf.c on one CPU: the first packet of a source creates its state
// already passed (lv_new_source), every later one passes iff it conforms and then moves
// the state with lv_gcra_after_pass (lv_limit_source -> lv_gcra_take). Only the limiter.h
// functions decide; this file adds bookkeeping.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "limiter.h"
#include "policy/limits.hpp"

namespace levee::test {

// Any tick works for the limiter arithmetic; the flag it decides is not used here.
inline constexpr uint64_t kAnyTickNs = 4'000'000;

inline lv_limit make_limit(uint64_t rate, uint64_t burst) {
  return compile_class(Limits{rate, burst, 32, 64}, kAnyTickNs).pkt;
}

struct Source {
  std::optional<uint64_t> ready;  // absent until the first packet, like the LRU entry

  bool offer(uint64_t now, const lv_limit& l) {
    if (!ready) {
      ready = lv_gcra_first(now, &l);
      return true;
    }
    if (!lv_gcra_conforms(*ready, now)) return false;
    ready = lv_gcra_after_pass(*ready, now, &l);
    return true;
  }

  // Offers packets at one instant until one is refused: how many passed.
  uint64_t burst_at(uint64_t now, const lv_limit& l) {
    uint64_t passed = 0;
    while (offer(now, l)) ++passed;
    return passed;
  }
};

// The limiter's promise: over any window [a, a + t] at most burst + floor(t / T) passes.
// `times` are the clock values the passes were decided on, in any order. Returns an
// empty string if it holds, else a description of the first window that breaks it.
inline std::string check_window_bound(std::vector<uint64_t> times, const lv_limit& l) {
  std::sort(times.begin(), times.end());
  const uint64_t T = l.cost;
  const uint64_t burst = l.tau_ns / T + 1;
  for (size_t i = 0; i < times.size(); ++i) {
    for (size_t j = i + burst; j < times.size(); ++j) {
      uint64_t passes = j - i + 1;
      uint64_t allowed = burst + (times[j] - times[i]) / T;
      if (passes > allowed)
        return "passes " + std::to_string(passes) + " in [" + std::to_string(times[i]) + ", " +
               std::to_string(times[j]) + "] > allowed " + std::to_string(allowed);
    }
  }
  return {};
}

}  // namespace levee::test
