// autopilot_test.cpp - the autopilot in the kernel (struct lv_auto, bpf/arrival.h,
// bpf/watch.h): new sources admitted as before while the class is calm, on probation
// past the threshold, refused once it is engaged (but known-good ones), the allowance
// sources on probation share, promotion and release once calm, what a calm period
// teaches, and networks escalated by the watch and released.
//
// A floor of 1 new source/s with a tolerance of 10 ms makes every arrival after the
// first abnormal within a test. Time a test cannot wait for (a class calm for 30 s) is
// moved by rewriting the class's lv_shared, as the controller's release does.
#include <arpa/inet.h>
#include <linux/bpf.h>

#include <bit>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "datapath/known_good.hpp"
#include "guard.h"
#include "packet.hpp"
#include "policy/compile.hpp"

namespace levee::progtest {
namespace {

using pkt::Frame;
using Bytes = std::vector<uint8_t>;

constexpr uint64_t kSec = LV_NSEC_PER_SEC, kMs = 1000000;
constexpr Outcome kConforming{XDP_PASS, LV_R_CONFORMING}, kMonitored{XDP_PASS, LV_R_MONITORED},
    kAdmission{XDP_DROP, LV_R_ADMISSION}, kNewcomer{XDP_DROP, LV_R_NEWCOMER}, kEscalated{XDP_DROP, LV_R_ESCALATED};

Bytes udp4(const std::string& src) { return Frame().eth().ipv4(src, "198.19.0.1").udp(1000, 53).payload(18).bytes(); }
std::string host4(int net, int host) { return "198.18." + std::to_string(net) + "." + std::to_string(host); }

// The autopilot's settings for a test: everything but what the test is about is far away.
struct Auto {
  uint64_t floor = 1;            // new sources/s
  uint64_t burst_ns = 10 * kMs;  // under one arrival's worth at the floor: the second is abnormal
  uint64_t sustain_ns = 3600 * kSec;
  uint64_t release_ns = 30 * kSec;
};

// A class of rate/burst per source (1 packet/s refills nothing within a test) with the
// admission autopilot as `a` says.
lv_class auto_class(const Auto& a, uint64_t rate = 1, uint64_t burst = 5) {
  lv_class c = make_class(rate, burst);
  c.flags |= LV_CLASS_AUTO_ADMIT;
  c.autop.floor = static_cast<uint32_t>(a.floor);
  c.autop.floor_cost = (kSec + a.floor - 1) / a.floor;
  c.autop.burst_ns = a.burst_ns;
  c.autop.sustain_ns = a.sustain_ns;
  c.autop.release_ns = a.release_ns;
  c.autop.margin = 4;
  return c;
}

lv_key on_probation(lv_key k) {
  k.family |= LV_KEY_PROBATION;
  return k;
}

std::vector<lv_event> of_type(const std::vector<lv_event>& all, uint8_t type) {
  std::vector<lv_event> out;
  for (const lv_event& e : all)
    if (e.type == type) out.push_back(e);
  return out;
}

class Autopilot : public ProgTest {
 protected:
  // The class, with events on (1,000/s): the autopilot says what it does in them.
  void use(const lv_class& c) {
    dp().set_class(c);
    dp().edit_policy([](lv_policy& p) { p.events = compile_packet_limit(Rate{1000, 100}); });
  }
  lv_shared guard() { return dp().shared(0); }
  // Sources marked known-good as `levee run` marks them, in the pinned filter.
  void mark_good(const std::vector<lv_key>& keys) {
    Controller ctl(dp());
    const Pinned pins = dp().pinned("lvt");
    auto good = KnownGood::open(pins, ctl.map());
    ASSERT_TRUE(good) << good.error().message();
    for (const lv_key& k : keys) good->mark(k);
  }
  template <typename F>
  void edit_guard(F&& f) {
    lv_shared sh = dp().shared(0);
    f(sh);
    dp().put_shared(0, sh);
  }
  // The class calm again: its last abnormal moment further back than release_ns.
  void make_calm(const lv_class& c) {
    edit_guard([&](lv_shared& g) { g.last_over_ns = monotonic_ns() - c.autop.release_ns - kSec; });
  }
};

// ---- admission ----------------------------------------------------------------------

TEST_F(Autopilot, ACalmClassAdmitsEveryNewSourceAsWithoutIt) {
  Auto a;
  a.floor = 1000;
  a.burst_ns = kSec;  // 1,000 arrivals at once are still normal
  const lv_class c = auto_class(a);
  use(c);
  for (int i = 0; i < 300; ++i) ASSERT_EQ(dp().send(udp4(host4(1 + i / 250, i % 250 + 1))), kConforming) << i;
  EXPECT_EQ(dp().state_count(), 300u);
  for (int i = 0; i < 300; ++i) {
    const std::string src = host4(1 + i / 250, i % 250 + 1);
    ASSERT_TRUE(dp().state(key4(src, c))) << src << " has its state as a source";
  }
  const lv_shared g = guard();
  EXPECT_EQ(g.arrivals, 300u);
  EXPECT_EQ(g.probation, 0u);
  EXPECT_EQ(g.engaged_ns, 0u);
  EXPECT_EQ(g.last_over_ns, 0u);
  EXPECT_EQ(dp().shared(0).admitted, 300u);
}

TEST_F(Autopilot, AnArrivalOverTheThresholdGetsStateOnProbation) {
  const lv_class c = auto_class(Auto{});
  use(c);
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(dp().send(udp4(host4(1, i))), kConforming) << i;
  EXPECT_TRUE(dp().state(key4(host4(1, 1), c))) << "the first is within the threshold";
  for (int i = 2; i <= 5; ++i) {
    EXPECT_FALSE(dp().state(key4(host4(1, i), c))) << i;
    EXPECT_TRUE(dp().state(on_probation(key4(host4(1, i), c)))) << i;
  }
  const lv_shared g = guard();
  EXPECT_EQ(g.probation, 4u);
  EXPECT_NE(g.last_over_ns, 0u);
  EXPECT_EQ(g.engaged_ns, 0u) << "a run shorter than sustain does not engage";
  // Not engaged: a source on probation is limited by its own limits only (burst 5).
  for (int i = 0; i < 4; ++i) EXPECT_EQ(dp().send(udp4(host4(1, 2))), kConforming) << i;
  EXPECT_EQ(dp().send(udp4(host4(1, 2))), (Outcome{XDP_DROP, LV_R_RATE}));
  const lv_state st = *dp().state(on_probation(key4(host4(1, 2), c)));
  EXPECT_EQ(LV_COUNT_PACKETS(st.passed), 5u);
}

TEST_F(Autopilot, ARunOfAbnormalArrivalsEngagesAndTheClassRefusesNewSources) {
  Auto a;
  a.sustain_ns = 0;  // the first abnormal arrival engages
  const lv_class c = auto_class(a);
  use(c);
  EXPECT_EQ(dp().send(udp4(host4(1, 1))), kConforming);
  EXPECT_EQ(dp().send(udp4(host4(1, 2))), kAdmission);
  const lv_shared g = guard();
  EXPECT_NE(g.engaged_ns, 0u);
  EXPECT_EQ(g.engagements, 1u);
  const auto engaged = of_type(dp().events(), LV_EV_ENGAGED);
  ASSERT_EQ(engaged.size(), 1u);
  EXPECT_EQ(engaged[0].count, 1u);
  EXPECT_EQ(engaged[0].value, 1u) << "the threshold, new sources per second";
  EXPECT_EQ(engaged[0].addr[3], 0u) << "a class-wide event names no source";

  constexpr int kFlood = 1000;
  for (int i = 0; i < kFlood; ++i) dp().send(udp4(host4(2 + i / 250, i % 250 + 1)));
  const Counters n = dp().counters();
  EXPECT_EQ(n[LV_R_ADMISSION].packets, kFlood + 1u);
  EXPECT_EQ(dp().state_count(), 1u) << "a refused arrival gets no state, on probation or not";
  EXPECT_EQ(dp().send(udp4(host4(1, 1))), kConforming) << "a known source is not touched";
}

TEST_F(Autopilot, AnEngagedClassLetsAKnownGoodSourceInWithoutSpendingTheBudget) {
  Auto a;
  a.sustain_ns = 0;
  const lv_class c = auto_class(a);
  use(c);
  const lv_key client = key4(host4(9, 9), c);
  ASSERT_NO_FATAL_FAILURE(mark_good({client}));

  EXPECT_EQ(dp().send(udp4(host4(1, 1))), kConforming);
  EXPECT_EQ(dp().send(udp4(host4(1, 2))), kAdmission);
  ASSERT_NE(guard().engaged_ns, 0u);
  EXPECT_EQ(dp().send(udp4(host4(9, 9))), kConforming) << "known-good, never seen, budget spent";
  EXPECT_TRUE(dp().state(client)) << "admitted as a source, not on probation";
  EXPECT_EQ(guard().good_admitted, 1u);
  EXPECT_EQ(dp().send(udp4(host4(9, 10))), kAdmission) << "its neighbour is not";
}

TEST_F(Autopilot, SourcesOnProbationShareOneAllowanceWhileEngaged) {
  Auto a;
  a.sustain_ns = 3600 * kSec;
  const lv_class c = auto_class(a);
  use(c);
  for (int i = 1; i <= 4; ++i) EXPECT_EQ(dp().send(udp4(host4(1, i))), kConforming) << i;  // 2..4 on probation
  edit_guard([](lv_shared& g) { g.engaged_ns = monotonic_ns(); });
  const lv_key third = on_probation(key4(host4(1, 3), c));
  const uint64_t ready = dp().state(third)->ready_ns;
  // The allowance is the threshold's: 1 packet/s, a tolerance of 10 ms: one packet now.
  EXPECT_EQ(dp().send(udp4(host4(1, 2))), kConforming);
  EXPECT_EQ(dp().send(udp4(host4(1, 3))), kNewcomer);
  EXPECT_EQ(dp().send(udp4(host4(1, 4))), kNewcomer);
  EXPECT_EQ(dp().send(udp4(host4(1, 1))), kConforming) << "a source known before is not on probation";
  // A refused packet costs its source nothing (its own limit's charge is given back).
  const lv_state st = *dp().state(third);
  EXPECT_EQ(LV_COUNT_PACKETS(st.passed), 1u);
  EXPECT_EQ(st.ready_ns, ready);
  // What the class decided is no source's first drop: no event per source.
  EXPECT_TRUE(of_type(dp().events(), LV_EV_LIMITED).empty());
}

TEST_F(Autopilot, OnceTheAllowanceIsSpentAnEngagedClassRefusesSourcesOnProbationOnTheFilter) {
  Auto a;
  a.sustain_ns = 3600 * kSec;
  const lv_class c = auto_class(a);
  use(c);
  for (int i = 1; i <= 3; ++i) dp().send(udp4(host4(1, i)));
  edit_guard([](lv_shared& g) {
    g.engaged_ns = monotonic_ns();
    g.newcomer_ready = monotonic_ns() + 3600 * kSec;  // spent
  });
  // An arrival on this CPU finds the class engaged, and this CPU remembers it.
  EXPECT_EQ(dp().send(udp4(host4(8, 8))), kAdmission);
  // Budget spent too (the threshold took source 1): a source on probation is refused
  // without looking it up: its state's drop count stays untouched.
  EXPECT_EQ(dp().send(udp4(host4(1, 2))), kNewcomer);
  EXPECT_EQ(LV_COUNT_PACKETS(dp().state(on_probation(key4(host4(1, 2), c)))->dropped), 0u);
  EXPECT_EQ(dp().send(udp4(host4(7, 7))), kAdmission) << "a source never seen";
}

TEST_F(Autopilot, ACalmClassReleasesAndPromotesItsSourcesOnProbation) {
  const lv_class c = auto_class(Auto{});
  use(c);
  EXPECT_EQ(dp().send(udp4(host4(1, 1))), kConforming);
  EXPECT_EQ(dp().send(udp4(host4(1, 2))), kConforming);
  ASSERT_TRUE(dp().state(on_probation(key4(host4(1, 2), c))));
  edit_guard([](lv_shared& g) { g.engaged_ns = monotonic_ns() - 5 * kSec; });

  make_calm(c);
  EXPECT_EQ(dp().send(udp4(host4(1, 2))), kConforming);
  EXPECT_TRUE(dp().state(key4(host4(1, 2), c))) << "promoted";
  EXPECT_FALSE(dp().state(on_probation(key4(host4(1, 2), c))));
  const lv_state st = *dp().state(key4(host4(1, 2), c));
  EXPECT_EQ(LV_COUNT_PACKETS(st.passed), 2u) << "with its state";
  EXPECT_EQ(guard().promoted, 1u);

  // A normal arrival in a calm class releases it (the threshold, 1/s, refills first).
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(dp().send(udp4(host4(1, 3))), kConforming);
  EXPECT_TRUE(dp().state(key4(host4(1, 3), c)));
  EXPECT_EQ(guard().engaged_ns, 0u);
  const auto released = of_type(dp().events(), LV_EV_RELEASED);
  ASSERT_EQ(released.size(), 1u);
  EXPECT_GE(released[0].value, 5 * kSec) << "how long it was engaged";
}

TEST_F(Autopilot, InMonitorModeAnEngagedClassCountsWhatItWouldRefuseAndPassesIt) {
  Auto a;
  a.sustain_ns = 0;
  lv_class c = auto_class(a);
  c.flags |= LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN;
  use(c);
  EXPECT_EQ(dp().send(udp4(host4(1, 1))), kConforming);
  EXPECT_EQ(dp().send(udp4(host4(1, 2))), kMonitored);
  EXPECT_NE(guard().engaged_ns, 0u) << "it says what it would do";
  EXPECT_EQ(of_type(dp().events(), LV_EV_ENGAGED).size(), 1u);
  lv_counter would{};
  for (const lv_percpu& pc : dp().percpu()) would.packets += pc.would[LV_R_ADMISSION].packets;
  EXPECT_EQ(would.packets, 1u);
  EXPECT_EQ(dp().state_count(), 1u) << "what it would refuse gets no state";
}

TEST_F(Autopilot, AnOperatorsBudgetWinsOverTheAutopilot) {
  lv_class c = auto_class(Auto{});
  c.admit = compile_packet_limit(Rate{1, 2});
  c.flags |= LV_CLASS_ADMIT;
  use(c);
  EXPECT_EQ(dp().send(udp4(host4(1, 1))), kConforming);
  EXPECT_EQ(dp().send(udp4(host4(1, 2))), kConforming);
  EXPECT_EQ(dp().send(udp4(host4(1, 3))), kAdmission);
  EXPECT_TRUE(dp().state(key4(host4(1, 2), c))) << "no probation under a budget";
  EXPECT_EQ(guard().probation, 0u);
  EXPECT_EQ(guard().last_over_ns, 0u);
}

// ---- learning -----------------------------------------------------------------------

TEST_F(Autopilot, ACalmPeriodTeachesTheBaselineAndTheThresholdFollows) {
  Auto a;
  a.floor = 1;
  a.burst_ns = 3600 * kSec;  // nothing is abnormal
  const lv_class c = auto_class(a);
  use(c);
  // A period that began 2 s ago, with 64,000 arrivals in it, after a baseline of
  // 100 arrivals/s (1,600 in the baseline's 1/16 steps).
  const uint64_t begun = monotonic_ns() - 2 * kSec;
  edit_guard([&](lv_shared& g) {
    g.period_ns = begun;
    g.arrivals = 64000;
    g.period_arrivals = 0;
    g.baseline = 1600;
  });
  const uint64_t before = monotonic_ns();
  EXPECT_EQ(dp().send(udp4(host4(1, 1))), kConforming);
  const uint64_t after = monotonic_ns();
  const lv_shared g = guard();
  EXPECT_GE(g.period_ns, before);
  EXPECT_LE(g.period_ns, after);
  EXPECT_EQ(g.period_arrivals, 64000u);
  EXPECT_EQ(g.arrivals, 64001u);
  // The rule as CONFIG.md states it, worked out here in floating point and not by
  // guard.h: each calm period moves the baseline 1/64 of the way to the period's rate,
  // kept in 1/16 arrivals/s; the threshold is `margin` (4) times the baseline, as ns per
  // arrival. The period's length is the one the program measured.
  const double seconds = static_cast<double>(g.period_ns - begun) / 1e9;
  const double rate = 64000 / seconds;  // ~32,000 arrivals/s
  const double baseline = 100 + (rate - 100) / 64;
  EXPECT_NEAR(static_cast<double>(g.baseline), baseline * 16, 2) << "arrivals/s x 16 after " << seconds << " s";
  EXPECT_NEAR(static_cast<double>(g.threshold_cost), 1e9 / (4 * baseline), 1e9 / (4 * baseline) * 0.005)
      << "ns per arrival";
}

TEST_F(Autopilot, APeriodWithAnAbnormalArrivalTeachesNothing) {
  Auto a;
  a.burst_ns = 3600 * kSec;
  a.release_ns = 500 * kMs;  // calm again by the arrival that ends the period
  const lv_class c = auto_class(a);
  use(c);
  const uint64_t now = monotonic_ns();
  edit_guard([&](lv_shared& g) {
    g.period_ns = now - 2 * kSec;
    g.arrivals = 1000;
    g.last_over_ns = now - kSec;  // within the period
    g.baseline = 77;
  });
  dp().send(udp4(host4(1, 1)));
  const lv_shared g = guard();
  EXPECT_EQ(g.baseline, 77u);
  EXPECT_EQ(g.period_arrivals, 1000u) << "the next period starts all the same";
}

// ---- escalation ---------------------------------------------------------------------

// A class watching /16 networks with a limit of `rate`/`burst` for each (a sample of
// one packet in 16 is charged 16 times).
lv_class watching(lv_class c, uint64_t rate, uint64_t burst, uint64_t release_ns = 30 * kSec) {
  c.flags |= LV_CLASS_ESCALATE;
  c.autop.sample_shift = 4;
  c.autop.watch = compile_packet_limit(Rate{rate, burst});
  c.autop.watch_prefix4 = 16;
  c.autop.watch_mask4 = htonl(0xffff0000u);
  c.autop.watch_prefix6 = 32;
  c.autop.watch_mask6[0] = 0xffffffffu;
  c.autop.release_ns = release_ns;
  return c;
}

lv_watch watch_of(const Datapath& dp, const lv_key& k) {
  auto st = dp.state(k);
  return st ? std::bit_cast<lv_watch>(*st) : lv_watch{};
}

TEST_F(Autopilot, ANetworkOverItsLimitIsEscalatedAndThenLimitedAsAWhole) {
  // Sources of 1,000 pps each, under their limits; their /16 may pass 100 packets at
  // once (burst 100, 1 pps: no refill within the test).
  const lv_class c = watching(make_class(1000, 1000), 1, 100);
  use(c);
  dp().put_percpu(lv_percpu{});
  int passed = 0;
  for (int i = 0; i < 400; ++i) passed += dp().send(udp4(host4(i % 8, 1))) == kConforming;
  const lv_watch w = watch_of(dp(), watch_key4(host4(0, 1), c));
  EXPECT_NE(w.escalated_ns, 0u) << "the sampled traffic went over 100 packets";
  EXPECT_EQ(guard().escalations, 1u);
  const auto escalated = of_type(dp().events(), LV_EV_ESCALATED);
  ASSERT_EQ(escalated.size(), 1u);
  EXPECT_EQ(escalated[0].addr[3], htonl(0xc6120000u)) << "the network 198.18.0.0/16";
  EXPECT_EQ(escalated[0].value, 1u) << "its limit";
  // Each packet charged once since: the network passes what its burst has left, then nothing.
  const Counters n = dp().counters();
  EXPECT_EQ(n[LV_R_ESCALATED].packets, 400u - passed);
  // The burst, the first sample's 16 (it makes the network's state), and up to two
  // samples' worth of granularity.
  EXPECT_GE(passed, 100);
  EXPECT_LE(passed, 100 + 16 + 32);
  EXPECT_EQ(dp().send(udp4(host4(0, 1))), kEscalated);
  EXPECT_EQ(dp().send(udp4("198.19.5.5")), kConforming) << "a source of another network";
  EXPECT_TRUE(of_type(dp().events(), LV_EV_LIMITED).empty()) << "what the network decided is no source's event";
}

TEST_F(Autopilot, AnEscalatedNetworkIsReleasedOnceCalm) {
  const lv_class c = watching(make_class(1000, 1000), 1, 100, kSec);
  use(c);
  for (int i = 0; i < 400; ++i) dp().send(udp4(host4(i % 8, 1)));
  const lv_key wk = watch_key4(host4(0, 1), c);
  lv_watch w = watch_of(dp(), wk);
  ASSERT_NE(w.escalated_ns, 0u);
  dp().events();
  // Calm: its last refused packet more than release (1 s) ago, its limit refilled.
  w.last_over_ns = monotonic_ns() - 2 * kSec;
  w.ready_ns = 0;
  dp().put_state(wk, std::bit_cast<lv_state>(w));
  for (int i = 0; i < 32; ++i) EXPECT_EQ(dp().send(udp4(host4(0, 1))), kConforming) << i;
  EXPECT_EQ(watch_of(dp(), wk).escalated_ns, 0u);
  const auto released = of_type(dp().events(), LV_EV_DEESCALATED);
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].addr[3], htonl(0xc6120000u));
}

