// session.hpp - an attached interface opened for a change (internal to the datapath layer).
//
// Every command that changes an attached interface (set, reload, unban, a list edit,
// prune) opens it the same way: preflight, the interface's lock (one controller at a
// time), its pins (refused when the interface they filtered is gone: refuse_orphaned),
// the policy mapped after the ABI check, and lv_shared mapped. The lock is held until
// the session goes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/lock.hpp"
#include "core/result.hpp"
#include "datapath/maps.hpp"
#include "datapath/pins.hpp"
#include "datapath/policy_map.hpp"

namespace levee {

struct Session {
  IfaceLock lock;
  Pinned pins;
  PolicyMap policy;
  SharedMap shared;

  // `action` names the command in a preflight error ("set", "change the lists of").
  static Result<Session> open(const std::string& iface, std::string_view action);

  // lv_state's size as the kernel made it (the default when it cannot be read).
  uint32_t max_sources() const;
};

}  // namespace levee
