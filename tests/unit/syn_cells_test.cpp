// syn_cells_test.cpp - bpf/shared/syn_cells.h (what SYN authentication remembers between
// packets): the stamps of fresh marks and retry passes, read against a clock.
#include <cstdint>

#include <gtest/gtest.h>

#include "syn_cells.h"

namespace {

constexpr __u64 kHash = 0x0123456789abcdefULL;

__u64 stamped_at(__u32 tick) { return lv_syn_tag(kHash) | tick; }

TEST(SynCells, AStampIsGoodForItsTicksAndOnlyForItsTag) {
  const __u32 t = 1000;
  EXPECT_TRUE(lv_syn_stamped(stamped_at(t), lv_syn_tag(kHash), t, LV_SYN_FRESH_TICKS));
  EXPECT_TRUE(lv_syn_stamped(stamped_at(t), lv_syn_tag(kHash), t + LV_SYN_FRESH_TICKS - 1, LV_SYN_FRESH_TICKS));
  EXPECT_FALSE(lv_syn_stamped(stamped_at(t), lv_syn_tag(kHash), t + LV_SYN_FRESH_TICKS, LV_SYN_FRESH_TICKS));
  EXPECT_FALSE(lv_syn_stamped(stamped_at(t), lv_syn_tag(kHash ^ 2), t, LV_SYN_FRESH_TICKS)) << "another tag";
  EXPECT_FALSE(lv_syn_stamped(0, lv_syn_tag(kHash), 0, LV_SYN_FRESH_TICKS)) << "an empty cell";
}

// Another CPU stamped with a reading ahead of this CPU's (a busy CPU's reading is up
// to a jiffy old, clock.h): the stamp is in time. Before, it read as 2^32 - 1 ticks
// old, and a client's handshake in flight lost its fresh mark.
TEST(SynCells, AStampALittleAheadOfTheReadingIsInTime) {
  const __u32 t = 1000;
  const __u32 ahead = 2;  // LV_CLOCK_AHEAD_NS is a tick, and one for the boundary
  EXPECT_TRUE(lv_syn_stamped(stamped_at(t + 1), lv_syn_tag(kHash), t, LV_SYN_FRESH_TICKS));
  EXPECT_TRUE(lv_syn_stamped(stamped_at(t + ahead), lv_syn_tag(kHash), t, LV_SYN_RETRY_TICKS));
  EXPECT_FALSE(lv_syn_stamped(stamped_at(t + ahead + 1), lv_syn_tag(kHash), t, LV_SYN_FRESH_TICKS));
  EXPECT_GE(static_cast<uint64_t>(ahead) << LV_SYN_TICK_SHIFT, LV_CLOCK_AHEAD_NS);
}

}  // namespace
