// known_good_test.cpp - which sources `levee run` marks known-good (daemon/known_good.hpp):
// a source of a class with the autopilot that passed packets and dropped none for
// known_good_after while its class stayed calm; walks fed by hand, times injected.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace levee::daemon