TEST_F(Autopilot, ABotnetThatArrivesOnProbationIsEscalatedAllTheSame) {
  // Eight sources arriving at once past the threshold's tolerance: all but the first on
  // probation, their /16 over its limit together.
  lv_class c = watching(auto_class(Auto{}, 1000, 1000), 1, 100);
  use(c);
  dp().send(udp4(host4(0, 1)));  // the one normal arrival
  for (int i = 0; i < 400; ++i) dp().send(udp4(host4(1 + i % 8, 1)));
  EXPECT_TRUE(dp().state(on_probation(key4(host4(1, 1), c)))) << "the premise: on probation";
  EXPECT_NE(watch_of(dp(), watch_key4(host4(0, 1), c)).escalated_ns, 0u);
  EXPECT_EQ(guard().escalations, 1u);
}

void escalate(Datapath& dp, const lv_class& c) { escalate_network(dp, c, host4(0, 1)); }

// An escalated network's new sources are refused before admission: they spend none of
// the class's budget and are no abnormal arrivals, so a new source of another network
// is admitted as it would be without that flood.
TEST_F(Autopilot, AnEscalatedNetworksNewSourcesSpendNoneOfTheAdmissionBudget) {
  Auto a;
  a.floor = 1;  // one arrival's worth of budget: a second normal arrival would be abnormal
  lv_class c = watching(auto_class(a, 1000, 1000), 1, 100);
  use(c);
  escalate(dp(), c);
  const lv_shared before = guard();

  for (int i = 0; i < 200; ++i) ASSERT_EQ(dp().send(udp4(host4(i / 250, i % 250 + 1))), kEscalated) << i;
  const lv_shared after = guard();
  EXPECT_EQ(after.admit_ready, before.admit_ready) << "the escalated network spent the budget";
  EXPECT_EQ(after.arrivals, before.arrivals);
  EXPECT_EQ(after.last_over_ns, 0u) << "its arrivals are no abnormal arrivals of the class";
  EXPECT_EQ(dp().state_count(), 1u) << "no state for them, on probation or not (only the watch's)";
  // The network's display count has them, but those this CPU's memo refused since its
  // last look at the network (once a millisecond), which wait in the memo.
  uint64_t pending = 0;
  for (const lv_percpu& pc : dp().percpu())
    for (const lv_watch_memo& m : pc.watch_memo) pending += LV_COUNT_PACKETS(m.pending);
  EXPECT_EQ(LV_COUNT_PACKETS(watch_of(dp(), watch_key4(host4(0, 1), c)).dropped) + pending, 200u);

  // A new source of another network is a normal arrival: state as a source.
  EXPECT_EQ(dp().send(udp4("198.19.5.5")), kConforming);
  EXPECT_TRUE(dp().state(key4("198.19.5.5", c))) << "admitted as a source, not on probation";
  EXPECT_EQ(dp().counters()[LV_R_ESCALATED].packets, 200u);
}

