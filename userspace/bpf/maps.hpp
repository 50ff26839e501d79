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

// Number of entries in lv_state (a batch walk: ~100 ms per million entries).
Result<uint64_t> count_sources(int state_fd);

// lv_state's entries: sources, and networks (the state of a class's network limit,
// LV_KEY_NETWORK in the key's family). Both take room in the map.
struct StateCounts {
  uint64_t sources = 0;
  uint64_t networks = 0;
  uint64_t total() const { return sources + networks; }
};
Result<StateCounts> count_state(int state_fd);

// Visit every ban record (lv_bans) with batch lookups, as for_each_source.
Status for_each_ban(int bans_fd, const std::function<void(const lv_key&, const lv_ban&)>& fn);

// lv_shared, mapped: the per-class budgets every CPU shares and the interface-wide
// source count (entry LV_MAX_CLASSES). The datapath updates them with compare-and-swap
// and atomic adds; the controller writes whole words with atomic stores.
class SharedMap {
 public:
  static Result<SharedMap> map(int shared_fd);
  SharedMap(SharedMap&& o) noexcept;
  SharedMap& operator=(SharedMap&&) = delete;
  ~SharedMap();

  // A class id given to a new class: its budgets start full, its counts at zero.
  void reset_class(unsigned id);
  // The count LV_POL_REFUSE_FULL compares with lv_policy.full_at.
  void set_sources(uint64_t n);
  uint64_t sources() const;
  // New sources the class admitted (LV_CLASS_ADMIT), since the id was given to it.
  uint64_t admitted(unsigned id) const;

 private:
  SharedMap(lv_shared* p, size_t len) : p_(p), len_(len) {}
  lv_shared* p_;
  size_t len_;
};

}  // namespace levee
