// hot_test.cpp - the per-CPU hot source (lv_hot): a flooding source's repeat packets are
// rejected without the LRU lookup, and that never changes a verdict the limiter would
// not also give, except to reject a bounded few early after its state moved back
// without a policy publish (an eviction).
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include <algorithm>

#include "datapath.hpp"
#include "limiter.h"
#include "packet.hpp"

namespace levee::progtest {
namespace {

using Bytes = std::vector<uint8_t>;
using pkt::Frame;

constexpr uint32_t kPass = XDP_PASS, kDrop = XDP_DROP;

Bytes udp4_from(const std::string& src) {
  return Frame().eth().ipv4(src, "198.19.0.1").udp(1000, 53).payload(18).bytes();
}

uint32_t verdict(Datapath& dp, const Bytes& frame) {
  RunResult r = dp.run(frame);
  EXPECT_EQ(r.err, 0);
  return r.retval;
}

// The hot entry of `key`'s slot on the CPU that ran the last packet (the one with
// counters).
lv_hot hot_of(const Datapath& dp, const lv_key& key) {
  lv_hot found{};
  const std::vector<lv_hot> slots = dp.hot(key);
  const std::vector<lv_percpu> cpus = dp.percpu();
  for (size_t i = 0; i < cpus.size() && i < slots.size(); ++i)
    if (std::any_of(std::begin(cpus[i].by_reason), std::end(cpus[i].by_reason),
                    [](const lv_counter& c) { return c.packets; }))
      found = slots[i];
  return found;
}

bool same_key(const lv_key& a, const lv_key& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A rejected source is remembered with the state's ready_ns, counted hits, and after
// LV_HOT_MAX_HITS the real path runs again and remembers it afresh.
TEST_F(ProgTest, HotSourceIsRememberedAndRefreshedEveryMaxHits) {
  const lv_class cls = make_class(1, 2, 32, 64, true);  // T = 1 s: no refill during the test
  dp().set_class(cls);
  const Bytes f = udp4_from("198.18.20.1");
  const lv_key key = key4("198.18.20.1", cls);
  ASSERT_EQ(verdict(dp(), f), kPass);
  ASSERT_EQ(verdict(dp(), f), kPass);

  ASSERT_EQ(verdict(dp(), f), kDrop);  // the real path rejects and remembers
  lv_hot h = hot_of(dp(), key);
  ASSERT_TRUE(same_key(h.key, key));
  EXPECT_EQ(h.ready_ns, dp().state(key)->ready_ns);
  EXPECT_EQ(h.hits, 0u);
  EXPECT_EQ(h.generation, dp().control().slot[dp().control().active & 1].generation);

  for (uint32_t i = 1; i <= LV_HOT_MAX_HITS; ++i) {
    ASSERT_EQ(verdict(dp(), f), kDrop);
    EXPECT_EQ(hot_of(dp(), key).hits, i) << "rejected from the hot entry";
  }
  ASSERT_EQ(verdict(dp(), f), kDrop);
  EXPECT_EQ(hot_of(dp(), key).hits, 0u) << "the real path ran and remembered it again";
  EXPECT_EQ(dp().counters()[LV_R_RATE].packets, 1u + LV_HOT_MAX_HITS + 1u);
}

// Each rejected source is remembered in the slot its key hashes to (another source
// replaces it only there); a policy publish makes the next packet take the real path (a
// new limit applies at once, hot or not).
TEST_F(ProgTest, HotEntriesAreKeptPerSlotAndForgottenByAPublish) {
  const lv_class cls = make_class(1, 1, 32, 64, true);
  ASSERT_TRUE(cls.flags & LV_CLASS_FAST_REJECT) << "tau 0 with FAST_REJECT forced";
  dp().set_class(cls);
  const Bytes a = udp4_from("198.18.21.1"), b = udp4_from("198.18.21.2");
  const lv_key ka = key4("198.18.21.1", cls), kb = key4("198.18.21.2", cls);
  ASSERT_NE(lv_hot_slot(&ka), lv_hot_slot(&kb)) << "the test needs two slots";
  ASSERT_EQ(verdict(dp(), a), kPass);
  ASSERT_EQ(verdict(dp(), b), kPass);
  ASSERT_EQ(verdict(dp(), a), kDrop);
  ASSERT_EQ(verdict(dp(), b), kDrop);
  EXPECT_TRUE(same_key(hot_of(dp(), ka).key, ka));
  EXPECT_TRUE(same_key(hot_of(dp(), kb).key, kb));
  ASSERT_EQ(verdict(dp(), a), kDrop);
  ASSERT_EQ(verdict(dp(), b), kDrop);
  EXPECT_EQ(hot_of(dp(), ka).hits, 1u) << "a's entry was not replaced by b's";
  EXPECT_EQ(hot_of(dp(), kb).hits, 1u);

  // b's state moves back behind the datapath's back: the hot entry still rejects
  // (stricter, never looser) until a publish, after which the real path admits it.
  const lv_state back{monotonic_ns() - 10 * LV_NSEC_PER_SEC, 0, 0, 0};
  ASSERT_EQ(bpf_map_update_elem(dp().state_fd(), &kb, &back, BPF_ANY), 0);
  EXPECT_EQ(verdict(dp(), b), kDrop) << "rejected on the remembered value";
  dp().set_class(cls);  // same limits, new generation
  EXPECT_EQ(verdict(dp(), b), kPass);
}

// Ten thousand sources round robin, each over its limit (a botnet of real addresses):
// most are rejected from their slots, without the map lookup, and every packet is
// counted once.
TEST_F(ProgTest, SourcesRoundRobinAreRejectedFromTheirSlots) {
  const lv_class cls = make_class(1, 1, 32, 64, true);
  dp_.emplace(16384);
  dp().set_class(cls);
  constexpr int kSources = 2000;
  auto src = [](int i) { return "198.18." + std::to_string(64 + i / 250) + "." + std::to_string(1 + i % 250); };
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < kSources; ++i) verdict(dp(), udp4_from(src(i)));
  // Round 1 passed each once, round 2 rejected each on the real path; round 3 mostly
  // from the slots.
  size_t hot = 0;
  for (int i = 0; i < kSources; ++i) {
    const lv_key k = key4(src(i), cls);
    const lv_hot h = hot_of(dp(), k);
    hot += same_key(h.key, k) && h.hits == 1;
  }
  EXPECT_GT(hot, kSources * 9 / 10) << "2,000 keys in 32,768 slots: few collide";
  const Counters n = dp().counters();
  EXPECT_EQ(n[LV_R_CONFORMING].packets, static_cast<uint64_t>(kSources));
  EXPECT_EQ(n[LV_R_RATE].packets, 2u * kSources);
}

// Without a publish (an eviction, which the kernel does on its own), a remembered value
// may reject a few packets of the re-created source early: never more than
// LV_HOT_MAX_HITS, and never a pass the limiter would refuse.
TEST_F(ProgTest, StateThatMovesBackWithoutAPublishIsNoticedWithinMaxHits) {
  const lv_class cls = make_class(1, 2, 32, 64, true);
  dp().set_class(cls);
  const Bytes f = udp4_from("198.18.22.1");
  const lv_key key = key4("198.18.22.1", cls);
  ASSERT_EQ(verdict(dp(), f), kPass);
  ASSERT_EQ(verdict(dp(), f), kPass);
  ASSERT_EQ(verdict(dp(), f), kDrop);  // remembered

  // The source's state disappears behind the datapath's back, as an LRU eviction does.
  ASSERT_EQ(bpf_map_delete_elem(dp().state_fd(), &key), 0);
  int early = 0;
  while (verdict(dp(), f) == kDrop) {
    ++early;
    ASSERT_LE(early, static_cast<int>(LV_HOT_MAX_HITS)) << "the real path never ran";
  }
  EXPECT_TRUE(dp().state(key)) << "the real path re-created the source";
  EXPECT_EQ(verdict(dp(), f), kPass) << "a fresh bucket of 2";
  EXPECT_EQ(verdict(dp(), f), kDrop);
}

// A flood with repeat (the hot path on nearly every packet) passes exactly what the
// limiter allows: burst, then one per interval.
TEST_F(ProgTest, HotPathKeepsTheLimitUnderAFlood) {
  const lv_class cls = make_class(1000, 50, 32, 64, true);  // T = 1 ms
  dp().set_class(cls);
  const Bytes f = udp4_from("198.18.23.1");
  const uint64_t t0 = monotonic_ns();
  ASSERT_EQ(dp().run(f, 2'000'000).err, 0);
  const uint64_t elapsed = monotonic_ns() - t0;
  const Counters c = dp().counters();
  const uint64_t passed = c[LV_R_CONFORMING].packets;
  EXPECT_LE(passed, 50u + elapsed / cls.pkt.cost + 1) << describe(c);
  EXPECT_GE(passed, 50u) << describe(c);
  EXPECT_EQ(passed + c[LV_R_RATE].packets, 2'000'000u);
}

}  // namespace
}  // namespace levee::progtest