// What a flood got on probation before its network was escalated passes no more.
TEST_F(Autopilot, ASourceOnProbationOfAnEscalatedNetworkIsRefused) {
  lv_class c = watching(auto_class(Auto{}, 1000, 1000), 1, 100);
  use(c);
  EXPECT_EQ(dp().send(udp4(host4(0, 1))), kConforming);  // the one normal arrival
  EXPECT_EQ(dp().send(udp4(host4(0, 2))), kConforming);
  ASSERT_TRUE(dp().state(on_probation(key4(host4(0, 2), c)))) << "the premise: on probation";
  put_source(dp(), key4(host4(0, 1), c), 3 * LV_NSEC_PER_SEC);  // a source from before the flood
  escalate(dp(), c);
  for (int i = 0; i < 2; ++i) {  // the first finds the class's escalation, the second this CPU's memory of it
    EXPECT_EQ(dp().send(udp4(host4(0, 2))), kEscalated) << i;
    EXPECT_EQ(dp().send(udp4(host4(0, 1))), kConforming) << i << ": a source (not on probation) keeps its limit";
  }
  EXPECT_EQ(LV_COUNT_PACKETS(dp().state(on_probation(key4(host4(0, 2), c)))->passed), 1u);
}

// The sources that arrived with a network's flood before it was escalated (since its
// last sample under its limit, or a second before it) are refused with it, unless
// known-good: a flood of its addresses, each under its own limit, passes no more than
// what its earlier sources send. An earlier source keeps its limit; released, the
// network's sources all pass again.
TEST_F(Autopilot, TheSourcesOfANetworksRunUpAreRefusedWhileItIsEscalated) {
  const OneCpu pin;  // this CPU's memory of the escalation (struct lv_pilot) is read
  ASSERT_TRUE(pin.ok());
  lv_class c = watching(auto_class(Auto{}, 1000, 1000), 1, 100);
  use(c);
  const std::string before = host4(0, 1), runup = host4(0, 2), proven = host4(0, 3), early = host4(0, 4);
  put_source(dp(), key4(before, c), 3 * LV_NSEC_PER_SEC);
  put_source(dp(), key4(early, c), LV_NSEC_PER_SEC / 2);  // within the second before
  put_source(dp(), key4(proven, c), 0);
  ASSERT_NO_FATAL_FAILURE(mark_good({key4(proven, c)}));
  escalate(dp(), c);
  put_source(dp(), key4(runup, c), 0);
  EXPECT_EQ(dp().send(udp4(host4(0, 250))), kEscalated) << "a new source: the arrival that tells this CPU";

  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(dp().send(udp4(before)), kConforming) << i << ": a source from before the flood keeps its limit";
    EXPECT_EQ(dp().send(udp4(runup)), kEscalated) << i;
    EXPECT_EQ(dp().send(udp4(early)), kEscalated) << i;
    EXPECT_EQ(dp().send(udp4(proven)), kConforming) << i << ": known-good";
  }
  const lv_watch w = watch_of(dp(), watch_key4(before, c));
  EXPECT_EQ(LV_COUNT_PACKETS(w.dropped), 7u) << "the network's display count: the new source and six of its run-up";
  EXPECT_EQ(dp().counters()[LV_R_ESCALATED].packets, 7u);
  EXPECT_TRUE(dp().state(key4(runup, c))) << "it keeps its state";

  // Calm again (no refusal for release_ns): released, its sources pass.
  lv_watch calm = w;
  calm.last_over_ns -= c.autop.release_ns + LV_NSEC_PER_SEC;
  dp().put_state(watch_key4(before, c), std::bit_cast<lv_state>(calm));
  EXPECT_EQ(dp().send(udp4(runup)), kConforming);
  EXPECT_EQ(dp().send(udp4(early)), kConforming);
}

