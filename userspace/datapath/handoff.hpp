// handoff.hpp - levee's tc ingress program (bpf/handoff.h), SYN authentication's proxy
// mode: whether this kernel can run it, the listener's sysctls it must follow, and putting
// it on and off an interface.
//
// It sits in the interface's clsact ingress hook as one filter of levee's own, at a handle
// and priority no other filter has (tc_filter.hpp: the lowest priority it can share, first
// within it), recorded in lv_control.tc_handle and tc_priority. It passes every frame on to
// the next filter. levee never replaces a filter (an attach without BPF_TC_F_REPLACE fails
// where one exists), and removes only the filter at its recorded place whose program is
// levee's, and the clsact qdisc only if it created it (LV_TC_OWN_HOOK) and nothing else is
// left on it.
//
// "First" is among the clsact filters only: TCX programs (bpf_mprog, BPF_TCX_INGRESS, as
// Cilium attaches) run before every clsact filter, and one that returns a verdict other
// than TCX_NEXT keeps the handed ACKs from levee's filter (proxied without handed, in
// levee stats).
#pragma once

#include <cstdint>
#include <string>

#include "core/result.hpp"
#include "datapath/tc_filter.hpp"
#include "policy/policy.hpp"

namespace levee {

// The tc program's name as the kernel has it (bpf_prog_info.name).
inline constexpr const char* kHandoffProgName = "levee_handoff";

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

// The sysctls of the listener's network namespace (this process's: levee runs in the
// interface's) that the hand-off depends on; -1 where unreadable. IPv6 listeners follow
// the same net.ipv4 ones.
struct TcpSysctls {
  int timestamps = -1, sack = -1, window_scaling = -1;  // net.ipv4.tcp_timestamps, tcp_sack, tcp_window_scaling
  int syncookies = -1;                                  // net.ipv4.tcp_syncookies
  bool operator==(const TcpSysctls&) const = default;
};
TcpSysctls read_tcp_sysctls();
// The options levee's SYN-ACKs leave out (lv_control.tcp_off, LV_TCP_OFF_*): those whose
// sysctl is 0, which bpf_sk_assign_tcp_reqsk refuses to hand off. An unreadable one
// counts as on (the kernel's default).
uint32_t tcp_off_of(const TcpSysctls& s);
// The kfunc's hand-off fails while net.ipv4.tcp_syncookies is 0 (the stack checks it
// before it takes the request socket); unreadable counts as on.
inline bool syncookies_on(const TcpSysctls& s) { return s.syncookies != 0; }
// "timestamps, SACK" for LV_TCP_OFF_* bits; "none" for 0.
std::string tcp_options_text(uint32_t tcp_off);

// Where levee's filter went: its place, and whether levee created the clsact hook.
struct TcAttached {
  TcPlace place;
  bool own_hook = false;
};
// Put the program on the interface's ingress, creating the clsact hook if needed, at a
// free place (free_tc_place()); never over another filter.
Result<TcAttached> attach_handoff(int prog_fd, unsigned ifindex);
// Take levee's filter off: the one at `place` whose program is `ours` (its id; without one,
// its name kHandoffProgName), nothing else; then the clsact hook if `own_hook` and it
// holds nothing more. Nothing there, or no interface, is not an error.
Status detach_handoff(unsigned ifindex, TcPlace place, bool own_hook, const ProgIdentity& ours);
// Is levee's program (`ours`, as above) in the filter at `place`?
bool handoff_at(unsigned ifindex, TcPlace place, const ProgIdentity& ours);

}  // namespace levee
