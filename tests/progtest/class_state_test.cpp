// class_state_test.cpp - per (source, class) state in the kernel: classes do not spend
// each other's budgets, each has its own prefix, counters are exact, and a live change of
// limits through PolicyMap::publish keeps the state and invalidates the hot entry.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "frames.hpp"
#include "limiter.h"
#include "packet.hpp"
#include "policy/keys.hpp"

namespace levee::progtest {
namespace {

using pkt::kTcpSyn;

constexpr uint32_t kPass = XDP_PASS, kDrop = XDP_DROP;
constexpr uint64_t kSec = LV_NSEC_PER_SEC;
constexpr Outcome kConforming{kPass, LV_R_CONFORMING}, kRateDrop{kDrop, LV_R_RATE};

// Pass count of `n` single sends; every other outcome must be a rate drop.
int passes(Datapath& dp, const Bytes& frame, int n) {
  int passed = 0;
  for (int i = 0; i < n; ++i) {
    const Outcome o = dp.send(frame);
    EXPECT_TRUE(o == kConforming || o == kRateDrop) << ::testing::PrintToString(o);
    passed += o.verdict == kPass;
  }
  return passed;
}

// Conforming packets of one run with repeat.
uint64_t run_passes(Datapath& dp, const Bytes& frame, int repeat) {
  const uint64_t before = dp.counters()[LV_R_CONFORMING].packets;
  EXPECT_EQ(dp.run(frame, repeat).err, 0);
  return dp.counters()[LV_R_CONFORMING].packets - before;
}

bool same_key(const lv_key& a, const lv_key& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// ---- classes do not share budgets ------------------------------------------------------

enum : uint16_t { kUdp, kSyn, kDefault };
constexpr uint64_t kUdpBurst = 5, kSynBurst = 3;

Policy udp_syn_policy(unsigned udp_prefix4 = 32, unsigned syn_prefix4 = 32, unsigned udp_prefix6 = 64,
                      unsigned syn_prefix6 = 64) {
  Policy p;
  p.classes = {
      class_spec("udp", on({Proto::Udp}), {1, kUdpBurst}, {}, udp_prefix4, udp_prefix6),
      class_spec("syn", on({Proto::Tcp}, {}, true), {1, kSynBurst}, {}, syn_prefix4, syn_prefix6),
      class_spec("default", Match{}, {1, 1}),
  };
  return p;
}

TEST_F(ProgTest, UdpFloodDoesNotSpendTheSourcesSynBudget) {
  Controller ctl(dp());
  ctl.install(udp_syn_policy());
  for (const char* src : {"198.18.1.1", "2001:db8:1::1"}) {
    SCOPED_TRACE(src);
    const Bytes udp = udp_from(src, 53), syn = tcp_from(src, 443, kTcpSyn);
    // A flood at 100 times the UDP burst: exactly the burst passes.
    EXPECT_EQ(run_passes(dp(), udp, 500), kUdpBurst);
    // The SYN class's budget is whole.
    EXPECT_EQ(passes(dp(), syn, 10), int{kSynBurst});
    EXPECT_EQ(passes(dp(), udp, 5), 0);
    const unsigned prefix = is_ipv6(src) ? 64 : 32;
    const auto su = dp().state(source_key(src, prefix, kUdp)), ss = dp().state(source_key(src, prefix, kSyn));
    ASSERT_TRUE(su);
    ASSERT_TRUE(ss);
    EXPECT_EQ(LV_COUNT_PACKETS(su->passed), kUdpBurst);
    EXPECT_EQ(LV_COUNT_PACKETS(ss->passed), kSynBurst);
    EXPECT_FALSE(dp().state(source_key(src, prefix, kDefault)));
  }
  // The other way round, and interleaved: a SYN flood leaves the UDP budget whole.
  const Bytes udp = udp_from("198.18.1.2", 53), syn = tcp_from("198.18.1.2", 443, kTcpSyn);
  EXPECT_EQ(run_passes(dp(), syn, 500), kSynBurst);
  int udp_passed = 0, syn_passed = 0;
  for (int i = 0; i < 20; ++i) {
    udp_passed += dp().send(udp).verdict == kPass;
    syn_passed += dp().send(syn).verdict == kPass;
  }
  EXPECT_EQ(udp_passed, int{kUdpBurst});
  EXPECT_EQ(syn_passed, 0);
  EXPECT_EQ(dp().state_count(), 6u);
}

TEST_F(ProgTest, EachClassHasItsOwnPrefix) {
  Controller ctl(dp());
  ctl.install(udp_syn_policy(24, 32, 48, 128));
  // IPv4: one /24 bucket for UDP, /32 buckets for SYNs, for the same two addresses.
  const Bytes udp_a = udp_from("198.18.2.1", 53), udp_b = udp_from("198.18.2.2", 53);
  const Bytes syn_a = tcp_from("198.18.2.1", 80, kTcpSyn), syn_b = tcp_from("198.18.2.2", 80, kTcpSyn);
  EXPECT_EQ(passes(dp(), udp_a, 3), 3);
  EXPECT_EQ(passes(dp(), udp_b, 5), int{kUdpBurst} - 3) << "b shares a's /24 in the UDP class";
  EXPECT_EQ(passes(dp(), syn_a, 5), int{kSynBurst});
  EXPECT_EQ(passes(dp(), syn_b, 5), int{kSynBurst}) << "b has its own /32 in the SYN class";
  EXPECT_EQ(passes(dp(), udp_from("198.18.3.1", 53), 6), int{kUdpBurst}) << "the next /24 is another source";
  const auto shared = dp().state(source_key("198.18.2.0", 24, kUdp));
  ASSERT_TRUE(shared);
  EXPECT_EQ(LV_COUNT_PACKETS(shared->passed), kUdpBurst);
  EXPECT_TRUE(dp().state(source_key("198.18.2.1", 32, kSyn)));
  EXPECT_TRUE(dp().state(source_key("198.18.2.2", 32, kSyn)));
  EXPECT_FALSE(dp().state(source_key("198.18.2.1", 32, kUdp)));

  // IPv6: /48 for UDP, /128 for SYNs.
  const Bytes udp6_a = udp_from("2001:db8:2:1::1", 53), udp6_b = udp_from("2001:db8:2:ffff::2", 53);
  const Bytes syn6_a = tcp_from("2001:db8:2:1::1", 80, kTcpSyn), syn6_b = tcp_from("2001:db8:2:1::2", 80, kTcpSyn);
  EXPECT_EQ(passes(dp(), udp6_a, 2), 2);
  EXPECT_EQ(passes(dp(), udp6_b, 5), int{kUdpBurst} - 2) << "one /48";
  EXPECT_EQ(passes(dp(), syn6_a, 5), int{kSynBurst});
  EXPECT_EQ(passes(dp(), syn6_b, 5), int{kSynBurst}) << "same /64, but /128 in the SYN class";
  EXPECT_TRUE(dp().state(source_key("2001:db8:2::", 48, kUdp)));
  EXPECT_TRUE(dp().state(source_key("2001:db8:2:1::2", 128, kSyn)));
}

TEST_F(ProgTest, DefaultIpv6PrefixIsOneSlash64) {
  Controller ctl(dp());
  ctl.install(udp_syn_policy());
  EXPECT_EQ(passes(dp(), udp_from("2001:db8:4::1", 53), 2), 2);
  EXPECT_EQ(passes(dp(), udp_from("2001:db8:4::ffff:2", 53), 5), int{kUdpBurst} - 2) << "same /64";
  EXPECT_EQ(passes(dp(), udp_from("2001:db8:4:1::1", 53), 6), int{kUdpBurst}) << "the next /64";
}

// ---- counters --------------------------------------------------------------------------

TEST_F(ProgTest, PerClassAndPerSourceCountersAreExact) {
  Policy p;
  p.classes = {
      class_spec("dns", on({Proto::Udp}, {{53, 53}}), {1, 4}),
      class_spec("syn", on({Proto::Tcp}, {}, true), {1, 2}),
      class_spec("default", Match{}, {1, 3}),
  };
  Controller ctl(dp());
  ctl.install(p);
  const std::string src = "198.18.5.5";
  Datapath::ClassCounters want{};
  Counters want_reason{};
  uint64_t dns_passed_bytes = 0;
  // DNS: five sizes, the fifth over the burst of 4.
  for (size_t payload : {10u, 100u, 333u, 1000u, 1400u}) {
    const Bytes f = udp_from(src, 53, payload);
    const Outcome o = dp().send(f);
    lv_counter& c = o.verdict == kPass ? want[0].passed : want[0].dropped;
    c.packets++;
    c.bytes += f.size();
    want_reason[o.reason].packets++;
    want_reason[o.reason].bytes += f.size();
    if (o.verdict == kPass) dns_passed_bytes += f.size();
  }
  EXPECT_EQ(want[0].passed.packets, 4u);
  EXPECT_EQ(want[0].dropped.packets, 1u);
  // SYN: 2 of 6 pass.
  const Bytes syn = tcp_from(src, 443, kTcpSyn, 7);
  EXPECT_EQ(passes(dp(), syn, 6), 2);
  want[1].passed = {2, 2 * syn.size()};
  want[1].dropped = {4, 4 * syn.size()};
  want_reason[LV_R_CONFORMING].packets += 2;
  want_reason[LV_R_CONFORMING].bytes += 2 * syn.size();
  want_reason[LV_R_RATE].packets += 4;
  want_reason[LV_R_RATE].bytes += 4 * syn.size();
  // Default: GRE, 3 of a 1000-packet run.
  const Bytes gre = ip_proto_from(src, 47, 200);
  EXPECT_EQ(run_passes(dp(), gre, 1000), 3u);
  want[2].passed = {3, 3 * gre.size()};
  want[2].dropped = {997, 997 * gre.size()};
  want_reason[LV_R_CONFORMING].packets += 3;
  want_reason[LV_R_CONFORMING].bytes += 3 * gre.size();
  want_reason[LV_R_RATE].packets += 997;
  want_reason[LV_R_RATE].bytes += 997 * gre.size();

  const auto got = dp().class_counters();
  for (size_t i = 0; i < LV_MAX_CLASSES; ++i) {
    SCOPED_TRACE("class " + std::to_string(i));
    EXPECT_EQ(got[i].passed.packets, want[i].passed.packets);
    EXPECT_EQ(got[i].passed.bytes, want[i].passed.bytes);
    EXPECT_EQ(got[i].dropped.packets, want[i].dropped.packets);
    EXPECT_EQ(got[i].dropped.bytes, want[i].dropped.bytes);
  }
  const Counters reasons = dp().counters();
  for (uint32_t r = 0; r < LV_REASON_MAX; ++r) {
    EXPECT_EQ(reasons[r].packets, want_reason[r].packets) << reason_name(r);
    EXPECT_EQ(reasons[r].bytes, want_reason[r].bytes) << reason_name(r);
  }

  // Per source: passed packs packets low, bytes high.
  const auto sd = dp().state(source_key(src, 32, 0));
  ASSERT_TRUE(sd);
  EXPECT_EQ(sd->passed, 4u | dns_passed_bytes << 32);
  const auto ss = dp().state(source_key(src, 32, 1));
  ASSERT_TRUE(ss);
  EXPECT_EQ(ss->passed, 2u | uint64_t{2 * syn.size()} << 32);
}

// After a flood, the source's dropped count is every drop but those still pending in a
// CPU's hot entry (at most LV_HOT_MAX_HITS per CPU), all of the flood's frame size.
class DroppedAfterFlood : public ProgTest, public ::testing::WithParamInterface<bool> {};

TEST_P(DroppedAfterFlood, StateCountsEveryDropButThosePendingPerCpu) {
  const bool fast = GetParam();
  Policy p;
  p.classes = {class_spec("default", Match{}, {1, 3})};
  Controller ctl(dp());
  CompiledPolicy c = ctl.install(p);
  ASSERT_TRUE(c.slot.classes[0].flags & LV_CLASS_FAST_REJECT);
  if (!fast) {
    c.slot.classes[0].flags &= ~uint32_t{LV_CLASS_FAST_REJECT};
    ctl.publish(c);
  }
  const std::string src = "198.18.6.6";
  const lv_key key = source_key(src, 32, 0);
  const Bytes f = udp_from(src, 9999, 100);
  constexpr int kFlood = 10'000;
  for (int round = 0; round < 3; ++round) {  // three runs: each may land on any CPU
    ASSERT_EQ(dp().run(f, kFlood).err, 0);
  }
  const uint64_t drops = 3 * kFlood - 3;
  ASSERT_EQ(dp().counters()[LV_R_RATE].packets, drops);
  const auto st = dp().state(key);
  ASSERT_TRUE(st);
  uint64_t pending = 0;
  const auto cpus = dp().percpu();
  const uint64_t gen = ctl.active().generation;
  for (const lv_hot& h : dp().hot(key))
    if (same_key(h.key, key) && h.generation == gen) pending += h.hits;
  EXPECT_LE(pending, LV_HOT_MAX_HITS * cpus.size());
  EXPECT_EQ(LV_COUNT_PACKETS(st->dropped), drops - pending);
  EXPECT_EQ(LV_COUNT_BYTES(st->dropped), (drops - pending) * f.size());
  EXPECT_EQ(st->passed, 3u | uint64_t{3 * f.size()} << 32);
}

INSTANTIATE_TEST_SUITE_P(FastReject, DroppedAfterFlood, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "On" : "Off"; });

// ---- live changes ----------------------------------------------------------------------

TEST_F(ProgTest, PublishingNewLimitsKeepsEachSourcesState) {
  Policy p = udp_syn_policy();
  Controller ctl(dp());
  ctl.install(p);
  const std::string src = "198.18.7.7";
  const Bytes udp = udp_from(src, 53), syn = tcp_from(src, 22, kTcpSyn);
  const lv_key ku = source_key(src, 32, kUdp), ks = source_key(src, 32, kSyn);
  ASSERT_EQ(passes(dp(), udp, 3), 3);  // 2 of 5 left
  ASSERT_EQ(passes(dp(), syn, 5), int{kSynBurst});
  const lv_state u0 = *dp().state(ku), s0 = *dp().state(ks);
  const uint64_t gen0 = ctl.active().generation;

  // A larger burst for UDP: the state is kept as it was, so the source has the 2 it had
  // left (unused credit is never created by a change), while a new source gets 10.
  p.classes[kUdp].packets = {1, 10};
  ctl.publish(p);
  EXPECT_EQ(ctl.active().generation, gen0 + 1);
  EXPECT_EQ(ctl.active().classes[kUdp].pkt.burst, 10u);
  const lv_state u1 = *dp().state(ku);
  EXPECT_EQ(u1.ready_ns, u0.ready_ns);
  EXPECT_EQ(u1.ready_bytes_ns, u0.ready_bytes_ns);
  EXPECT_EQ(u1.passed, u0.passed);
  const lv_state s1 = *dp().state(ks);
  EXPECT_EQ(std::memcmp(&s1, &s0, sizeof s0), 0) << "the SYN state is untouched";
  EXPECT_EQ(passes(dp(), udp, 5), 2);
  EXPECT_EQ(passes(dp(), udp_from("198.18.7.8", 53), 12), 10);
  EXPECT_EQ(passes(dp(), syn, 3), 0) << "SYN still spent";

  // A smaller burst: credit is capped by the new one.
  const Bytes udp2 = udp_from("198.18.7.9", 53);
  ASSERT_EQ(passes(dp(), udp2, 3), 3);  // 7 of 10 left
  p.classes[kUdp].packets = {1, 2};
  ctl.publish(p);
  EXPECT_EQ(passes(dp(), udp2, 5), 2) << "capped at the new burst of 2";
  EXPECT_EQ(LV_COUNT_PACKETS(dp().state(source_key("198.18.7.9", 32, kUdp))->passed), 5u);
}

// lv_hot: the entry a CPU keeps of its last rejected source is dropped by a publish.
TEST_F(ProgTest, PublishInvalidatesTheHotEntry) {
  Policy p;
  p.classes = {class_spec("default", Match{}, {1, 2})};
  Controller ctl(dp());
  ctl.install(p);
  ASSERT_TRUE(ctl.active().classes[0].flags & LV_CLASS_FAST_REJECT);
  const std::string src = "198.18.8.8";
  const Bytes f = udp_from(src, 53);
  const lv_key key = source_key(src, 32, 0);
  ASSERT_EQ(passes(dp(), f, 5), 2);  // rejected three times: hot, two pending

  // The state moves back behind the datapath's back (no publish): the hot entry still
  // rejects on the value it remembered.
  lv_state st = *dp().state(key);
  st.ready_ns = monotonic_ns() - 10 * kSec;
  ASSERT_EQ(bpf_map_update_elem(dp().state_fd(), &key, &st, BPF_ANY), 0);
  EXPECT_EQ(dp().send(f), kRateDrop) << "rejected from the hot entry";
  bool hot = false;
  for (const lv_hot& h : dp().hot(key)) hot |= same_key(h.key, key) && h.hits > 0;
  ASSERT_TRUE(hot);

  // The same policy published again: a new generation, the next packet takes the real
  // path and sees the state as it is.
  const uint64_t gen = ctl.active().generation;
  ctl.publish(p);
  ASSERT_EQ(ctl.active().generation, gen + 1);
  EXPECT_EQ(dp().send(f), kConforming);

  // Hot again, then the class loses its packet limit (bytes only now): the remembered
  // packet-limit rejection must not outlive the publish.
  ASSERT_EQ(passes(dp(), f, 5), 1) << "the second of the burst of 2";
  p.classes[0].packets = {};
  p.classes[0].bytes = {1'000'000, 1'000'000};
  ctl.publish(p);
  ASSERT_TRUE(ctl.active().classes[0].flags & LV_CLASS_FAST_REJECT);
  EXPECT_EQ(dp().send(f), kConforming);
  EXPECT_EQ(dp().send(f), kConforming);
}

}  // namespace
}  // namespace levee::progtest