TEST_F(Autopilot, AKnownGoodSourceOfAnEscalatedNetworkIsAdmitted) {
  lv_class c = watching(auto_class(Auto{}, 1000, 1000), 1, 100);
  use(c);
  ASSERT_NO_FATAL_FAILURE(mark_good({key4(host4(0, 9), c)}));
  escalate(dp(), c);
  EXPECT_EQ(dp().send(udp4(host4(0, 10))), kEscalated) << "its neighbour is refused";
  EXPECT_EQ(dp().send(udp4(host4(0, 9))), kConforming);
  EXPECT_TRUE(dp().state(key4(host4(0, 9), c)));
}

// A network whose new sources flood an engaged class has little passed to sample; its
// refused arrivals are sampled too, so it is escalated all the same (and then refused
// before admission, leaving the budget to other networks).
TEST_F(Autopilot, ANetworkWhoseNewSourcesAreRefusedIsEscalatedByThem) {
  Auto a;
  a.sustain_ns = 0;
  lv_class c = watching(auto_class(a, 1000, 1000), 1, 100);
  use(c);
  dp().put_percpu(lv_percpu{});
  for (int i = 0; i < 16; ++i) dp().send(udp4(host4(0, 1)));  // a passed sample: the /16 is watched
  ASSERT_NE(dp().state(watch_key4(host4(0, 1), c)), std::nullopt);
  int refused = 0;
  for (int i = 0; i < 400; ++i) refused += dp().send(udp4(host4(1 + i / 200, i % 200 + 2))) == kAdmission;
  EXPECT_GT(refused, 0) << "the premise: the class refuses them as new";
  EXPECT_NE(watch_of(dp(), watch_key4(host4(0, 1), c)).escalated_ns, 0u);
  EXPECT_EQ(guard().escalations, 1u);
  // Once the budget has room again, the network's arrivals are refused as escalated
  // without spending it, and another network's new source takes it.
  edit_guard([](lv_shared& g) { g.admit_ready = 0; });
  for (int i = 0; i < 100; ++i) EXPECT_EQ(dp().send(udp4(host4(3, i + 1))), kEscalated) << i;
  EXPECT_EQ(dp().send(udp4("198.19.5.5")), kConforming);
  EXPECT_TRUE(dp().state(on_probation(key4("198.19.5.5", c)))) << "the class is still engaged: on probation";
}

