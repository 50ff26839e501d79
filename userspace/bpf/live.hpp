// live.hpp - the changes to an attached interface that keep its state: `levee set`
// (one class's limits, the monitor switch), `levee reload` (the whole config file) and
// `levee unban` (one address).
//
// Every change takes the interface's lock, builds the complete next policy and lists,
// and publishes them in one flip (PolicyMap::publish): it applies whole or not at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "policy/policy.hpp"

namespace levee {

// `levee set`: change one class's limits live, and/or the interface's monitor switch,
// in one publish; per-source state is kept. The class is named, or the only one. Unset
// fields keep their value. new_sources 0, bytes_rate 0 and ban 0 turn those off
// (bytes_rate 0: the byte limit's rate and burst both; the command line says "off").
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
struct SetResult {
  std::optional<ClassSpec> changed;     // the class as it is now, when one changed
  bool monitor = false;                 // the interface's switch, now
  std::vector<std::string> monitoring;  // classes that monitor now (their own mode or the switch)
  size_t classes = 0;
};
Result<SetResult> set_limits(const std::string& iface, const LimitChange& change);
// The class as `levee set` leaves it (before validation): what set_limits publishes.
Result<ClassSpec> changed_class(const ClassSpec& before, const LimitChange& change);

// `levee unban`: lift the bans of one address, in every class (or one) and the
// every-class record, and let its sources conform again at once.
struct LiftedBan {
  std::string scope;    // a class's name, or "" for the every-class record
  bool banned = false;  // it was banning (else only its offence history is forgotten)
  uint64_t remaining_ns = 0;
  uint32_t offences = 0;
};
struct UnbanResult {
  std::vector<LiftedBan> lifted;
  size_t states_released = 0;  // sources whose state was held back by a ban
};
Result<UnbanResult> unban(const std::string& iface, const std::string& address,
                          const std::optional<std::string>& class_name);

// `levee reload`: replace classes, overrides and the config's list entries in one flip.
// Entries added from the command line or imported stay (an override entry whose
// override is gone is dropped and reported).
struct ReloadResult {
  uint64_t generation = 0;
  size_t classes = 0, list_entries = 0, kept_runtime = 0;
  std::vector<std::string> dropped;  // runtime entries that no longer apply, and why
  std::vector<std::string> notes;    // settings a reload cannot change
};
Result<ReloadResult> reload(const std::string& iface, const Policy& p);

}  // namespace levee
