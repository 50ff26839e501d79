// handoff.hpp - levee's tc ingress program (bpf/handoff.h), SYN authentication's proxy
// mode: whether this kernel can run it, and putting it on and off an interface.
//
// It sits in the interface's clsact ingress hook as one filter of levee's own (fixed
// handle and priority, LV_TC_*), passes every frame on to the next filter, and is
// removed by that handle alone: filters of other tools on the hook stay.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.hpp"
#include "policy/policy.hpp"

namespace levee {

// The filter's place in the clsact ingress hook: first, so that nothing ends the chain
// before it sees a handed ACK (it ends nothing itself: TC_ACT_UNSPEC).
inline constexpr uint32_t kTcHandle = 0x1ee;
inline constexpr uint32_t kTcPriority = 1;

// Whether this kernel and network namespace can finish a handshake from tc: the kfunc
// bpf_sk_assign_tcp_reqsk (Linux 6.9) in the kernel's BTF, and net.ipv4.tcp_syncookies
// on (the stack checks it before it takes the request socket). `why` says what is
// missing when it cannot.
struct HandoffSupport {
  bool ok = false;
  std::string why;
};
HandoffSupport handoff_support();

// A policy whose class asked for syn_auth = "proxy" needs the tc program: refused, with
// `why` it cannot have it. Other policies pass ("cookie" falls back to reset).
Status require_handoff(const Policy& p, const std::string& why);

// The MSS levee's SYN-ACKs offer on the interface: its MTU less the IPv4 or IPv6 and
// TCP headers (1460 and 1440 when the MTU cannot be read).
struct HandoffMss {
  uint16_t v4 = 1460, v6 = 1440;
};
HandoffMss handoff_mss(const std::string& iface);

// Put the program on the interface's ingress (creating the clsact hook if needed),
// replacing levee's filter if one is there.
Status attach_handoff(int prog_fd, unsigned ifindex);
// Take levee's filter off; nothing there, or no interface, is not an error.
Status detach_handoff(unsigned ifindex);
// The id of the program in levee's filter on the interface, 0 if none.
uint32_t handoff_prog_id(unsigned ifindex);

}  // namespace levee
