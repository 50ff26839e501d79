// pins.hpp - where levee keeps an attached interface's objects in bpffs.
//
//   /sys/fs/bpf/levee/<iface>/link       the XDP link: keeps the program attached
//   /sys/fs/bpf/levee/<iface>/lv_state   per-source limiter state (LRU hash)
//   /sys/fs/bpf/levee/<iface>/lv_policy  the policy (two slots + active index)
//   /sys/fs/bpf/levee/<iface>/lv_percpu  per-CPU counters
//   /sys/fs/bpf/levee/<iface>/lv_shared  per-class budgets shared by every CPU
//   /sys/fs/bpf/levee/<iface>/lv_bans    ban records (LRU hash)
//   /sys/fs/bpf/levee/<iface>/lv_seen    the known-source filter
//   /sys/fs/bpf/levee/<iface>/lv_events  the datapath's events (ring buffer)
//   /sys/fs/bpf/levee/<iface>/lv_list{4,6}_{0,1}  list tries, per family and slot
//   /sys/fs/bpf/levee/<iface>/lv_host{4,6}_{0,1}  list host hashes, per family and slot
//
// An attach pins into a staging directory and renames it into place; a detach renames
// the directory away before it takes it apart. So to a reader the directory either
// exists complete or not at all.
//
// bpffs refuses names containing '.', which interface names may hold (eth0.100), so
// '.' is stored as "%2e" and '%' as "%25". Staging directories hold ':', which no
// interface name can.
#pragma once

#include <string>
#include <vector>

#include "bpf/policy_map.hpp"
#include "core/fd.hpp"
#include "core/result.hpp"
#include "levee_abi.h"

namespace levee {

inline constexpr const char* kBpffs = "/sys/fs/bpf";
inline constexpr const char* kPinRoot = "/sys/fs/bpf/levee";

std::string pin_dir(const std::string& iface);
// Private working directories of one controller: "<iface>:<what>:<pid>".
std::string work_dir(const std::string& iface, const char* what, int pid);

// Remove the working directories a killed controller left for this interface (call
// with the interface's lock held). Unpinning a leftover link detaches it. Returns
// how many there were.
size_t remove_leftovers(const std::string& iface);

// The objects of one attached interface, opened from their pins.
struct Pinned {
  std::string iface;
  Fd link, state, policy, percpu, shared, bans, seen;
  // Invalid when the attachment predates the event ring (same state layout, one pin
  // fewer): everything but `levee events` works on it.
  Fd events;
  Fd lists[2][4];  // [slot][ListMap: net4, net6, host4, host6]
};

// The pinned names of the list maps, [slot][ListMap].
inline constexpr const char* kListPins[2][4] = {{LV_MAP_LIST4_0, LV_MAP_LIST6_0, LV_MAP_HOST4_0, LV_MAP_HOST6_0},
                                                {LV_MAP_LIST4_1, LV_MAP_LIST6_1, LV_MAP_HOST4_1, LV_MAP_HOST6_1}};

// Fails with a hint to attach first if the interface has no levee pins.
Result<Pinned> open_pinned(const std::string& iface);

// The pinned list maps as PolicyMap takes them.
ListFds list_fds(const Pinned& p);
// The pinned policy, mapped, after checking it was written with this LV_ABI_VERSION
// (a controller touches no pinned state of another layout).
Result<PolicyMap> map_pinned_policy(const Pinned& p);

bool pin_dir_exists(const std::string& iface);

// Names of interfaces with a levee pin directory, sorted.
std::vector<std::string> list_pinned();

// Remove a pin directory and everything in it (pins are plain files to unlink).
Status remove_pin_dir(const std::string& dir);

}  // namespace levee
