// limiter_test.cpp - bpf/shared/limiter.h (the GCRA the XDP program runs) on an injected clock.
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "gcra_sim.hpp"

namespace levee::test {
namespace {

constexpr uint64_t kNs = LV_NSEC_PER_SEC;
constexpr uint64_t kT0 = 1'000'000'000'000;  // an arbitrary "now" well away from 0

struct RateBurst {
  uint64_t rate, burst;
};

// burst + floor(rate * t) with t in ns, without overflow.
uint64_t allowed(uint64_t rate, uint64_t burst, uint64_t t_ns) {
  return burst + static_cast<uint64_t>(static_cast<unsigned __int128>(rate) * t_ns / kNs);
}

// ---- burst ----------------------------------------------------------------------

TEST(GcraBurst, BurstPassesAtOneInstantThenDrops) {
  for (uint64_t rate : {1ull, 3ull, 1000ull, 100'000ull, 10'000'000ull}) {
    for (uint64_t burst : {1ull, 2ull, 7ull, 100ull, 1000ull}) {
      SCOPED_TRACE(testing::Message() << "rate " << rate << " burst " << burst);
      const lv_limit l = make_limit(rate, burst);
      Source s;
      for (uint64_t i = 0; i < burst; ++i) ASSERT_TRUE(s.offer(kT0, l)) << "packet " << i;
      EXPECT_FALSE(s.offer(kT0, l));
      EXPECT_FALSE(s.offer(kT0 + l.cost - 1, l)) << "one ns before the next interval";
      EXPECT_TRUE(s.offer(kT0 + l.cost, l)) << "exactly one interval later";
      EXPECT_FALSE(s.offer(kT0 + l.cost, l)) << "only one per interval";
    }
  }
}

TEST(GcraBurst, FirstPacketStateIsItsOwnPass) {
  // lv_gcra_first(now) must equal passing one packet on a full bucket at `now`.
  for (uint64_t burst : {1ull, 2ull, 50ull}) {
    const lv_limit l = make_limit(1000, burst);
    const uint64_t long_idle = kT0 - 10 * kNs;
    EXPECT_EQ(lv_gcra_first(kT0, &l), lv_gcra_after_pass(long_idle, kT0, &l));
    EXPECT_EQ(lv_gcra_first(kT0, &l), kT0 - l.tau_ns + l.cost);
  }
}

// ---- steady floods --------------------------------------------------------------

// A flood at `factor` times the rate, packets evenly spaced, from t0 to t0 + t.
uint64_t flood_passes(const lv_limit& l, uint64_t spacing, uint64_t packets, uint64_t t0 = kT0) {
  Source s;
  uint64_t passed = 0;
  for (uint64_t i = 0; i < packets; ++i) passed += s.offer(t0 + i * spacing, l);
  return passed;
}

TEST(GcraFlood, PassesExactlyBurstPlusRateTimesT) {
  // Rates whose interval is a whole number of ns divisible by the flood factor, so the
  // floods hit the eligible instants exactly: passes == burst + floor(rate * t).
  for (uint64_t rate : {1ull, 50ull, 1000ull, 100'000ull}) {
    for (uint64_t burst : {1ull, 5ull, 100ull}) {
      for (uint64_t factor : {10ull, 2ull}) {
        SCOPED_TRACE(testing::Message() << "rate " << rate << " burst " << burst << " x" << factor);
        const lv_limit l = make_limit(rate, burst);
        ASSERT_EQ(l.cost % factor, 0u);
        const uint64_t spacing = l.cost / factor;
        // Long enough for the flood to have used up the burst (at 2x after ~burst
        // intervals): from then on it is held to the rate.
        for (uint64_t intervals : {2 * burst, 2 * burst + 7, 2 * burst + 1000}) {
          const uint64_t packets = intervals * factor + 1;  // t = intervals * T
          const uint64_t t = (packets - 1) * spacing;
          EXPECT_EQ(flood_passes(l, spacing, packets), allowed(rate, burst, t)) << "over " << t << " ns";
        }
      }
    }
  }
}

TEST(GcraFlood, UnevenIntervalsPassBurstPlusEffectiveRateTimesT) {
  // Rates that do not divide 1e9: the interval is rounded up, so the enforced rate is a
  // little below the configured one, never above. With burst >= 2 the state advances by
  // exactly T per pass, so the count is burst + floor(t / T) whatever the spacing.
  for (uint64_t rate : {3ull, 7ull, 999'999ull, 9'999'999ull}) {
    for (uint64_t burst : {2ull, 10ull}) {
      SCOPED_TRACE(testing::Message() << "rate " << rate << " burst " << burst);
      const lv_limit l = make_limit(rate, burst);
      const uint64_t spacing = l.cost / 10;  // ~10x, not dividing T
      const uint64_t packets = 20'001;
      const uint64_t t = (packets - 1) * spacing;
      const uint64_t passed = flood_passes(l, spacing, packets);
      EXPECT_EQ(passed, burst + t / l.cost);
      EXPECT_LE(passed, allowed(rate, burst, t));
    }
  }
}

TEST(GcraFlood, RandomArrivalsNeverExceedAnyWindow) {
  std::mt19937_64 rng(20261122);
  for (int round = 0; round < 40; ++round) {
    const uint64_t rate = std::uniform_int_distribution<uint64_t>(1, 2'000'000)(rng);
    const uint64_t burst = std::uniform_int_distribution<uint64_t>(1, 20)(rng);
    const lv_limit l = make_limit(rate, burst);
    SCOPED_TRACE(testing::Message() << "rate " << rate << " burst " << burst);
    // Arrivals at 0.5x..20x the rate on average, bursty (many at the same ns).
    const uint64_t mean_gap = l.cost / std::uniform_int_distribution<uint64_t>(1, 40)(rng) * 2;
    std::uniform_int_distribution<uint64_t> gap(0, mean_gap * 2);
    Source s;
    std::vector<uint64_t> passes;
    uint64_t now = kT0;
    for (int i = 0; i < 3000; ++i) {
      if (rng() % 4) now += gap(rng);
      if (s.offer(now, l)) passes.push_back(now);
    }
    ASSERT_GE(passes.size(), std::min<uint64_t>(burst, 3000));
    EXPECT_EQ(check_window_bound(passes, l), "");
  }
}

// ---- sources within their rate ---------------------------------------------------

TEST(GcraBelowRate, NeverDrops) {
  std::mt19937_64 rng(7);
  for (uint64_t rate : {1ull, 3ull, 1000ull, 10'000'000ull}) {
    for (uint64_t burst : {1ull, 10ull}) {
      SCOPED_TRACE(testing::Message() << "rate " << rate << " burst " << burst);
      const lv_limit l = make_limit(rate, burst);
      // Exactly at the enforced rate.
      Source exact;
      for (uint64_t i = 0; i < 10'000; ++i) ASSERT_TRUE(exact.offer(kT0 + i * l.cost, l)) << "packet " << i;
      // Slower, with random gaps of one to three intervals.
      Source slow;
      uint64_t now = kT0;
      for (int i = 0; i < 10'000; ++i) {
        ASSERT_TRUE(slow.offer(now, l)) << "packet " << i;
        now += std::uniform_int_distribution<uint64_t>(l.cost, 3 * l.cost)(rng);
      }
      // The whole burst at once, then quiet long enough to earn it back, repeatedly.
      Source bursty;
      for (uint64_t round = 0; round < 100; ++round)
        for (uint64_t i = 0; i < burst; ++i)
          ASSERT_TRUE(bursty.offer(kT0 + round * burst * l.cost, l)) << "round " << round << " packet " << i;
    }
  }
}

// ---- wait and tokens -------------------------------------------------------------

TEST(GcraWait, IsExact) {
  std::mt19937_64 rng(99);
  for (int round = 0; round < 2000; ++round) {
    const uint64_t rate = std::uniform_int_distribution<uint64_t>(1, 10'000'000)(rng);
    const uint64_t burst = std::uniform_int_distribution<uint64_t>(1, 100)(rng);
    const lv_limit l = make_limit(rate, burst);
    Source s;
    const uint64_t t0 = kT0 + rng() % kNs;
    const uint64_t sent = std::uniform_int_distribution<uint64_t>(burst, burst + 5)(rng);
    for (uint64_t i = 0; i < sent; ++i) s.offer(t0, l);
    // Probe some time after the burst: sometimes before, sometimes after eligibility.
    const uint64_t now = t0 + std::uniform_int_distribution<uint64_t>(0, 2 * l.cost)(rng);
    const uint64_t wait = lv_gcra_wait(*s.ready, now);
    SCOPED_TRACE(testing::Message() << "rate " << rate << " burst " << burst << " wait " << wait);
    if (wait == 0) {
      EXPECT_TRUE(lv_gcra_conforms(*s.ready, now));
      continue;
    }
    EXPECT_LE(wait, l.cost);  // over its limit, a source is eligible within T
    Source early = s, on_time = s;
    EXPECT_FALSE(early.offer(now + wait - 1, l));
    EXPECT_EQ(early.ready, s.ready) << "a drop must not move the state";
    EXPECT_TRUE(on_time.offer(now + wait, l));
    EXPECT_EQ(lv_gcra_wait(*s.ready, now + wait), 0u);
  }
}

TEST(GcraTokens, CountsWhatWouldPassAtOnce) {
  const lv_limit l = make_limit(1000, 10);  // T = 1 ms
  const uint64_t T = l.cost;
  Source s;
  s.offer(kT0, l);
  EXPECT_EQ(lv_gcra_tokens(*s.ready, kT0, &l), 9u);
  for (uint64_t i = 1; i < 10; ++i) {
    s.offer(kT0, l);
    EXPECT_EQ(lv_gcra_tokens(*s.ready, kT0, &l), 9 - i);
  }
  EXPECT_EQ(lv_gcra_tokens(*s.ready, kT0 + T - 1, &l), 0u);
  EXPECT_EQ(lv_gcra_tokens(*s.ready, kT0 + T, &l), 1u);
  EXPECT_EQ(lv_gcra_tokens(*s.ready, kT0 + 3 * T + T / 2, &l), 3u);
  EXPECT_EQ(lv_gcra_tokens(*s.ready, kT0 + 10 * T, &l), 10u);
  EXPECT_EQ(lv_gcra_tokens(*s.ready, kT0 + 1000 * T, &l), 10u) << "capped at burst";

  // Property: tokens == packets that actually pass if offered at that instant.
  std::mt19937_64 rng(3);
  for (int round = 0; round < 2000; ++round) {
    const lv_limit r = make_limit(std::uniform_int_distribution<uint64_t>(1, 1'000'000)(rng),
                                  std::uniform_int_distribution<uint64_t>(1, 50)(rng));
    Source src;
    uint64_t now = kT0;
    for (int i = 0, n = static_cast<int>(rng() % 80); i < n; ++i) {
      now += rng() % (2 * r.cost);
      src.offer(now, r);
    }
    now += rng() % (3 * r.cost);
    const uint64_t tokens = src.ready ? lv_gcra_tokens(*src.ready, now, &r) : r.tau_ns / r.cost + 1;
    Source probe = src;
    ASSERT_EQ(tokens, probe.burst_at(now, r)) << "round " << round;
  }
}

TEST(GcraTokens, NoLimitHasNoTokens) {
  lv_limit none{};
  EXPECT_EQ(lv_gcra_tokens(kT0 - kNs, kT0, &none), 0u);
}

// ---- live limit change -----------------------------------------------------------
// The state is the earliest eligible time, kept across a change: a limited source goes
// on at the new rate at once, a smaller burst caps credit it has not used.

struct Phase {
  uint64_t passed = 0;
  uint64_t first_pass = 0;  // time of the first pass in the phase, 0 if none
};

// Flood `s` with packets every `spacing` ns for `duration` from `start`.
Phase flood(Source& s, const lv_limit& l, uint64_t start, uint64_t duration, uint64_t spacing) {
  Phase p;
  for (uint64_t now = start; now < start + duration; now += spacing) {
    if (s.offer(now, l)) {
      if (!p.passed) p.first_pass = now;
      ++p.passed;
    }
  }
  return p;
}

TEST(GcraLiveChange, FloodingSourceContinuesAtNewRateAtOnce) {
  constexpr uint64_t kWindow = kNs;       // 1 s after the change
  constexpr uint64_t kSpacing = 100'000;  // a flood at 10 kpps
  for (auto [r1, r2] : {std::pair<uint64_t, uint64_t>{1000, 100}, {100, 1000}, {1000, 1000}}) {
    for (uint64_t burst : {1ull, 10ull}) {
      SCOPED_TRACE(testing::Message() << "rate " << r1 << " -> " << r2 << " burst " << burst);
      const lv_limit before = make_limit(r1, burst), after = make_limit(r2, burst);
      Source s;
      flood(s, before, kT0, kNs, kSpacing);
      const uint64_t tc = kT0 + kNs;
      const Phase p = flood(s, after, tc, kWindow, kSpacing);
      // No fresh burst at the change, and the new rate from the first pass on.
      EXPECT_LE(p.passed, r2 + 1);
      EXPECT_LE(p.first_pass - tc, before.cost) << "waits at most one old interval";
      EXPECT_GE(p.passed, r2 - r2 * before.cost / kNs - 1);
    }
  }
}

TEST(GcraLiveChange, BurstChangeWhileFlooding) {
  constexpr uint64_t kSpacing = 10'000;  // 100 kpps against 1000 pps
  const lv_limit big = make_limit(1000, 1000), one = make_limit(1000, 1);
  // Shrinking the burst of a flooding source neither blocks it (as keeping a theoretical
  // arrival time would, for ~1 s) nor lets more through: 1000 pps from the next interval.
  {
    Source s;
    flood(s, big, kT0, kNs, kSpacing);
    const Phase p = flood(s, one, kT0 + kNs, kNs, kSpacing);
    EXPECT_LE(p.first_pass - (kT0 + kNs), big.cost);
    EXPECT_GE(p.passed, 999u);
    EXPECT_LE(p.passed, 1001u);
  }
  // Growing it gives a source that is over its limit no credit at once.
  {
    Source s;
    flood(s, one, kT0, kNs, kSpacing);
    const uint64_t tc = kT0 + kNs;
    EXPECT_EQ(lv_gcra_tokens(*s.ready, tc, &big), lv_gcra_tokens(*s.ready, tc, &one));
    const Phase first_interval = flood(s, big, tc, one.cost, kSpacing);
    EXPECT_LE(first_interval.passed, 1u);
    const Phase rest = flood(s, big, tc + one.cost, kNs, kSpacing);
    EXPECT_LE(rest.passed, 1001u);
  }
}

TEST(GcraLiveChange, SmallerBurstCapsUnusedCredit) {
  const lv_limit b100 = make_limit(1000, 100), b5 = make_limit(1000, 5);
  // Idle for long: a full bucket of 100 becomes a full bucket of 5.
  {
    Source s;
    s.offer(kT0, b100);
    const uint64_t later = kT0 + 10 * kNs;
    EXPECT_EQ(lv_gcra_tokens(*s.ready, later, &b100), 100u);
    EXPECT_EQ(lv_gcra_tokens(*s.ready, later, &b5), 5u);
    EXPECT_EQ(s.burst_at(later, b5), 5u);
  }
  // Half the credit used: 50 left under burst 100, capped to 5.
  {
    Source s;
    for (int i = 0; i < 50; ++i) s.offer(kT0, b100);
    EXPECT_EQ(lv_gcra_tokens(*s.ready, kT0, &b100), 50u);
    EXPECT_EQ(s.burst_at(kT0, b5), 5u);
  }
  // Credit below the new cap is kept as it is: 3 left, cap 5 -> 3.
  {
    Source s;
    for (int i = 0; i < 97; ++i) s.offer(kT0, b100);
    EXPECT_EQ(s.burst_at(kT0, b5), 3u);
  }
  // A larger burst is earned by idling, not granted by the change.
  {
    Source s;
    s.offer(kT0, b5);
    EXPECT_EQ(lv_gcra_tokens(*s.ready, kT0, &b100), 4u);
    const uint64_t later = kT0 + 10 * kNs;
    EXPECT_EQ(s.burst_at(later, b100), 100u);
  }
}

// ---- clock wrap ------------------------------------------------------------------

struct Trace {
  std::vector<bool> verdicts;
  std::vector<uint64_t> states;  // relative to the base
  std::vector<uint64_t> waits, tokens;
};

// One fixed scenario (first packet, burst, flood at 2x, quiet, slow) at times base + x.
Trace scenario(uint64_t base, const lv_limit& l) {
  Trace tr;
  Source s;
  std::vector<uint64_t> offsets;
  for (int i = 0; i < 8; ++i) offsets.push_back(0);
  for (uint64_t i = 1; i < 200; ++i) offsets.push_back(i * l.cost / 2);
  for (uint64_t i = 0; i < 50; ++i) offsets.push_back(1000 * l.cost + i * 3 * l.cost);
  for (uint64_t x : offsets) {
    const uint64_t now = base + x;  // wraps modulo 2^64
    tr.verdicts.push_back(s.offer(now, l));
    tr.states.push_back(*s.ready - base);
    tr.waits.push_back(lv_gcra_wait(*s.ready, now));
    tr.tokens.push_back(lv_gcra_tokens(*s.ready, now, &l));
  }
  return tr;
}

TEST(GcraWrap, ClockNear2To64BehavesLikeAnyOther) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  for (uint64_t rate : {1ull, 1000ull, 10'000'000ull}) {
    const lv_limit l = make_limit(rate, 5);
    const Trace ref = scenario(kT0, l);
    ASSERT_EQ(std::count(ref.verdicts.begin(), ref.verdicts.end(), true), 5 + 99 + 50);
    // The scenario lasts ~1150 intervals: these bases put the wrap before, inside and
    // right at the start of it (including a first state computed below zero).
    const uint64_t span = 1200 * l.cost;
    const std::vector<uint64_t> bases = {0,    1,        kMax - span / 2,        kMax - 100 * l.cost,
                                         kMax, kMax / 2, kMax / 2 + 1 - span / 3};
    for (uint64_t base : bases) {
      SCOPED_TRACE(testing::Message() << "rate " << rate << " base " << base);
      const Trace t = scenario(base, l);
      EXPECT_EQ(t.verdicts, ref.verdicts);
      EXPECT_EQ(t.states, ref.states);
      EXPECT_EQ(t.waits, ref.waits);
      EXPECT_EQ(t.tokens, ref.tokens);
    }
  }
}

TEST(GcraWrap, ConformsComparesAcrossTheWrap) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  EXPECT_TRUE(lv_gcra_conforms(kMax, 0));   // now is 1 ns after ready
  EXPECT_FALSE(lv_gcra_conforms(0, kMax));  // ready is 1 ns after now
  EXPECT_EQ(lv_gcra_wait(5, kMax - 4), 10u);
  EXPECT_TRUE(lv_gcra_conforms(kMax - 10, kMax - 10));
}

}  // namespace
}  // namespace levee::test

namespace levee::test {
namespace {

// ---- bans (the arithmetic the datapath's lv_ban() uses) --------------------------

TEST(BanDuration, DoublesForEachRepeatOffenceUpToTheMaximum) {
  constexpr uint64_t kBan = 2 * kNs, kMax = 60 * kNs;
  EXPECT_EQ(lv_ban_duration(kBan, kMax, 1), kBan);
  EXPECT_EQ(lv_ban_duration(kBan, kMax, 2), 4 * kNs);
  EXPECT_EQ(lv_ban_duration(kBan, kMax, 3), 8 * kNs);
  EXPECT_EQ(lv_ban_duration(kBan, kMax, 5), 32 * kNs);
  EXPECT_EQ(lv_ban_duration(kBan, kMax, 6), kMax) << "64 s capped at 60 s";
  EXPECT_EQ(lv_ban_duration(kBan, kMax, 0), kBan) << "0 is treated as a first offence";
}

TEST(BanDuration, NeverOverflowsWhateverTheOffenceCount) {
  constexpr uint64_t kMax = 86400 * kNs;
  for (uint32_t n : {30u, 31u, 32u, 33u, 62u, 63u, 64u, 65u, 1000u, std::numeric_limits<uint32_t>::max()})
    EXPECT_EQ(lv_ban_duration(3 * kNs, kMax, n), kMax) << n << " offences";
  EXPECT_EQ(lv_ban_duration(std::numeric_limits<uint64_t>::max() / 2 + 1, ~uint64_t{0}, 2), ~uint64_t{0});
}

TEST(BanRepeat, AnOffenceWithinForgetAfterOfTheLastBansEndRepeatsIt) {
  constexpr uint64_t kEnd = kT0, kForget = 10 * kNs;
  EXPECT_TRUE(lv_ban_repeats(kEnd, kEnd, kForget));
  EXPECT_TRUE(lv_ban_repeats(kEnd, kEnd + kForget - 1, kForget));
  EXPECT_FALSE(lv_ban_repeats(kEnd, kEnd + kForget, kForget)) << "a full forget_after of quiet";
  EXPECT_FALSE(lv_ban_repeats(kEnd, kEnd + 1000 * kForget, kForget));
  EXPECT_FALSE(lv_ban_repeats(kEnd, kEnd + 1, 0)) << "forget_after 0: never a repeat";
}

}  // namespace
}  // namespace levee::test
