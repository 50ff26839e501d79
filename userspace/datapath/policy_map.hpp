// policy_map.hpp - the datapath's policy, mapped into the controller, and its lists.
//
// lv_policy is one mmapable array entry (struct lv_control) holding two slots; each slot
// has its list maps (a trie of networks and a hash of hosts per family). Every change -
// limits, a reload, a list edit - is one publish: bring the slot packets are not reading
// and its maps to the new state, then flip `active` with one atomic store. Before that
// slot is written, a grace period guarantees no packet still reads it from before the
// previous flip. Controllers are serialised by IfaceLock, so there is one writer at a
// time.
//
// A list change costs what it changes, not the size of the lists: a slot's maps are
// brought to the new lists by a difference (deletes of what is gone and writes of what
// is new or changed, in batches), and after the flip and a grace period the old slot is
// caught up with the same difference. Both slots then hold the same lists, which
// lv_control records by giving them the same generation: publish() then computes the
// difference once from the active lists, and publish_delta() writes only the entries an
// edit names. A publish interrupted before the catch-up (kill -9) leaves the generations
// apart, and the next publish walks each slot's maps for its own difference.
#pragma once

#include <bpf/libbpf.h>

#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "datapath/mapped.hpp"
#include "levee_abi.h"

namespace levee {

struct Lists {
  std::vector<std::pair<lv_lpm4, lv_list_value>> v4;
  std::vector<std::pair<lv_lpm6, lv_list_value>> v6;
};

// Entries to write (new or changed, with their fallbacks computed) and prefixes to
// delete, in both families: a list edit as publish_delta() applies it.
struct ListDelta {
  Lists put;
  std::vector<lv_lpm4> del4;
  std::vector<lv_lpm6> del6;
  bool empty() const { return put.v4.empty() && put.v6.empty() && del4.empty() && del6.empty(); }
};

// The calls the list writer made on list maps since the process started (assign {} to
// start over): tests check that a change costs calls in proportion to what it changes.
struct ListOps {
  uint64_t walks = 0;    // walks begun from the start of a map (get_next_key from none)
  uint64_t scans = 0;    // walk steps: get_next_key, or one batch of a batch lookup
  uint64_t lookups = 0;  // entries looked up one by one
  uint64_t updates = 0;  // entries written (one by one or in batches)
  uint64_t deletes = 0;  // entries deleted (one by one or in batches)
  uint64_t total() const { return scans + lookups + updates + deletes; }
};
ListOps& list_ops();

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
  // The known-source filter's hash seed (lv_control.seen_seed) and the SYN cookies' two
  // keys (cookie_key), before the program is attached: random per attach, so a flood
  // cannot aim at the filter's bits, and nobody outside can make a cookie.
  void seed_filter(uint32_t seed, const uint64_t (&cookie_keys)[2][2]);
  // A new key into one cookie slot: only the slot lv_cookie_spare_slot() names, which no
  // live cookie uses (daemon/cookie_keys.hpp).
  void set_cookie_key(unsigned slot, const uint64_t (&key)[2]);
  // SYN authentication's proxy mode (lv_control.handoff) and the MSS its SYN-ACKs offer,
  // before the program is attached: whether levee's tc program is on the interface.
  void set_handoff(bool on, uint16_t mss4, uint16_t mss6);
  // lv_local holds the host's addresses from now on (lv_control.local_known): one store,
  // after the first sync_local() (datapath/local_routes.hpp).
  void set_local_known();
  // Live changes of SYN authentication, one atomic store each: whether it proxies now
  // (lv_control.handoff: levee run turns it off while the tc filter is missing or
  // net.ipv4.tcp_syncookies is 0, and back on), and the options the listener's namespace
  // turned off (lv_control.tcp_off, LV_TCP_OFF_*), which its SYN-ACKs leave out.
  void set_proxying(bool on);
  void set_tcp_off(uint32_t bits);
  // Where levee's tc filter is (lv_control.tc_handle, tc_priority, tc_flags): written by
  // the attach that put it there and by levee run when it puts it back; 0: none.
  void set_tc_place(uint32_t handle, uint16_t priority, uint8_t flags);
  // A new count of networks' known-good marks (lv_control.good_epoch), at each ageing of
  // lv_good: the datapath's counts (lv_syn) and levee run's start over.
  void bump_good_epoch();
  // Make packets read the other half of lv_seen (lv_control.seen_active): one atomic
  // store, after the controller refilled that half. Returns the half now read.
  uint32_t flip_seen();
  // The same for lv_good (lv_control.good_active), after the controller cleared the half
  // it flips away from's counterpart (known_good.hpp).
  uint32_t flip_good();
  // Which CrowdSec maps may hold entries (lv_control.cs_present, enum lv_cs_present):
  // one atomic store, by the bouncer, the only writer of those maps.
  void set_cs_present(uint32_t bits);
  // Replace the policy and its lists atomically with respect to packets. Sets the
  // generation (one above the active one) and the list counts. `active_now`: the
  // active lists, when the caller has read them (active_lists(), under its lock). While
  // both slots hold them (lists_synced()), the difference is computed once, from them,
  // and written to each slot: no map walked but the active slot's, and that only when
  // the caller gives none.
  Status publish(lv_policy next, const Lists& lists, const Lists* active_now = nullptr);
  // The same with the lists changed by `delta` only: calls in proportion to its size,
  // whatever the size of the lists. Needs both slots to hold the same lists
  // (lists_synced()); false, with nothing written, when they do not: publish() then.
  Result<bool> publish_delta(lv_policy next, const ListDelta& delta);
  // Both slots hold the same lists (see the opening comment).
  bool lists_synced() const;
  // One entry of the active lists, looked up by its exact prefix (a host in the hash):
  // for edits of host entries, which need not read the lists.
  Result<std::optional<lv_list_value>> active_host(const lv_lpm4& k) const;
  Result<std::optional<lv_list_value>> active_host(const lv_lpm6& k) const;
  // The active slot's networks (its tries), without the hosts.
  Result<Lists> active_networks() const;

 private:
  PolicyMap(MappedArray m, ListFds lists) : m_(std::move(m)), ctl_(m_.as<lv_control>()), lists_(lists) {}
  struct ListsDiff;
  // What a slot's list maps must change to hold `lists`, each map walked once.
  Result<ListsDiff> read_difference(unsigned slot, const Lists& lists) const;
  Status apply_difference(unsigned slot, const ListsDiff& d);
  // Bring a slot's list maps to `lists` (the difference only); sets the slot's list
  // counts.
  Status fill_slot_lists(unsigned slot, const Lists& lists, lv_policy& p);
  // publish() when the slots may hold different lists: each slot's maps walked.
  Status publish_walking(lv_policy next, const Lists& lists);
  // Write `next` into `slot` (the inactive one), one generation above the active one,
  // and make it active.
  void flip_to(unsigned slot, lv_policy next);
  // Apply `delta` to a slot's list maps; with `p`, keep its list counts.
  Status apply_delta(unsigned slot, const ListDelta& delta, lv_policy* p);
  // After a flip away from `old`: wait until no packet reads it, bring its lists to the
  // active ones with `write`, and record that both slots hold the same lists.
  template <typename Write>
  void catch_up(unsigned old, const Write& write);
  // Before writing the inactive slot's maps: they will differ from the active ones.
  void mark_unsynced(unsigned inactive);
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
