// pins.hpp - where levee keeps an attached interface's objects in bpffs.
//
//   /sys/fs/bpf/levee/<iface>/link       the XDP link: keeps the program attached
//   /sys/fs/bpf/levee/<iface>/handoff    the tc program of SYN authentication's proxy mode,
//                                        where attach put it on the interface: what
//                                        levee run puts back, and detach recognises
//   /sys/fs/bpf/levee/<iface>/lv_state   per-source limiter state (LRU hash)
//   /sys/fs/bpf/levee/<iface>/lv_policy  the policy (two slots + active index)
//   /sys/fs/bpf/levee/<iface>/lv_percpu  per-CPU counters
//   /sys/fs/bpf/levee/<iface>/lv_shared  per-class budgets shared by every CPU
//   /sys/fs/bpf/levee/<iface>/lv_bans    ban records (LRU hash)
//   /sys/fs/bpf/levee/<iface>/lv_seen    the known-source filter
//   /sys/fs/bpf/levee/<iface>/lv_good    the known-good filter
//   /sys/fs/bpf/levee/<iface>/lv_local   the host's own addresses (SYN authentication)
//   /sys/fs/bpf/levee/<iface>/lv_events  the datapath's events (ring buffer)
//   /sys/fs/bpf/levee/<iface>/lv_list{4,6}_{0,1}  list tries, per family and slot
//   /sys/fs/bpf/levee/<iface>/lv_host{4,6}_{0,1}  list host hashes, per family and slot
//   /sys/fs/bpf/levee/<iface>/lv_cs_{host,net}{4,6}  CrowdSec decisions (levee run's bouncer)
//
// An attach pins into a staging directory and renames it into place; a detach renames
// the directory away before it takes it apart. So to a reader the directory either
// exists complete or not at all.
//
// bpffs is mode 1777: any user may create /sys/fs/bpf/levee, or a directory in it when
// it is theirs, and could then plant or rename an interface's directory. So levee
// creates the directory 0700 and keeps it once made (an empty one stays after the last
// detach: removing it would reopen that window), and trusts nothing there that another
// user owns or may write (check_pin_root, run by every command's preflight).
//
// bpffs refuses names containing '.', which interface names may hold (eth0.100), so
// '.' is stored as "%2e" and '%' as "%25". Staging directories hold ':', which no
// interface name can.
#pragma once

#include <string>
#include <vector>

#include "core/fd.hpp"
#include "core/result.hpp"
#include "datapath/policy_map.hpp"
#include "levee_abi.h"

namespace levee {

inline constexpr const char* kBpffs = "/sys/fs/bpf";
inline constexpr const char* kPinRoot = "/sys/fs/bpf/levee";

// Refuses /sys/fs/bpf/levee, or anything in it or in an interface's directory, that is
// not a directory or a pin of root's or ours, or that group or others may write; the
// error names the path, its owner, and the command that clears it. Nothing there: fine.
Status check_pin_root();
// Creates /sys/fs/bpf/levee (0700) if it is not there, then check_pin_root(): one made
// by someone else between the check and the mkdir is refused too.
Status make_pin_root();

std::string pin_dir(const std::string& iface);
// Private working directories of one controller: "<iface>:<what>:<pid>".
std::string work_dir(const std::string& iface, const char* what, int pid);

// Remove the working directories a killed controller left for this interface (call
// with the interface's lock held). Unpinning a leftover link detaches it. Returns
// how many there were.
size_t remove_leftovers(const std::string& iface);

// The pin of the tc program (optional: only where the attach put it on the interface).
inline constexpr const char* kPinHandoff = "handoff";

// The objects of one attached interface, opened from their pins.
struct Pinned {
  std::string iface;
  Fd link, state, policy, percpu, shared, bans, seen, good, local;
  // Invalid where the attach put no tc program on the interface (the kernel cannot
  // proxy): SYN authentication answers in reset mode there.
  Fd handoff;
  // Invalid when the attachment predates the event ring (same state layout, one pin
  // fewer): everything but `levee events` works on it.
  Fd events;
  Fd lists[2][4];  // [slot][ListMap: net4, net6, host4, host6]
  Fd crowdsec[4];  // [CsMap: host4, host6, net4, net6]
};

// The CrowdSec maps, by index into Pinned::crowdsec, and their pinned names.
enum CsMap { kCsHost4 = 0, kCsHost6 = 1, kCsNet4 = 2, kCsNet6 = 3, kCsMaps = 4 };
inline constexpr const char* kCsPins[kCsMaps] = {LV_MAP_CS_HOST4, LV_MAP_CS_HOST6, LV_MAP_CS_NET4, LV_MAP_CS_NET6};

// The pinned names of the list maps, [slot][ListMap].
inline constexpr const char* kListPins[2][4] = {{LV_MAP_LIST4_0, LV_MAP_LIST6_0, LV_MAP_HOST4_0, LV_MAP_HOST6_0},
                                                {LV_MAP_LIST4_1, LV_MAP_LIST6_1, LV_MAP_HOST4_1, LV_MAP_HOST6_1}};

// Every object an attachment pins, with its pin name (a map's is its name in the BPF
// object), and whether an attachment may lack it (the tc program where the kernel
// cannot proxy; the event ring of an older levee): the one list that attach and repin()
// pin and open_pinned() opens. `f(fd, name, optional)`, fd a member of `p`.
template <class P, class F>
void for_each_pin(P& p, F&& f) {
  f(p.link, LV_PIN_LINK, false);
  f(p.state, LV_MAP_STATE, false);
  f(p.policy, LV_MAP_POLICY, false);
  f(p.percpu, LV_MAP_PERCPU, false);
  f(p.shared, LV_MAP_SHARED, false);
  f(p.bans, LV_MAP_BANS, false);
  f(p.seen, LV_MAP_SEEN, false);
  f(p.good, LV_MAP_GOOD, false);
  f(p.local, LV_MAP_LOCAL, false);
  for (unsigned slot = 0; slot < 2; ++slot)
    for (unsigned m = 0; m < 4; ++m) f(p.lists[slot][m], kListPins[slot][m], false);
  for (unsigned m = 0; m < kCsMaps; ++m) f(p.crowdsec[m], kCsPins[m], false);
  f(p.events, LV_MAP_EVENTS, true);
  f(p.handoff, kPinHandoff, true);
}

// Fails with a hint to attach first if the interface has no levee pins.
Result<Pinned> open_pinned(const std::string& iface);

// The pinned list maps as PolicyMap takes them.
ListFds list_fds(const Pinned& p);
// The pinned policy, mapped, after checking it was written with this LV_ABI_VERSION
// (a controller touches no pinned state of another layout).
Result<PolicyMap> map_pinned_policy(const Pinned& p);

bool pin_dir_exists(const std::string& iface);

// The pinned link filters nothing any more: the interface it was attached to is gone
// (removed, or removed and created again under the same name: a new device, another
// index). Its maps are still there, so a change written to them would report success.
bool orphaned(const Pinned& p);
// Refuses to go on with an orphaned filter, with the fix (detach, then attach again).
// attach and every command that changes a filter (Session::open) say the same.
Status refuse_orphaned(const Pinned& p);

// Names of interfaces with a levee pin directory, sorted.
std::vector<std::string> list_pinned();

// Remove a pin directory and everything in it (pins are plain files to unlink).
Status remove_pin_dir(const std::string& dir);

}  // namespace levee
