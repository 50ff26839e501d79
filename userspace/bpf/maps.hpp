// maps.hpp - typed reads of the datapath's counters and per-source state.
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "core/result.hpp"
#include "levee_abi.h"

namespace levee {

// Counters summed over all CPUs.
struct Counters {
  std::array<lv_counter, LV_REASON_MAX> by_reason{};
  std::array<lv_class_counters, LV_MAX_CLASSES> by_class{};
  // Monitor mode: what would have been dropped, by reason (passed as LV_R_MONITORED).
  std::array<lv_counter, LV_REASON_MAX> would{};

  lv_counter received() const;
  lv_counter passed() const;
  lv_counter dropped() const;
  lv_counter would_drop() const;
};

Result<Counters> read_counters(int percpu_fd);

// Visit every tracked source with batch lookups (thousands of entries per syscall).
// The map keeps changing underneath: entries inserted or evicted during the walk may
// be seen or not, never twice.
Status for_each_source(int state_fd, const std::function<void(const lv_key&, const lv_state&)>& fn);

// Number of tracked sources (a batch walk: ~100 ms per million entries).
Result<uint64_t> count_sources(int state_fd);

}  // namespace levee