// A random flood over many networks makes none of them watched by its refused arrivals.
TEST_F(Autopilot, RefusedArrivalsMakeNoNetworkWatched) {
  Auto a;
  a.sustain_ns = 0;
  lv_class c = watching(auto_class(a, 1000, 1000), 1, 100);
  use(c);
  dp().send(udp4(host4(0, 1)));
  const size_t states = dp().state_count();
  for (int i = 0; i < 400; ++i) EXPECT_EQ(dp().send(udp4("198.19." + std::to_string(i % 250) + ".1")), kAdmission);
  EXPECT_EQ(dp().state_count(), states);
}

// Known-good sources are not counted against their network: a crowd of them is no flood.
TEST_F(Autopilot, KnownGoodSourcesAreNotCountedAgainstTheirNetwork) {
  lv_class c = watching(make_class(1000, 1000), 1, 100);
  use(c);
  std::vector<lv_key> good;
  for (int i = 0; i < 8; ++i) good.push_back(key4(host4(i, 1), c));
  ASSERT_NO_FATAL_FAILURE(mark_good(good));
  for (int i = 0; i < 400; ++i) EXPECT_EQ(dp().send(udp4(host4(i % 8, 1))), kConforming) << i;
  EXPECT_EQ(guard().escalations, 0u);
  EXPECT_FALSE(dp().state(watch_key4(host4(0, 1), c))) << "not even watched";
  // The control: the same traffic from sources not known-good is escalated.
  for (int i = 0; i < 400; ++i) dp().send(udp4(host4(i % 8, 2)));
  EXPECT_EQ(guard().escalations, 1u);
}

TEST_F(Autopilot, ARandomIpv6FloodOverManySitesEscalatesNone) {
  // A new /48 (the IPv6 watch's network) for every source: one sample each at most.
  lv_class c = watching(auto_class(Auto{}, 1000, 1000), 1, 100);
  c.autop.watch_prefix6 = 48;
  c.autop.watch_mask6[0] = 0xffffffffu;
  c.autop.watch_mask6[1] = htonl(0xffff0000u);
  use(c);
  for (int i = 0; i < 400; ++i) {
    char src[64];
    std::snprintf(src, sizeof src, "2001:db8:%x::1", 0x8000 + i);
    dp().send(Frame().eth().ipv6(src, "2001:db8:ffff::1").udp(1000, 53).payload(18).bytes());
  }
  EXPECT_EQ(guard().escalations, 0u);
  EXPECT_EQ(dp().counters()[LV_R_ESCALATED].packets, 0u);
}

}  // namespace
}  // namespace levee::progtest
