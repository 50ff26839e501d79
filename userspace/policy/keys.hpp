// keys.hpp - the datapath's lv_state and lv_bans keys for one address, built as the
// datapath builds them, for the controller to look an address up (show, unban) and for
// the tests to find the state a packet left.
#pragma once

#include "levee_abi.h"
#include "policy/cidr.hpp"

namespace levee {

// The datapath's keys for one address (a /32 or /128), as it builds them: IPv4
// IPv4-mapped, masked to a prefix, with the class's id and epoch. Its state in class
// `id`; its network's state there (LV_KEY_NETWORK, masked to the network prefix); its
// ban record in every class (class LV_ALL_CLASSES, masked to lv_policy.ban_mask*).
lv_key source_key(const Cidr& addr, const lv_class& c, unsigned id);
lv_key network_key(const Cidr& addr, const lv_class& c, unsigned id);
lv_key ban_all_key(const Cidr& addr, const lv_policy& p);

}  // namespace levee
