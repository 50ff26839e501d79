// known_good_test.cpp - which sources `levee run` marks known-good (daemon/known_good.hpp):
// a source of a class with the autopilot that passed packets and dropped none for
// known_good_after while its class stayed calm; walks fed by hand, times injected.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstdio>
#include <vector>

#include "daemon/known_good.hpp"
#include "unit.hpp"

namespace levee::daemon {
namespace {

constexpr uint64_t kSec = 1'000'000'000ull;
constexpr uint64_t kAfter = 60 * kSec;
constexpr uint64_t kT0 = 1000 * kSec;

lv_state counts(uint32_t passed, uint32_t dropped) {
  lv_state s{};
  s.passed = passed | uint64_t{passed * 100u} << 32;
  s.dropped = dropped | uint64_t{dropped * 100u} << 32;
  return s;
}

GoodJudge::Classes calm_classes(uint64_t last_over = 0, bool calm = true) {
  GoodJudge::Classes c{};
  c[0] = {true, calm, last_over};
  c[1] = {false, true, 0};  // a class without the autopilot
  return c;
}

// One walk over `entries` at `now`; the keys it marks.
std::vector<lv_key> walk(GoodJudge& j, uint64_t now, const std::vector<std::pair<lv_key, lv_state>>& entries,
                         const GoodJudge::Classes& classes = calm_classes()) {
  std::vector<lv_key> keys, marks;
  std::vector<lv_state> states;
  for (const auto& [k, s] : entries) {
    keys.push_back(k);
    states.push_back(s);
  }
  j.begin(now, classes);
  j.batch(keys, states, marks);
  j.end();
  return marks;
}

TEST(GoodJudge, ASourceThatPassedAndDroppedNothingForAMinuteIsMarked) {
  GoodJudge j(kAfter);
  const lv_key k = v4_key("198.18.0.5");
  EXPECT_TRUE(walk(j, kT0, {{k, counts(10, 0)}}).empty()) << "first sight";
  EXPECT_TRUE(walk(j, kT0 + 30 * kSec, {{k, counts(40, 0)}}).empty()) << "not a minute yet";
  const auto marks = walk(j, kT0 + kAfter, {{k, counts(70, 0)}});
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_TRUE(KeyEq{}(marks[0], k));
  EXPECT_EQ(walk(j, kT0 + kAfter + 30 * kSec, {{k, counts(90, 0)}}).size(), 1u) << "marked again while it behaves";
}

TEST(GoodJudge, ADropStartsItsMinuteAgain) {
  GoodJudge j(kAfter);
  const lv_key k = v4_key("198.18.0.5");
  walk(j, kT0, {{k, counts(10, 0)}});
  EXPECT_TRUE(walk(j, kT0 + 50 * kSec, {{k, counts(40, 3)}}).empty());
  EXPECT_TRUE(walk(j, kT0 + kAfter, {{k, counts(70, 3)}}).empty()) << "a minute since first sight, not since its drop";
  EXPECT_EQ(walk(j, kT0 + 50 * kSec + kAfter, {{k, counts(99, 3)}}).size(), 1u);
}

TEST(GoodJudge, ASourceThatPassedNothingSinceItWasFirstSeenIsNotMarked) {
  GoodJudge j(kAfter);
  const lv_key k = v4_key("198.18.0.5");
  walk(j, kT0, {{k, counts(10, 0)}});
  EXPECT_TRUE(walk(j, kT0 + 2 * kAfter, {{k, counts(10, 0)}}).empty());
}

TEST(GoodJudge, ASourceFirstSeenBeforeTheClasssLastAbnormalArrivalIsNotMarked) {
  GoodJudge j(kAfter);
  const lv_key k = v4_key("198.18.0.5");
  walk(j, kT0, {{k, counts(10, 0)}});
  // An abnormal arrival after its first sight, the class calm again since.
  EXPECT_TRUE(walk(j, kT0 + 2 * kAfter, {{k, counts(70, 0)}}, calm_classes(kT0 + kSec)).empty());
  // The class not calm now.
  EXPECT_TRUE(walk(j, kT0 + 2 * kAfter, {{k, counts(80, 0)}}, calm_classes(kT0 - kSec, false)).empty());
  // Calm throughout since first sight: marked.
  EXPECT_EQ(walk(j, kT0 + 2 * kAfter, {{k, counts(90, 0)}}, calm_classes(kT0 - kSec)).size(), 1u);
}

TEST(GoodJudge, OnlySourcesOfAClassWithTheAutopilotNotOnProbation) {
  GoodJudge j(kAfter);
  lv_key probation = v4_key("198.18.0.6"), network = v4_key("198.18.0.0", 0, 0, true), other = v4_key("198.18.0.7", 1),
         watch = v4_key("198.18.0.0");
  probation.family |= LV_KEY_PROBATION;
  watch.family |= LV_KEY_WATCH;
  const std::vector<std::pair<lv_key, lv_state>> first{
      {probation, counts(1, 0)}, {network, counts(1, 0)}, {other, counts(1, 0)}, {watch, counts(1, 0)}};
  const std::vector<std::pair<lv_key, lv_state>> later{
      {probation, counts(9, 0)}, {network, counts(9, 0)}, {other, counts(9, 0)}, {watch, counts(9, 0)}};
  walk(j, kT0, first);
  EXPECT_TRUE(walk(j, kT0 + kAfter, later).empty());
  EXPECT_EQ(j.watched(), 0u);
}

TEST(GoodJudge, ASourceAWalkDidNotSeeIsForgotten) {
  GoodJudge j(kAfter);
  const lv_key k = v4_key("198.18.0.5"), other = v4_key("198.18.0.9");
  walk(j, kT0, {{k, counts(10, 0)}});
  walk(j, kT0 + 30 * kSec, {{other, counts(1, 0)}});  // evicted or pruned meanwhile
  EXPECT_EQ(j.watched(), 1u);
  EXPECT_TRUE(walk(j, kT0 + kAfter, {{k, counts(70, 0)}}).empty()) << "seen again: first sight";
}

// The answer networks of the default [syn_auth]: /24 and /48, at most `cap` marks each.
lv_answer answer(uint32_t cap) {
  lv_answer a{};
  a.mask4 = htonl(0xffffff00u);
  a.mask6[0] = 0xffffffffu;
  a.mask6[1] = htonl(0xffff0000u);
  a.marks_per_network = cap;
  return a;
}

// levee run's marks are bounded per network as the datapath's are (lv_syn_mark_take()):
// one /24 past its cap marks no more, its neighbour /24 still does; a source marked again
// at every walk counts once; every count starts over with the filter's ageing.
TEST(NetworkMarks, OneNetworkMakesAtMostItsCapOfMarksPerAgeing) {
  NetworkMarks m;
  const lv_answer a = answer(3);
  char addr[32];
  auto v4 = [&](unsigned third, unsigned host) {
    std::snprintf(addr, sizeof addr, "198.18.%u.%u", third, host);
    return v4_key(addr);
  };
  for (unsigned h = 1; h <= 3; ++h) EXPECT_TRUE(m.take(v4(1, h), a, 7)) << h;
  EXPECT_FALSE(m.take(v4(1, 4), a, 7)) << "the /24's fourth source";
  EXPECT_FALSE(m.take(v4(1, 200), a, 7));
  EXPECT_EQ(m.capped(), 2u);
  EXPECT_TRUE(m.take(v4(1, 2), a, 7)) << "marked again: counted once";
  EXPECT_TRUE(m.take(v4(2, 4), a, 7)) << "another /24";
  lv_key other_class = v4(1, 5);
  other_class.class_id = 3;
  EXPECT_FALSE(m.take(other_class, a, 7)) << "the network is the answer prefix's, whatever the class";
  EXPECT_TRUE(m.take(v4(1, 4), a, 8)) << "the filter aged: the counts start over";
  EXPECT_EQ(m.networks(), 1u);
  EXPECT_TRUE(m.take(v4(1, 5), a, 8));
  EXPECT_TRUE(m.take(v4(1, 6), a, 8));
  EXPECT_FALSE(m.take(v4(1, 7), a, 8));
}

TEST(NetworkMarks, IPv6NetworksAreTheAnswerPrefixAndZeroIsNoBound) {
  NetworkMarks m;
  const lv_answer a = answer(2);
  EXPECT_TRUE(m.take(v6_key("2001:db8:1:1::1"), a, 1));
  EXPECT_TRUE(m.take(v6_key("2001:db8:1:2::1"), a, 1));
  EXPECT_FALSE(m.take(v6_key("2001:db8:1:ffff::1"), a, 1)) << "the same /48: the /64s of one /48 share its cap";
  EXPECT_TRUE(m.take(v6_key("2001:db8:2::1"), a, 1)) << "another /48";
  EXPECT_TRUE(m.take(v4_key("198.18.1.1"), a, 1)) << "IPv4 is counted apart";
  NetworkMarks unbounded;
  const lv_answer none = answer(0);
  for (unsigned i = 0; i < 1000; ++i) {
    lv_key k = v6_key("2001:db8:1::");
    k.addr[3] = htonl(i);
    EXPECT_TRUE(unbounded.take(k, none, 1)) << i;
  }
  EXPECT_EQ(unbounded.capped(), 0u);
}

// The filter ages every known_good_for, and early when its false positives pass 1 %,
// but never within a minute of the last ageing.
TEST(KnownGoodAgeing, EarlyOnlyPastOnePercentAndAMinuteAfterTheLast) {
  constexpr uint64_t kMin = 60 * kSec, kDay = 86'400 * kSec;
  EXPECT_EQ(ageing_due(0.005, kT0, kT0 - kDay / 2, kT0 + kDay / 2), Ageing::None);
  EXPECT_EQ(ageing_due(0.0101, kT0, kT0 - kMin, kT0 + kDay), Ageing::Early);
  EXPECT_EQ(ageing_due(0.0101, kT0, kT0 - kMin + 1, kT0 + kDay), Ageing::None) << "aged under a minute ago";
  EXPECT_EQ(ageing_due(0.01, kT0, kT0 - kDay / 2, kT0 + kDay), Ageing::None) << "1 % itself is kept to";
  EXPECT_EQ(ageing_due(0.5, kT0, kT0 - 1, kT0), Ageing::Scheduled) << "its time: whatever the fill";
  EXPECT_EQ(kGoodMaxFalsePositive, 0.01);
  EXPECT_EQ(kGoodEarliestAgeingNs, kMin);
}

}  // namespace
}  // namespace levee::daemon
