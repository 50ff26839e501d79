// class_change.hpp - an edit of one class's limits, as `levee set` gives it, and the
// class it leaves: pure policy, before validation and before any map (datapath/live.cpp
// publishes it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/result.hpp"
#include "policy/policy.hpp"

namespace levee {

// `levee set`'s change: one class's limits and/or the interface's monitor switch. The
// class is named, or the only one. Unset fields keep their value. new_sources 0,
// bytes_rate 0 and ban 0 turn those off (bytes_rate 0: the byte limit's rate and burst
// both; the command line says "off").
struct LimitChange {
  std::optional<std::string> class_name;
  std::optional<uint64_t> rate, burst, bytes_rate, bytes_burst;
  std::optional<unsigned> prefix4, prefix6;
  std::optional<uint64_t> new_sources, new_sources_burst;  // new_sources: a budget (Admission::Budget)
  std::optional<Admission> admission;                      // Auto or Off (a budget: new_sources)
  std::optional<bool> escalate;
  std::optional<uint64_t> ban_ns, ban_max_ns, forget_ns;
  std::optional<bool> monitor;  // the interface's switch (LV_POL_MONITOR)
  bool class_changes() const {
    return rate || burst || bytes_rate || bytes_burst || prefix4 || prefix6 || new_sources || new_sources_burst ||
           admission || escalate || ban_ns || ban_max_ns || forget_ns;
  }
  bool empty() const { return !class_changes() && !monitor; }
};

// The class as `levee set` leaves it (before validation): what set_limits publishes.
Result<ClassSpec> changed_class(const ClassSpec& before, const LimitChange& change);

}  // namespace levee
