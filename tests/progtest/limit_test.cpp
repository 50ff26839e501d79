// limit_test.cpp - the per-source limit in the kernel: buckets, grouping, state.
//
// Rates of 1 packet/s make the expected counts exact: a test that sends a burst's worth
// of frames in well under a second sees no refill.
#include <linux/bpf.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "limiter.h"
#include "packet.hpp"

namespace levee::progtest {
namespace {

using pkt::Frame;
using Bytes = std::vector<uint8_t>;

constexpr uint32_t kPass = XDP_PASS, kDrop = XDP_DROP;
constexpr uint64_t kSec = LV_NSEC_PER_SEC;

Bytes udp4_from(const std::string& src) {
  return Frame().eth().ipv4(src, "198.19.0.1").udp(1000, 53).payload(18).bytes();
}
Bytes udp6_from(const std::string& src) {
  return Frame().eth().ipv6(src, "2001:db8:ffff::1").udp(1000, 53).payload(18).bytes();
}

// Run one frame once and return its verdict (asserting the run itself worked).
uint32_t verdict(Datapath& dp, const Bytes& frame) {
  const RunResult r = dp.run(frame);
  EXPECT_EQ(r.err, 0);
  return r.retval;
}

// Send `n` single frames; return how many passed.
int passes(Datapath& dp, const Bytes& frame, int n) {
  int passed = 0;
  for (int i = 0; i < n; ++i) passed += verdict(dp, frame) == kPass;
  return passed;
}

TEST_F(ProgTest, BurstPassesThenRateDropsAndOtherSourcesAreUnaffected) {
  constexpr int kBurst = 5;
  dp().set_class(make_class(1, kBurst));
  const Bytes a = udp4_from("198.18.0.1"), b = udp4_from("198.18.0.2");
  for (int i = 0; i < kBurst; ++i) ASSERT_EQ(verdict(dp(), a), kPass) << "packet " << i;
  EXPECT_EQ(verdict(dp(), a), kDrop);
  EXPECT_EQ(verdict(dp(), a), kDrop);
  EXPECT_EQ(verdict(dp(), b), kPass) << "another source has its own bucket";
  const Counters c = dp().counters();
  EXPECT_EQ(c[LV_R_CONFORMING].packets, kBurst + 1u);
  EXPECT_EQ(c[LV_R_CONFORMING].bytes, (kBurst + 1u) * a.size());
  EXPECT_EQ(c[LV_R_RATE].packets, 2u);
  EXPECT_EQ(c[LV_R_RATE].bytes, 2u * a.size());
  EXPECT_EQ(dp().state_count(), 2u);
}

TEST_F(ProgTest, RepeatedRunCountsEveryRepetition) {
  dp().set_class(make_class(1, 7));
  const Bytes f = udp6_from("2001:db8::7");
  const RunResult r = dp().run(f, 20);
  ASSERT_EQ(r.err, 0);
  EXPECT_EQ(r.retval, kDrop) << "the last of 20 is over the burst of 7";
  const Counters c = dp().counters();
  EXPECT_EQ(c[LV_R_CONFORMING].packets, 7u);
  EXPECT_EQ(c[LV_R_CONFORMING].bytes, 7u * f.size());
  EXPECT_EQ(c[LV_R_RATE].packets, 13u);
  EXPECT_EQ(c[LV_R_RATE].bytes, 13u * f.size());
}

// ---- nothing gets around the limit of its source -----------------------------------

struct Variant {
  const char* name;
  Bytes frame;
};

std::vector<Variant> variants4(const std::string& s) {
  const std::string d = "198.19.0.1";
  return {
      {"options", Frame().eth().ipv4(s, d, {0x94, 0x04, 0, 0}).udp(1, 2).bytes()},
      {"first fragment", Frame().eth().ipv4(s, d).ipv4_fragment(0, true).udp(1, 2).payload(32).bytes()},
      {"later fragment", Frame().eth().ipv4(s, d).ipv4_fragment(185, false).payload(64).bytes()},
      {"802.1Q", Frame().eth().vlan(10).ipv4(s, d).udp(1, 2).bytes()},
      {"QinQ", Frame().eth().vlan(10, 0x88a8).vlan(20).ipv4(s, d).udp(1, 2).bytes()},
      {"TCP", Frame().eth().ipv4(s, d).tcp(1, 2).bytes()},
      {"ICMP", Frame().eth().ipv4(s, d).icmp_echo().bytes()},
      {"padded", Frame().eth().ipv4(s, d).pad_to(60).bytes()},
  };
}

std::vector<Variant> variants6(const std::string& s) {
  const std::string d = "2001:db8:ffff::1";
  return {
      {"hop-by-hop", Frame().eth().ipv6(s, d).ipv6_ext(0).udp(1, 2).bytes()},
      {"routing", Frame().eth().ipv6(s, d).ipv6_ext(43).udp(1, 2).bytes()},
      {"destination options", Frame().eth().ipv6(s, d).ipv6_ext(60).udp(1, 2).bytes()},
      {"first fragment", Frame().eth().ipv6(s, d).ipv6_frag(0, true).udp(1, 2).payload(32).bytes()},
      {"later fragment", Frame().eth().ipv6(s, d).ipv6_frag(185, false, 7).payload(64).bytes()},
      {"extension chain", Frame().eth().ipv6(s, d).ipv6_ext(0).ipv6_ext(60).ipv6_frag(0, false).udp(1, 2).bytes()},
      {"802.1Q", Frame().eth().vlan(10).ipv6(s, d).udp(1, 2).bytes()},
      {"ICMPv6", Frame().eth().ipv6(s, d).icmp6_echo().bytes()},
  };
}

TEST_F(ProgTest, OptionsFragmentsExtensionHeadersAndTagsShareTheSourceBucket) {
  constexpr int kBurst = 3;
  dp().set_class(make_class(1, kBurst));
  int n = 0;
  auto check = [&](const Bytes& plain, const Variant& v, const Bytes& variant_again) {
    SCOPED_TRACE(v.name);
    // Plain packets use up the burst; the variant is then over the limit.
    for (int i = 0; i < kBurst; ++i) ASSERT_EQ(verdict(dp(), plain), kPass);
    EXPECT_EQ(verdict(dp(), v.frame), kDrop) << "variant after the burst";
    // And the other way round, on another source: variants use it up, plain is dropped.
    for (int i = 0; i < kBurst; ++i) ASSERT_EQ(verdict(dp(), variant_again), kPass);
    ++n;
  };
  for (int i = 0; i < 8; ++i) {
    const std::string s = "198.18.1." + std::to_string(i + 1), t = "198.18.2." + std::to_string(i + 1);
    const Variant v = variants4(s)[static_cast<size_t>(i)];
    const Bytes again = variants4(t)[static_cast<size_t>(i)].frame;
    check(udp4_from(s), v, again);
    EXPECT_EQ(verdict(dp(), udp4_from(t)), kDrop) << v.name << ": plain after the variant's burst";
  }
  for (int i = 0; i < 8; ++i) {
    const std::string s = "2001:db8:1:" + std::to_string(i + 1) + "::1",
                      t = "2001:db8:2:" + std::to_string(i + 1) + "::1";
    const Variant v = variants6(s)[static_cast<size_t>(i)];
    const Bytes again = variants6(t)[static_cast<size_t>(i)].frame;
    check(udp6_from(s), v, again);
    EXPECT_EQ(verdict(dp(), udp6_from(t)), kDrop) << v.name << ": plain after the variant's burst";
  }
  EXPECT_EQ(n, 16);
  EXPECT_EQ(dp().counters()[LV_R_RATE].packets, 32u);
}

// ---- grouping by prefix --------------------------------------------------------------

// Sources in one prefix share one bucket; the next prefix over has its own. Each
// prefix length is picked so the pair differs in the mask word that matters.
struct Grouping {
  const char* name;
  unsigned prefix4, prefix6;
  const char *a, *b;  // same prefix
  const char* c;      // the neighbouring prefix, if it is in the documentation ranges
  const char* key;    // the masked address the state is kept under
};

class PrefixGrouping : public ProgTest, public ::testing::WithParamInterface<Grouping> {};

void PrintTo(const Grouping& g, std::ostream* os) { *os << g.name; }

TEST_P(PrefixGrouping, OnePrefixIsOneSource) {
  const Grouping& g = GetParam();
  const bool v6 = std::string_view(g.a).find(':') != std::string_view::npos;
  const lv_class cls = make_class(1, 2, g.prefix4, g.prefix6);
  dp().set_class(cls);
  auto frame = [&](const char* src) { return v6 ? udp6_from(src) : udp4_from(src); };
  EXPECT_EQ(verdict(dp(), frame(g.a)), kPass);
  EXPECT_EQ(verdict(dp(), frame(g.b)), kPass);
  EXPECT_EQ(verdict(dp(), frame(g.a)), kDrop) << g.a << " and " << g.b << " share one bucket of 2";
  EXPECT_EQ(verdict(dp(), frame(g.b)), kDrop);
  if (g.c) {
    EXPECT_EQ(passes(dp(), frame(g.c), 3), 2) << g.c << " is another source";
  }
  EXPECT_EQ(dp().state_count(), g.c ? 2u : 1u);
  const lv_key key = v6 ? key6(g.key, cls) : key4(g.key, cls);
  EXPECT_TRUE(dp().state(key).has_value()) << "state under " << g.key;
}

INSTANTIATE_TEST_SUITE_P(
    Prefixes, PrefixGrouping,
    ::testing::Values(
        Grouping{"V4Slash15", 15, 64, "198.18.0.1", "198.19.255.254", nullptr, "198.18.0.0"},
        Grouping{"V4Slash16", 16, 64, "198.18.0.1", "198.18.255.1", "198.19.0.1", "198.18.0.0"},
        Grouping{"V4Slash24", 24, 64, "198.18.5.1", "198.18.5.254", "198.18.6.1", "198.18.5.0"},
        Grouping{"V4Slash31", 31, 64, "198.18.0.4", "198.18.0.5", "198.18.0.6", "198.18.0.4"},
        Grouping{"V6Slash32", 32, 32, "2001:db8:1::1", "2001:db8:ffff:ffff::1", nullptr, "2001:db8::"},
        Grouping{"V6Slash33", 32, 33, "2001:db8:1::1", "2001:db8:7fff::1", "2001:db8:8000::1", "2001:db8::"},
        Grouping{"V6Slash48", 32, 48, "2001:db8:1:2::1", "2001:db8:1:ffff::5", "2001:db8:2:2::1", "2001:db8:1::"},
        Grouping{"V6Slash64", 32, 64, "2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:3::1",
                 "2001:db8:1:2::"},
        Grouping{"V6Slash96", 32, 96, "2001:db8:1:2:3:4::1", "2001:db8:1:2:3:4:ffff:ffff", "2001:db8:1:2:3:5::1",
                 "2001:db8:1:2:3:4::"},
        Grouping{"V6Slash127", 32, 127, "2001:db8::10", "2001:db8::11", "2001:db8::12", "2001:db8::10"}),
    [](const ::testing::TestParamInfo<Grouping>& info) { return info.param.name; });

TEST_F(ProgTest, Ipv4SlashThirtyTwoSeparatesHosts) {
  const lv_class cls = make_class(1, 2, 32, 64);
  dp().set_class(cls);
  EXPECT_EQ(passes(dp(), udp4_from("198.18.5.1"), 3), 2);
  EXPECT_EQ(passes(dp(), udp4_from("198.18.5.254"), 3), 2);
  EXPECT_TRUE(dp().state(key4("198.18.5.1", cls)).has_value());
  EXPECT_TRUE(dp().state(key4("198.18.5.254", cls)).has_value());
  EXPECT_FALSE(dp().state(key4("198.18.5.0", cls)).has_value());
}

TEST_F(ProgTest, Ipv6SlashOneTwentyEightSeparatesHosts) {
  const lv_class cls = make_class(1, 2, 32, 128);
  dp().set_class(cls);
  EXPECT_EQ(passes(dp(), udp6_from("2001:db8:1:2::1"), 3), 2);
  EXPECT_EQ(passes(dp(), udp6_from("2001:db8:1:2:ffff:ffff:ffff:ffff"), 3), 2);
  EXPECT_EQ(passes(dp(), udp6_from("2001:db8:1:2::2"), 3), 2);
  EXPECT_EQ(dp().state_count(), 3u);
  EXPECT_TRUE(dp().state(key6("2001:db8:1:2::2", cls)).has_value());
}

TEST_F(ProgTest, Ipv4MappedIpv6SourceIsNotTheIpv4Host) {
  for (unsigned prefix6 : {128u, 96u, 64u}) {
    SCOPED_TRACE(testing::Message() << "prefix6 " << prefix6);
    Datapath fresh;
    const lv_class cls = make_class(1, 2, 32, prefix6);
    fresh.set_class(cls);
    EXPECT_EQ(passes(fresh, udp4_from("198.18.0.5"), 3), 2);
    EXPECT_EQ(passes(fresh, udp6_from("::ffff:198.18.0.5"), 3), 2) << "its own bucket, not the IPv4 one";
    EXPECT_EQ(fresh.state_count(), 2u);
    const lv_key k4 = key4("198.18.0.5", cls), k6 = key6("::ffff:198.18.0.5", cls);
    EXPECT_TRUE(fresh.state(k4).has_value());
    EXPECT_TRUE(fresh.state(k6).has_value());
    if (prefix6 == 128) {
      // Same address bytes in the key, told apart by the family alone.
      EXPECT_EQ(std::memcmp(k4.addr, k6.addr, sizeof(k4.addr)), 0);
    }
  }
}

// ---- the state the kernel keeps ----------------------------------------------------------

TEST_F(ProgTest, StateIsTheEarliestEligibleTime) {
  const lv_class cls = make_class(1, 3);  // T = 1 s, tau = 2 s
  const lv_limit& l = cls.pkt;
  dp().set_class(cls);
  const Bytes f = udp4_from("198.18.3.3");
  const lv_key key = key4("198.18.3.3", cls);

  // First packet: ready = lv_gcra_first(now), with now between our two clock reads
  // (bpf_ktime_get_ns is CLOCK_MONOTONIC).
  uint64_t t0 = monotonic_ns();
  ASSERT_EQ(verdict(dp(), f), kPass);
  uint64_t t1 = monotonic_ns();
  auto st = dp().state(key);
  ASSERT_TRUE(st);
  const uint64_t first = st->ready_ns;
  EXPECT_GE(first, lv_gcra_first(t0, &l));
  EXPECT_LE(first, lv_gcra_first(t1, &l));
  EXPECT_EQ(st->ready_bytes_ns, 0u) << "no byte limit";
  EXPECT_EQ(LV_COUNT_PACKETS(st->passed), 1u);
  EXPECT_EQ(LV_COUNT_BYTES(st->passed), f.size());
  EXPECT_EQ(st->dropped, 0u);

  // Two more within the burst: each moves ready by exactly one interval.
  ASSERT_EQ(verdict(dp(), f), kPass);
  EXPECT_EQ(dp().state(key)->ready_ns, first + l.cost);
  ASSERT_EQ(verdict(dp(), f), kPass);
  const uint64_t exhausted = dp().state(key)->ready_ns;
  EXPECT_EQ(exhausted, first + 2 * l.cost);
  EXPECT_EQ(exhausted, lv_gcra_after_pass(first + l.cost, monotonic_ns(), &l));

  // Over the limit: dropped, and the drop writes nothing.
  ASSERT_EQ(verdict(dp(), f), kDrop);
  EXPECT_EQ(dp().state(key)->ready_ns, exhausted);
  const uint64_t wait = lv_gcra_wait(exhausted, monotonic_ns());
  EXPECT_GT(wait, 0u);
  EXPECT_LE(wait, l.cost);
}

TEST_F(ProgTest, StateWrittenFromOutsideIsHonoured) {
  // The kernel applies limiter.h to whatever the state holds: an idle source gets a
  // full (capped) bucket, a partly used one keeps its queue, a future one is refused.
  for (bool fast : {false, true}) {
    SCOPED_TRACE(fast ? "fast reject" : "fine clock only");
    Datapath d;
    const lv_class cls = make_class(1, 3, 32, 64, fast);  // T = 1 s, tau = 2 s
    const lv_limit& l = cls.pkt;
    d.set_class(cls);
    const Bytes f = udp4_from("198.18.4.4");
    const lv_key key = key4("198.18.4.4", cls);

    d.put_state(key, lv_state{monotonic_ns() - 3600 * kSec, 0, 0, 0});  // idle an hour
    uint64_t t0 = monotonic_ns();
    ASSERT_EQ(verdict(d, f), kPass);
    uint64_t t1 = monotonic_ns();
    EXPECT_GE(d.state(key)->ready_ns, t0 - l.tau_ns + l.cost) << "credit capped at tau";
    EXPECT_LE(d.state(key)->ready_ns, t1 - l.tau_ns + l.cost);
    EXPECT_EQ(passes(d, f, 5), 2) << "burst 3 in all";

    const uint64_t half_used = monotonic_ns() - 3 * kSec / 2;  // 1.5 s of credit: 2 tokens
    d.put_state(key, lv_state{half_used, 0, 0, 0});
    ASSERT_EQ(verdict(d, f), kPass);
    EXPECT_EQ(d.state(key)->ready_ns, half_used + l.cost) << "queued behind its own credit";
    ASSERT_EQ(verdict(d, f), kPass);
    EXPECT_EQ(verdict(d, f), kDrop);

    const uint64_t future = monotonic_ns() + 100 * kSec;
    d.put_state(key, lv_state{future, 0, 0, 0});
    EXPECT_EQ(passes(d, f, 50), 0);
    EXPECT_EQ(d.state(key)->ready_ns, future);
  }
}

// ---- FAST_REJECT changes the cost of a drop, not the verdicts --------------------------------

TEST_F(ProgTest, FastRejectGivesTheSameVerdictsAtALowRate) {
  const lv_class with = make_class(1, 5, 32, 64, true), without = make_class(1, 5, 32, 64, false);
  ASSERT_TRUE(make_class(1, 5).flags & LV_CLASS_FAST_REJECT) << "tau 4 s covers any tick";
  Datapath a, b;
  a.set_class(with);
  b.set_class(without);
  const Bytes f = udp4_from("198.18.9.9");
  std::vector<uint32_t> va, vb;
  for (int i = 0; i < 200; ++i) {
    va.push_back(verdict(a, f));
    vb.push_back(verdict(b, f));
  }
  EXPECT_EQ(va, vb);
  EXPECT_EQ(std::count(va.begin(), va.begin() + 5, kPass), 5);
  EXPECT_EQ(std::count(va.begin() + 5, va.end(), kDrop), 195);

  // A flood on each, one after the other. (A run with repeat > 1 costs ~20 ms of fixed
  // kernel time: it swaps the XDP dispatcher, which waits for an RCU grace period.)
  const Bytes g = udp4_from("198.18.9.10");
  const uint64_t t0 = monotonic_ns();
  ASSERT_EQ(a.run(g, 200'000).err, 0);
  ASSERT_EQ(b.run(g, 200'000).err, 0);
  const uint64_t elapsed = monotonic_ns() - t0;
  const uint64_t limit = 5 + elapsed / kSec;  // one refill per second
  for (Datapath* d : {&a, &b}) {
    const Counters c = d->counters();
    EXPECT_GE(c[LV_R_CONFORMING].packets, 5u + 5u);
    EXPECT_LE(c[LV_R_CONFORMING].packets, 5u + limit);
    EXPECT_EQ(c[LV_R_CONFORMING].packets + c[LV_R_RATE].packets, 200u + 200'000u) << describe(c);
  }
  if (elapsed < kSec / 2) {  // no refill can have happened on either
    EXPECT_EQ(a.counters()[LV_R_CONFORMING].packets, 10u);
    EXPECT_EQ(b.counters()[LV_R_CONFORMING].packets, 10u);
  }
}

// The CPU that ran the last packet: the one whose counters are not all zero.
const lv_percpu* cpu_that_ran(const std::vector<lv_percpu>& pcs) {
  const lv_percpu* found = nullptr;
  for (const lv_percpu& pc : pcs)
    for (const lv_counter& c : pc.by_reason)
      if (c.packets) found = &pc;
  return found;
}

TEST_F(ProgTest, FastRejectTrustsTheCachedClockOnlyToReject) {
  // The per-CPU cached clock is a lower bound of now. Made stale on purpose (10 s old,
  // stamped with the current jiffies so the program trusts it) on a CPU busy with
  // packets, it rejects a packet the fine clock would admit: levee is stricter by the
  // cache's staleness, never looser. A cache that says "eligible" always leads to a
  // fine read before passing.
  if (!kernel_jiffies()) GTEST_SKIP() << "no jiffies in /proc/timer_list";
  const Bytes f = udp4_from("198.18.8.8");
  for (bool fast : {true, false}) {
    SCOPED_TRACE(fast ? "fast reject" : "fine clock only");
    Datapath d;
    const lv_class cls = make_class(1, 3, 32, 64, fast);
    d.set_class(cls);
    const lv_key key = key4("198.18.8.8", cls);
    int trusted = 0, refreshed = 0;
    for (int attempt = 0; attempt < 200 && trusted < 3; ++attempt) {
      const uint64_t now = monotonic_ns();
      const uint64_t eligible = now - 1'000'000;  // by the fine clock, eligible 1 ms ago
      d.put_state(key, lv_state{eligible, 0, 0, 0});
      lv_percpu stale{};  // also zeroes the counters
      stale.clock.ns = now - 10 * kSec;
      stale.clock.jiffies = *kernel_jiffies();
      stale.clock.busy = LV_CLOCK_BUSY_PKTS;
      d.put_percpu(stale);
      const uint32_t v = verdict(d, f);
      const auto pcs = d.percpu();
      const lv_percpu* pc = cpu_that_ran(pcs);
      ASSERT_NE(pc, nullptr);
      const bool cache_kept = pc->clock.ns == stale.clock.ns && pc->clock.jiffies == stale.clock.jiffies;
      if (fast && cache_kept) {
        ++trusted;
        EXPECT_EQ(v, kDrop) << "rejected on the stale lower bound";
        EXPECT_EQ(pc->by_reason[LV_R_RATE].packets, 1u);
        EXPECT_EQ(pc->clock.uses, 1u);
        EXPECT_EQ(d.state(key)->ready_ns, eligible) << "the drop path writes nothing";
      } else {
        // Jiffies moved (or no fast reject): the fine clock decided, and refreshed the cache.
        ++refreshed;
        EXPECT_EQ(v, kPass);
        EXPECT_GE(pc->clock.ns, now);
        EXPECT_EQ(pc->clock.uses, 0u);
        EXPECT_EQ(d.state(key)->ready_ns, eligible + cls.pkt.cost);
        if (!fast && refreshed >= 3) break;
      }
    }
    if (fast)
      EXPECT_EQ(trusted, 3) << "could not catch jiffies still in 200 tries";
    else
      EXPECT_EQ(trusted, 0);

    // A fresh cache that says eligible: the fine clock confirms and the packet passes.
    const uint64_t now = monotonic_ns();
    d.put_state(key, lv_state{now - 1'000'000, 0, 0, 0});
    lv_percpu fresh{};
    fresh.clock.ns = now;
    fresh.clock.jiffies = *kernel_jiffies();
    fresh.clock.busy = LV_CLOCK_BUSY_PKTS;
    d.put_percpu(fresh);
    EXPECT_EQ(verdict(d, f), kPass);
  }
}

TEST_F(ProgTest, AQuietCpuJudgesOnTheFineClock) {
  // The same stale reading on a CPU that has run few packets since jiffies moved is not
  // trusted: the packet, eligible by the fine clock, passes, and the reading is renewed.
  if (!kernel_jiffies()) GTEST_SKIP() << "no jiffies in /proc/timer_list";
  const lv_class cls = make_class(1, 3);
  ASSERT_TRUE(cls.flags & LV_CLASS_FAST_REJECT);
  dp().set_class(cls);
  const Bytes f = udp4_from("198.18.8.9");
  const lv_key key = key4("198.18.8.9", cls);
  for (uint32_t busy : {0u, LV_CLOCK_BUSY_PKTS - 1u}) {
    SCOPED_TRACE("packets this tick " + std::to_string(busy));
    const uint64_t now = monotonic_ns();
    dp().put_state(key, lv_state{now - 1'000'000, 0, 0, 0});
    lv_percpu stale{};
    stale.clock.ns = now - 10 * kSec;
    stale.clock.jiffies = *kernel_jiffies();
    stale.clock.busy = busy;
    dp().put_percpu(stale);
    EXPECT_EQ(verdict(dp(), f), kPass);
    const auto pcs = dp().percpu();
    const lv_percpu* pc = cpu_that_ran(pcs);
    ASSERT_NE(pc, nullptr);
    EXPECT_GE(pc->clock.ns, now) << "the fine clock was read";
  }
}

// Runs one frame on `cpu` (the calling thread pinned there meanwhile).
Outcome send_on_cpu(const Datapath& d, std::span<const uint8_t> frame, int cpu) {
  cpu_set_t all, one;
  if (sched_getaffinity(0, sizeof all, &all) != 0) throw std::runtime_error("sched_getaffinity");
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) throw std::runtime_error("cannot run on CPU " + std::to_string(cpu));
  const Outcome o = d.send(frame);
  sched_setaffinity(0, sizeof all, &all);
  return o;
}

TEST_F(ProgTest, ABurstPassesWholeWhenItsPacketsRunOnDifferentCpus) {
  // A client's back-to-back packets may be run by different CPUs. The last packet of a
  // burst is due exactly when the first was seen, so a clock reading the other CPU took
  // just before that must not decide it: every packet of the burst passes. Each trial
  // starts a tick after the last, on quiet CPUs as a client's burst meets them between
  // floods. (A CPU busy with a flood reuses a reading for a few packets: there the
  // burst's last packet can be refused early by that reading's age, a few microseconds.)
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs";
  const lv_class cls = make_class(4, 3);
  ASSERT_TRUE(cls.flags & LV_CLASS_FAST_REJECT);
  dp().set_class(cls);
  const Bytes other = udp4_from("198.18.7.1");
  for (int trial = 0; trial < 20; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const std::string src = "198.18.7." + std::to_string(10 + trial);
    const Bytes f = udp4_from(src);
    usleep(5'000);                // a tick (4 ms at HZ=250): the CPUs start it quiet
    send_on_cpu(dp(), other, 1);  // CPU 1 reads the clock
    ASSERT_EQ(send_on_cpu(dp(), f, 0).verdict, kPass);
    ASSERT_EQ(send_on_cpu(dp(), f, 0).verdict, kPass);
    const Outcome third = send_on_cpu(dp(), f, 1);
    EXPECT_EQ(third.verdict, kPass) << "the burst's third packet, on the other CPU: " << reason_name(third.reason);
    EXPECT_EQ(send_on_cpu(dp(), f, 1).verdict, kDrop) << "a fourth is over the burst";
  }
}

// ---- a class without a packet limit; a full map ----------------------------------------------

TEST_F(ProgTest, ClassWithoutPacketLimitPassesAllAndTracksNothing) {
  lv_class none = make_class(1, 1);
  none.pkt = lv_limit{};
  dp().set_class(none);
  const Bytes f = udp4_from("198.18.0.77");
  const RunResult r = dp().run(f, 1000);
  ASSERT_EQ(r.err, 0);
  EXPECT_EQ(r.retval, kPass);
  EXPECT_EQ(dp().counters()[LV_R_CONFORMING].packets, 1000u);
  EXPECT_EQ(dp().state_count(), 0u);
}

TEST_F(ProgTest, ManyNewSourcesEvictInsteadOfFailing) {
  // Three times as many sources as the map holds, each new: the LRU evicts the oldest,
  // so no packet ends as MAP_FULL. (An evicted source starts again with a full burst.)
  const lv_class cls = make_class(1, 1);
  dp().set_class(cls);
  const uint32_t n = 3 * dp().max_sources();
  ASSERT_LE(n, 65536u) << "stay inside 198.18.0.0/16";
  for (uint32_t i = 0; i < n; ++i) {
    const std::string src = "198.18." + std::to_string(i >> 8) + "." + std::to_string(i & 0xff);
    ASSERT_EQ(verdict(dp(), udp4_from(src)), kPass) << src;
  }
  const Counters c = dp().counters();
  EXPECT_EQ(c[LV_R_CONFORMING].packets, n);
  EXPECT_EQ(c[LV_R_MAP_FULL].packets, 0u);
  EXPECT_LE(dp().state_count(), dp().max_sources());
  EXPECT_GT(dp().state_count(), dp().max_sources() / 2);
  // The newest source is still tracked and still limited.
  const std::string last = "198.18." + std::to_string((n - 1) >> 8) + "." + std::to_string((n - 1) & 0xff);
  EXPECT_EQ(verdict(dp(), udp4_from(last)), kDrop);
}

}  // namespace
}  // namespace levee::progtest
