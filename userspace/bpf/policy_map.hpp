// policy_map.hpp - the datapath's policy, mapped into the controller, and its lists.
//
// lv_policy is one mmapable array entry (struct lv_control) holding two slots; each slot
// has a pair of list tries (lv_list{4,6}_{slot}). Every change - limits, a reload, a list
// edit - is one publish: rebuild the slot packets are not reading and its tries, then
// flip `active` with one atomic store. Before the rebuild, a grace period guarantees no
// packet still reads that slot from before the previous flip. Controllers are
// serialised by IfaceLock, so there is one writer at a time.
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "levee_abi.h"

namespace levee {

struct Lists {
  std::vector<std::pair<lv_lpm4, lv_list_value>> v4;
  std::vector<std::pair<lv_lpm6, lv_list_value>> v6;
};

// File descriptors of the four list tries, [slot][0 = IPv4, 1 = IPv6]; not owned.
using ListFds = std::array<std::array<int, 2>, 2>;

class PolicyMap {
 public:
  static Result<PolicyMap> map(int policy_fd, ListFds lists);
  PolicyMap(PolicyMap&& o) noexcept;
  PolicyMap& operator=(PolicyMap&&) = delete;
  ~PolicyMap();

  const lv_control& control() const { return *ctl_; }
  // The policy packets are using now, and its lists.
  const lv_policy& active() const;
  Result<Lists> active_lists() const;

  // First write, before the program is attached: no readers, no grace period. Both
  // slots and both trie pairs get the policy.
  Status init(const lv_policy& p, const Lists& lists, unsigned ifindex, lv_attach_mode mode);
  // Replace the policy and its lists atomically with respect to packets. Sets the
  // generation (one above the active one) and the list counts.
  Status publish(lv_policy next, const Lists& lists);

 private:
  PolicyMap(lv_control* ctl, size_t len, ListFds lists) : ctl_(ctl), len_(len), lists_(lists) {}
  Status fill_slot_lists(unsigned slot, const Lists& lists);
  lv_control* ctl_;
  size_t len_;
  ListFds lists_;
};

// Wait until every BPF program that was running when this was called has finished.
Status wait_for_datapath_readers();

// Every entry of one list trie.
template <typename Key>
Result<std::vector<std::pair<Key, lv_list_value>>> read_trie(int fd);

}  // namespace levee
