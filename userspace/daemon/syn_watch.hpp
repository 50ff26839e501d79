// syn_watch.hpp - levee run keeps SYN authentication's proxy true to the host it runs on.
// Once a second, on a filter with a class with syn_auth:
//
//   - net.ipv4.tcp_timestamps, tcp_sack, tcp_window_scaling (of its network namespace,
//     the interface's and the listener's): lv_control.tcp_off follows them, so that the
//     SYN-ACKs never offer an option the kernel would refuse to hand off;
//   - levee's tc filter at the place lv_control records (someone ran `tc filter del`, or
//     removed the clsact qdisc): while it is missing the SYN-ACKs are reset mode's
//     (lv_control.handoff 0: a proxied ACK nobody hands off would be reset), and the
//     pinned tc program is put back at a free place (handoff.hpp), recorded there;
//   - net.ipv4.tcp_syncookies: while it is 0 the kfunc refuses every hand-off, so the
//     SYN-ACKs are reset mode's until it is back.
//
// Each change is said once (log) and is an event: tcp_options (what the SYN-ACKs leave
// out now), syn_proxy (proxying or not, and why). A tc filter put back is counted
// (levee_filter_recoveries_total{action="tc_filter"}).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "daemon/health.hpp"
#include "datapath/events.hpp"
#include "datapath/pins.hpp"
#include "datapath/policy_map.hpp"

namespace levee::daemon {

class SynWatch {
 public:
  SynWatch(std::string iface, Health& health) : iface_(std::move(iface)), health_(health) {}
  using Emit = std::function<void(const EventRecord&)>;
  // One look at the host; what changed is said and handed to `emit`.
  void check(const Pinned& pins, PolicyMap& policy, const Emit& emit);
  // The filter was attached again: nothing said of the one before holds.
  void reset() { said_.clear(); }

 private:
  // Is levee's tc filter where lv_control says (put back if not)?
  bool tc_filter_there(const Pinned& pins, PolicyMap& policy, unsigned ifindex, const Emit& emit);
  void proxy(bool on, const std::string& why, PolicyMap& policy, const Emit& emit);
  EventRecord event(unsigned type) const;
  void say_once(const std::string& line);

  std::string iface_;
  Health& health_;
  std::string said_;  // the last reason a put-back failed, said once
};

}  // namespace levee::daemon
