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
#include "policy/class_change.hpp"
#include "policy/policy.hpp"

namespace levee {

// `levee set`: change one class's limits live (LimitChange, policy/class_change.hpp),
// and/or the interface's monitor switch, in one publish; per-source state is kept.
struct SetResult {
  std::optional<ClassSpec> changed;     // the class as it is now, when one changed
  bool monitor = false;                 // the interface's switch, now
  std::vector<std::string> monitoring;  // classes that monitor now (their own mode or the switch)
  size_t classes = 0;
};
Result<SetResult> set_limits(const std::string& iface, const LimitChange& change);

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
