// list_edits_test.cpp - what a list change costs the controller and what it leaves in
// the kernel: calls on the list maps in proportion to the entries changed (counted with
// list_ops(), never timed), both slots holding the same lists afterwards, and host
// edits judged by the datapath as a reload of the same lists would be.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <fmt/format.h>
#include <linux/bpf.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "datapath/list_entries.hpp"
#include "datapath/lists.hpp"
#include "datapath/policy_map.hpp"
#include "frames.hpp"
#include "packet.hpp"
#include "policy/compile.hpp"
#include "policy/lists.hpp"

namespace levee::progtest {
namespace {

constexpr uint32_t kPass = XDP_PASS, kDrop = XDP_DROP;
constexpr Outcome kConforming{kPass, LV_R_CONFORMING}, kDenied{kDrop, LV_R_DENY};

// One class every unlisted test packet conforms to.
Policy open_policy() {
  Policy p;
  p.classes = {class_spec("default", Match{}, {1, 1000})};
  return p;
}

// `n` deny entries for hosts of 198.18.0.0/15 from `first` on.
std::vector<ListEntry> hosts(uint32_t first, uint32_t n) {
  std::vector<ListEntry> out;
  out.reserve(n);
  for (uint32_t i = first; i < first + n; ++i)
    out.push_back(list_entry(fmt::format("198.{}.{}.{}", 18 + (i >> 16), (i >> 8) & 255, i & 255), LV_LIST_DENY));
  return out;
}

ListEdit deny_edit(std::vector<std::string> add, std::vector<std::string> del = {}, uint64_t expires_unix_ns = 0) {
  ListEdit ed;
  ed.kind = LV_LIST_DENY;
  for (const auto& a : add) ed.add.push_back(cidr(a));
  for (const auto& d : del) ed.del.push_back(cidr(d));
  ed.expires_unix_ns = expires_unix_ns;
  return ed;
}

ListEditResult edit(Controller& ctl, const ListEdit& ed) {
  auto r = edit_lists(ctl.map(), ed, Clocks::read(), "test0");
  if (!r) throw std::runtime_error("edit_lists: " + r.error().message());
  return *r;
}

// Every entry of a host hash, by key bytes.
template <typename HostKey>
std::vector<std::pair<std::string, std::string>> host_map(int fd) {
  std::vector<std::pair<std::string, std::string>> out;
  HostKey k{}, next{};
  const HostKey* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    lv_list_value v{};
    EXPECT_EQ(bpf_map_lookup_elem(fd, &next, &v), 0);
    out.emplace_back(std::string(reinterpret_cast<const char*>(&next), sizeof next),
                     std::string(reinterpret_cast<const char*>(&v), sizeof v));
    k = next;
    prev = &k;
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Both slots' list maps hold the same entries, and the policy says so.
void expect_slots_equal(Datapath& dp, Controller& ctl) {
  const ListFds fds = dp.list_fds();
  EXPECT_TRUE(ctl.map().lists_synced());
  EXPECT_EQ(host_map<uint32_t>(fds[0][kHost4]), host_map<uint32_t>(fds[1][kHost4]));
  EXPECT_EQ(host_map<lv_in6>(fds[0][kHost6]), host_map<lv_in6>(fds[1][kHost6]));
  auto t0 = read_trie<lv_lpm4>(fds[0][kNet4]), t1 = read_trie<lv_lpm4>(fds[1][kNet4]);
  ASSERT_TRUE(t0 && t1);
  ASSERT_EQ(t0->size(), t1->size());
  for (size_t i = 0; i < t0->size(); ++i) EXPECT_EQ(std::memcmp(&(*t0)[i], &(*t1)[i], sizeof((*t0)[i])), 0) << i;
}

TEST_F(ProgTest, OneHostAddedToAHundredThousandEntryListCostsAFewCalls) {
  Policy p = open_policy();
  p.lists = hosts(0, 100'000);
  Controller ctl(dp());
  ctl.install(p);
  ASSERT_EQ(ctl.active().nr_host4, 100'000u);
  const Bytes added = udp_from("198.19.200.1", 53);
  EXPECT_EQ(dp().send(added), kConforming);

  list_ops() = {};
  ListEditResult r = edit(ctl, deny_edit({"198.19.200.1"}));
  const ListOps add = list_ops();
  EXPECT_EQ(r.added, 1u);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].outcome, EditOutcome::Added);
  EXPECT_EQ(add.walks, 0u) << "no list walked";
  EXPECT_LE(add.total(), 8u) << "lookups " << add.lookups << ", updates " << add.updates;
  EXPECT_EQ(add.updates, 2u) << "the entry, in each slot";
  EXPECT_EQ(dp().send(added), kDenied);
  EXPECT_EQ(ctl.active().nr_host4, 100'001u);

  list_ops() = {};
  r = edit(ctl, ListEdit{LV_LIST_DENY, {}, {cidr("198.19.200.1")}});
  EXPECT_EQ(r.deleted, 1u);
  EXPECT_EQ(list_ops().walks, 0u);
  EXPECT_LE(list_ops().total(), 8u);
  EXPECT_EQ(list_ops().deletes, 2u);
  EXPECT_EQ(dp().send(added), kConforming);
  EXPECT_EQ(dp().send(udp_from("198.18.0.7", 53)), kDenied) << "the others stay";
  EXPECT_EQ(ctl.active().nr_host4, 100'000u);
}

TEST_F(ProgTest, ReplacingHostEntriesWalksEachMapOnceAndWritesOnlyTheChange) {
  constexpr uint32_t kN = 20'000;
  Policy p = open_policy();
  p.lists = hosts(0, kN);
  Controller ctl(dp());
  ctl.install(p);

  // Every entry replaced: each deleted and written once per slot, each map walked once
  // per slot (a walk restarted per key is what made this quadratic).
  p.lists = hosts(kN, kN);
  list_ops() = {};
  ctl.publish(p);
  const ListOps replace = list_ops();
  EXPECT_EQ(replace.deletes, 2 * kN);
  EXPECT_EQ(replace.updates, 2 * kN);
  EXPECT_LE(replace.walks, 4u) << "the active slot's four maps, once: the slots hold the same lists";
  EXPECT_LE(replace.total(), 5 * kN);
  EXPECT_EQ(ctl.active().nr_host4, kN);
  EXPECT_EQ(dp().send(udp_from("198.18.0.1", 53)), kConforming);
  EXPECT_EQ(dp().send(udp_from("198.18.78.33", 53)), kDenied);  // entry 20,001
  expect_slots_equal(dp(), ctl);

  // Half of them replaced: half the writes.
  p.lists = hosts(kN + kN / 2, kN);
  list_ops() = {};
  ctl.publish(p);
  EXPECT_EQ(list_ops().deletes, kN);
  EXPECT_EQ(list_ops().updates, kN);

  // The same lists again (a reload that changes a limit): nothing written.
  list_ops() = {};
  ctl.publish(p);
  EXPECT_EQ(list_ops().deletes, 0u);
  EXPECT_EQ(list_ops().updates, 0u);
  expect_slots_equal(dp(), ctl);
}

// `n` deny entries for hosts of 2001:db8:6::/48 from `first` on.
std::vector<ListEntry> hosts6(uint32_t first, uint32_t n) {
  std::vector<ListEntry> out;
  out.reserve(n);
  for (uint32_t i = first; i < first + n; ++i)
    out.push_back(list_entry(fmt::format("2001:db8:6::{:x}:{:x}", i >> 16, i & 0xffff), LV_LIST_DENY));
  return out;
}

// What a reload does: the lists it read under its lock given to the publish, which then
// walks no map, writes the one difference into each slot, and leaves every sampled
// source judged by the new lists alone, hosts and the networks around them alike.
TEST_F(ProgTest, ALargeReplaceGivenTheActiveListsWalksNothingAndJudgesByTheNewLists) {
  constexpr uint32_t kN = 60'000, kShift = 36'000;  // hosts within 198.18.0.0/15
  Policy p = open_policy();
  auto lists_from = [&](uint32_t first) {
    std::vector<ListEntry> l = hosts(first, kN), l6 = hosts6(first, kN);
    l.insert(l.end(), l6.begin(), l6.end());
    // Hosts of the other kind inside networks: an allowed host in a denied /24, a denied
    // host in an allowed /64.
    for (const auto& [net, kind] : {std::pair{"198.19.200.0/24", LV_LIST_DENY},
                                    {"198.19.200.7", LV_LIST_ALLOW},
                                    {"2001:db8:9::/64", LV_LIST_ALLOW},
                                    {"2001:db8:9::7", LV_LIST_DENY}})
      l.push_back(list_entry(net, kind));
    return l;
  };
  p.lists = lists_from(0);
  Controller ctl(dp());
  ctl.install(p);
  ASSERT_EQ(ctl.active().nr_host4, kN + 1);

  auto now = ctl.map().active_lists();
  ASSERT_TRUE(now);
  p.lists = lists_from(kShift);
  const CompiledPolicy next = compile(p, Clocks::read());
  list_ops() = {};
  ASSERT_TRUE(ctl.map().publish(next.slot, Lists{next.list4, next.list6}, &*now));
  const ListOps ops = list_ops();
  EXPECT_EQ(ops.walks, 0u);
  EXPECT_EQ(ops.deletes, 2 * 2 * kShift) << "the hosts gone, of both families, from each slot";
  EXPECT_EQ(ops.updates, 2 * 2 * kShift) << "the hosts new, of both families, into each slot";
  EXPECT_EQ(ctl.active().nr_host4, kN + 1);
  EXPECT_EQ(ctl.active().nr_host6, kN + 1);
  EXPECT_EQ(ctl.active().nr_list4, 1u);
  EXPECT_EQ(ctl.active().nr_list6, 1u);

  const Outcome allowed{kPass, LV_R_ALLOW};
  for (uint32_t i = 0; i < kN + kShift; i += 499) {
    const Outcome want = i < kShift ? kConforming : kDenied;
    EXPECT_EQ(dp().send(udp_from(fmt::format("198.{}.{}.{}", 18 + (i >> 16), (i >> 8) & 255, i & 255), 53)), want)
        << "IPv4 host " << i;
    EXPECT_EQ(dp().send(udp_from(fmt::format("2001:db8:6::{:x}:{:x}", i >> 16, i & 0xffff), 53)), want)
        << "IPv6 host " << i;
  }
  EXPECT_EQ(dp().send(udp_from("198.19.200.7", 53)), allowed);
  EXPECT_EQ(dp().send(udp_from("198.19.200.8", 53)), kDenied);
  EXPECT_EQ(dp().send(udp_from("2001:db8:9::7", 53)), kDenied);
  EXPECT_EQ(dp().send(udp_from("2001:db8:9::8", 53)), allowed);
  expect_slots_equal(dp(), ctl);
}

TEST_F(ProgTest, HostEditsLeaveWhatAReloadOfTheSameListsWould) {
  Policy p = open_policy();
  p.lists = {list_entry("198.18.60.0/24", LV_LIST_ALLOW), list_entry("2001:db8:60::/48", LV_LIST_ALLOW),
             list_entry("198.18.61.9", LV_LIST_DENY)};
  Controller ctl(dp());
  ctl.install(p);
  // An expiring deny inside an allow falls back to the allow: its fallback computed as
  // compile_lists would.
  const uint64_t expires = Clocks::read().now_unix_ns + 3600 * LV_NSEC_PER_SEC;
  ListEditResult r = edit(ctl, deny_edit({"198.18.60.7", "2001:db8:60::7", "198.18.61.9"}, {}, expires));
  EXPECT_EQ(r.added, 2u);
  EXPECT_EQ(r.replaced, 1u);
  EXPECT_EQ(dp().send(udp_from("198.18.60.7", 53)), kDenied);
  EXPECT_EQ(dp().send(udp_from("2001:db8:60::7", 53)), kDenied);
  EXPECT_EQ(dp().send(udp_from("198.18.60.8", 53)), (Outcome{kPass, LV_R_ALLOW}));
  auto lists = ctl.map().active_lists();
  ASSERT_TRUE(lists);
  for (const auto& [k, v] : lists->v4) {
    if (k.prefixlen != 32) continue;
    const bool inside = cidr("198.18.60.0/24").contains(cidr_of(k));
    EXPECT_EQ(v.after_kind, inside ? LV_LIST_ALLOW : LV_LIST_NONE) << cidr_of(k).to_string();
  }
  for (const auto& [k, v] : lists->v6) {
    if (k.prefixlen == 128) {
      EXPECT_EQ(v.after_kind, LV_LIST_ALLOW);
    }
  }
  expect_slots_equal(dp(), ctl);

  // A host on another list is refused, nothing written.
  list_ops() = {};
  ListEdit allow{LV_LIST_ALLOW, {cidr("198.18.61.9")}, {}};
  auto refused = edit_lists(ctl.map(), allow, Clocks::read(), "test0");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("198.18.61.9/32 is on the deny list of test0"), std::string::npos);
  EXPECT_EQ(list_ops().updates + list_ops().deletes, 0u);
}

TEST_F(ProgTest, AnEditAfterAnInterruptedPublishComparesTheMaps) {
  Policy p = open_policy();
  p.lists = hosts(0, 10);
  Controller ctl(dp());
  ctl.install(p);
  // What a controller killed between its flip and the catch-up of the old slot leaves:
  // the inactive slot's lists differ, and its generation says so.
  const unsigned inactive = (ctl.map().control().active & 1) ^ 1;
  const uint32_t stray = htonl(0xc612ff01);  // 198.18.255.1
  const lv_list_value deny{LV_LIST_DENY, LV_ORIGIN_CLI, 0, 0, 0, 0, 0};
  ASSERT_EQ(bpf_map_update_elem(dp().list_fds()[inactive][kHost4], &stray, &deny, BPF_ANY), 0);
  {
    PolicyMapping pm(dp());
    pm->slot[inactive].generation += 7;
  }
  ASSERT_FALSE(ctl.map().lists_synced());
  edit(ctl, deny_edit({"198.18.1.1"}));
  EXPECT_EQ(dp().send(udp_from("198.18.255.1", 53)), kConforming) << "the stray entry was not published";
  EXPECT_EQ(dp().send(udp_from("198.18.1.1", 53)), kDenied);
  EXPECT_EQ(ctl.active().nr_host4, 11u);
  expect_slots_equal(dp(), ctl);
}

TEST_F(ProgTest, AnIpv4MappedDenyEntryDropsTheIpv4Source) {
  Policy p = open_policy();
  p.lists = {list_entry("::ffff:198.19.1.200", LV_LIST_DENY)};
  Controller ctl(dp());
  ctl.install(p);
  EXPECT_EQ(ctl.active().nr_host4, 1u);
  EXPECT_EQ(dp().send(udp_from("198.19.1.200", 53)), kDenied);
  // And added at run time (levee deny add IFACE ::ffff:198.19.1.201).
  edit(ctl, deny_edit({"::ffff:198.19.1.201"}));
  EXPECT_EQ(dp().send(udp_from("198.19.1.201", 53)), kDenied);
  EXPECT_EQ(dp().send(udp_from("198.19.1.202", 53)), kConforming);
}

}  // namespace
}  // namespace levee::progtest
