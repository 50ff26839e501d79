// policy_map.hpp - the datapath's policy, mapped into the controller, and its lists.
//
// lv_policy is one mmapable array entry (struct lv_control) holding two slots; each slot
// has a pair of list tries (lv_list{4,6}_{slot}). Every change - limits, a reload, a list
// edit - is one publish: rebuild the slot packets are not reading and its tries, then
// flip `active` with one atomic store. Before the rebuild, a grace period guarantees no
// packet still reads that slot from before the previous flip. Controllers are
// serialised by IfaceLock, so there is one writer at a time.
#pragma once

#include <bpf/libbpf.h>

#include <array>
#include <utility>
#include <vector>

#include "bpf/mapped.hpp"
#include "core/result.hpp"
#include "levee_abi.h"

namespace levee {

struct Lists {
  std::vector<std::pair<lv_lpm4, lv_list_value>> v4;
  std::vector<std::pair<lv_lpm6, lv_list_value>> v6;
};

// File descriptors of a slot's list maps, [slot][ListMap]; not owned. A slot's lists
// are a trie of networks and a hash of hosts per family: PolicyMap splits entries on
// write and merges them on read, so callers see one list per family.
enum ListMap { kNet4 = 0, kNet6 = 1, kHost4 = 2, kHost6 = 3, kListMaps = 4 };
using ListFds = std::array<std::array<int, kListMaps>, 2>;

// The list maps of a loaded skeleton (levee's own, or one that includes its maps).
template <typename Skel>
ListFds list_fds_of(const Skel* s) {
  auto fd = [](const bpf_map* m) { return bpf_map__fd(m); };
  return {{{fd(s->maps.lv_list4_0), fd(s->maps.lv_list6_0), fd(s->maps.lv_host4_0), fd(s->maps.lv_host6_0)},
           {fd(s->maps.lv_list4_1), fd(s->maps.lv_list6_1), fd(s->maps.lv_host4_1), fd(s->maps.lv_host6_1)}}};
}

class PolicyMap {
 public:
  static Result<PolicyMap> map(int policy_fd, ListFds lists);

  const lv_control& control() const { return *ctl_; }
  // The policy packets are using now, and its lists.
  const lv_policy& active() const;
  Result<Lists> active_lists() const;

  // First write, before the program is attached: no readers, no grace period. Both
  // slots and both trie pairs get the policy.
  Status init(const lv_policy& p, const Lists& lists, unsigned ifindex, lv_attach_mode mode);
  // The known-source filter's hash seed (lv_control.seen_seed), before the program is
  // attached: random per attach, so a flood cannot aim at the filter's bits.
  void seed_filter(uint32_t seed);
  // Make packets read the other half of lv_seen (lv_control.seen_active): one atomic
  // store, after the controller refilled that half. Returns the half now read.
  uint32_t flip_seen();
  // Replace the policy and its lists atomically with respect to packets. Sets the
  // generation (one above the active one) and the list counts.
  Status publish(lv_policy next, const Lists& lists);

 private:
  PolicyMap(MappedArray m, ListFds lists) : m_(std::move(m)), ctl_(m_.as<lv_control>()), lists_(lists) {}
  // Rebuild a slot's list maps; sets the slot's list counts.
  Status fill_slot_lists(unsigned slot, const Lists& lists, lv_policy& p);
  MappedArray m_;
  lv_control* ctl_;
  ListFds lists_;
};

// Wait until every BPF program that was running when this was called has finished.
Status wait_for_datapath_readers();

// Every entry of one list trie.
template <typename Key>
Result<std::vector<std::pair<Key, lv_list_value>>> read_trie(int fd);

}  // namespace levee
