// releases.hpp - the datapath's autopilot released by the controller when the datapath
// has not, for want of a packet.
//
// The datapath releases a class (struct lv_guard) at its first normal arrival once the
// class is calm, and an escalated network (struct lv_watch) at its first sampled packet
// once calm. After a flood that simply stops, neither may come for a long time: the
// class stays marked engaged (nothing is refused: its threshold has refilled) and the
// network marked escalated (its limit no longer enforced: lv_watch_escalated() judges
// calm). `levee run` releases them on time instead, so that every engagement and
// escalation has its release, as an event, within a second of `release`.
//
// A class is released with a compare-and-swap on the mapped lv_shared, so only one of
// the datapath and the controller says so. A network's state lives in a hash map: the
// controller writes it back with escalated_ns 0, and the datapath's own release, should
// it come in the same instant, may say so a second time.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/result.hpp"
#include "datapath/maps.hpp"
#include "datapath/pins.hpp"
#include "levee_abi.h"

namespace levee {

struct Released {
  uint8_t type = 0;  // LV_EV_RELEASED (a class) or LV_EV_DEESCALATED (a network)
  unsigned class_id = 0;
  lv_key key{};           // the network (LV_EV_DEESCALATED)
  uint64_t since_ns = 0;  // when it engaged or was escalated (CLOCK_MONOTONIC)
};

class AutopilotReleases {
 public:
  // A network the datapath escalated (its event), or a walk found escalated: its key in
  // lv_state (LV_KEY_WATCH).
  void track(const lv_key& watch_key);
  size_t tracked() const { return networks_.size(); }
  // Release, at `now`, every class of policy `p` that is calm but still marked engaged,
  // and every tracked network that is calm but still marked escalated. A network no
  // longer escalated, or no longer in the map, is forgotten.
  Result<std::vector<Released>> poll(const Pinned& pins, SharedMap& shared, const lv_policy& p, uint64_t now);

 private:
  struct Less {
    bool operator()(const lv_key& a, const lv_key& b) const;
  };
  std::map<lv_key, bool, Less> networks_;
};

}  // namespace levee
