// cookie_keys_test.cpp - daemon/cookie_keys.hpp: `levee run` draws one SYN cookie key
// per key epoch, into the spare slot, whenever its loop first turns inside the window.
#include <gtest/gtest.h>

#include "daemon/cookie_keys.hpp"
#include "syncookie.h"

namespace levee::test {
namespace {

constexpr uint64_t kEpochNs = LV_COOKIE_EPOCH_PERIODS * LV_COOKIE_PERIOD_NS;

TEST(CookieKeys, OneKeyPerEpochIntoTheSpareSlot) {
  daemon::CookieKeys keys;
  const uint64_t t0 = 100 * kEpochNs;  // an even epoch begins: its spare slot is 1
  std::vector<std::pair<uint64_t, unsigned>> drawn;
  // A loop turning every 250 ms for four epochs.
  for (uint64_t t = t0; t < t0 + 4 * kEpochNs; t += 250'000'000)
    if (auto slot = keys.take_due(t)) drawn.emplace_back(t, *slot);
  ASSERT_EQ(drawn.size(), 4u);
  for (size_t i = 0; i < drawn.size(); ++i) {
    EXPECT_EQ(drawn[i].first / kEpochNs, 100 + i) << "one per epoch";
    EXPECT_EQ(drawn[i].second, (i + 1) % 2) << "the next epoch's slot";
    EXPECT_GE(drawn[i].first % kEpochNs, 2 * LV_COOKIE_PERIOD_NS) << "not before its last cookies died";
  }
}

TEST(CookieKeys, NothingDueOutsideTheWindow) {
  daemon::CookieKeys keys;
  EXPECT_FALSE(keys.take_due(100 * kEpochNs + LV_COOKIE_PERIOD_NS)) << "the slot's old cookies live";
  EXPECT_FALSE(keys.take_due(101 * kEpochNs - LV_COOKIE_PERIOD_NS / 2)) << "its epoch is too near";
  EXPECT_TRUE(keys.take_due(100 * kEpochNs + 3 * LV_COOKIE_PERIOD_NS));
  EXPECT_FALSE(keys.take_due(100 * kEpochNs + 4 * LV_COOKIE_PERIOD_NS)) << "once";
}

}  // namespace
}  // namespace levee::test
