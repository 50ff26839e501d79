// syncookie_test.cpp - bpf/shared/syncookie.h (the SYN cookie the XDP program makes and checks):
// SipHash-2-4 against its published vectors, and the cookie's lifetime and binding.
#include <cstdint>

#include <gtest/gtest.h>

#include "syncookie.h"

namespace levee::test {
namespace {

constexpr __u64 kReferenceKey[2] = {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};

// SipHash-2-4 of the reference message 00 01 02 ... of `len` bytes, reference key.
uint64_t reference_siphash(uint32_t len) {
  lv_sip s{};
  lv_sip_init(&s, kReferenceKey);
  auto word = [](uint32_t from, uint32_t n) {
    uint64_t m = 0;
    for (uint32_t i = 0; i < n; ++i) m |= uint64_t{from + i} << (8 * i);
    return m;
  };
  for (uint32_t b = 0; b < len / 8; ++b) lv_sip_block(&s, word(8 * b, 8));
  return lv_sip_final(&s, len, word(len / 8 * 8, len % 8));
}

// The cookie hashes 20 bytes (IPv4) or 44 (IPv6): whole blocks and a 4-byte tail.
TEST(SipHash, MatchesThePublishedVectors) {
  EXPECT_EQ(reference_siphash(0), 0x726fdb47dd0e0e31ULL);
  EXPECT_EQ(reference_siphash(8), 0x93f5f5799a932462ULL);
  EXPECT_EQ(reference_siphash(12), 0x751e8fbc860ee5fbULL);
  EXPECT_EQ(reference_siphash(16), 0x3f2acc7f57c29bdbULL);
  EXPECT_EQ(reference_siphash(20), 0xbed65cf21aa2ee98ULL);
  EXPECT_EQ(reference_siphash(24), 0xb8ad50c6f649af94ULL);
  EXPECT_EQ(reference_siphash(44), 0xf935451de4f21df2ULL);
}

// One key per slot (an epoch's parity); kT0 is early in the first period of an even
// epoch, so its cookies and the next period's use slot 0.
constexpr __u64 kKeys[2][2] = {{0x1111222233334444ULL, 0x5555666677778888ULL},
                               {0x9999aaaabbbbccccULL, 0xddddeeeeffff0000ULL}};
constexpr uint64_t kT0 = 1024 * LV_COOKIE_PERIOD_NS + 12345;
static_assert(1024 % (2 * LV_COOKIE_EPOCH_PERIODS) == 0);

lv_cookie_in connection(uint8_t family = LV_AF_INET) {
  lv_cookie_in in{};
  in.family = family;
  in.saddr[3] = 0x0112c6c6;  // as stored: network byte order
  in.daddr[3] = 0x010013c6;
  if (family == LV_AF_INET6) {
    in.saddr[0] = in.daddr[0] = 0xb80d0120;
  } else {
    in.saddr[2] = in.daddr[2] = 0xffff0000;
  }
  in.sport = 40000;
  in.dport = 80;
  return in;
}

// The XDP program keeps SipHash's state after an IPv6 cookie's destination address, per
// CPU: a cookie made or checked with the memo is the one made without, and a memo of
// another key or address is made again, never used.
TEST(SynCookie, TheMemoOfADestinationChangesNoCookie) {
  lv_cookie_memo memo{};
  const lv_cookie_in in = connection(LV_AF_INET6);
  const uint32_t c = lv_cookie_make(&in, kT0, kKeys, nullptr);
  EXPECT_EQ(lv_cookie_make(&in, kT0, kKeys, &memo), c) << "made and kept";
  EXPECT_EQ(memo.key[1], kKeys[0][1]);
  EXPECT_EQ(memo.daddr[3], in.daddr[3]);
  EXPECT_EQ(lv_cookie_make(&in, kT0, kKeys, &memo), c) << "from the memo";
  EXPECT_TRUE(lv_cookie_check(&in, c, kT0, kKeys, &memo));
  lv_cookie_in other = in;
  other.daddr[1] ^= 1;
  EXPECT_EQ(lv_cookie_make(&other, kT0, kKeys, &memo), lv_cookie_make(&other, kT0, kKeys, nullptr))
      << "another destination";
  EXPECT_FALSE(lv_cookie_check(&other, c, kT0, kKeys, &memo));
  const __u64 keys2[2][2] = {{kKeys[0][0], kKeys[0][1] ^ 1}, {kKeys[1][0], kKeys[1][1]}};
  EXPECT_FALSE(lv_cookie_check(&in, c, kT0, keys2, &memo)) << "another key";
  EXPECT_EQ(lv_cookie_make(&in, kT0, keys2, &memo), lv_cookie_make(&in, kT0, keys2, nullptr));
  EXPECT_TRUE(lv_cookie_check(&in, c, kT0, kKeys, &memo)) << "and back";
  lv_cookie_memo zero{};
  EXPECT_EQ(lv_cookie_make(&in, kT0, kKeys, &zero), c) << "an empty memo holds no key";
}

TEST(SynCookie, GoodForItsPeriodAndTheNextOnly) {
  for (uint8_t family : {LV_AF_INET, LV_AF_INET6}) {
    const lv_cookie_in in = connection(family);
    const uint32_t c = lv_cookie_make(&in, kT0, kKeys, nullptr);
    EXPECT_EQ(c & LV_COOKIE_OPTS_MASK, in.opts) << "the option bits are the connection's";
    EXPECT_TRUE(lv_cookie_check(&in, c, kT0, kKeys, nullptr));
    EXPECT_TRUE(lv_cookie_check(&in, c, kT0 + LV_COOKIE_PERIOD_NS, kKeys, nullptr)) << "the next period";
    // Its last LV_CLOCK_AHEAD_NS are the next period's (ItsClockMayBeAheadOfTheCheckersByLittle).
    const uint64_t last = kT0 - 12345 + 2 * LV_COOKIE_PERIOD_NS - LV_CLOCK_AHEAD_NS - 1;
    EXPECT_TRUE(lv_cookie_check(&in, c, last, kKeys, nullptr)) << "its last ns";
    EXPECT_FALSE(lv_cookie_check(&in, c, last + 1, kKeys, nullptr));
    EXPECT_FALSE(lv_cookie_check(&in, c, kT0 - 12345 + 2 * LV_COOKIE_PERIOD_NS, kKeys, nullptr)) << "two periods on";
    EXPECT_FALSE(lv_cookie_check(&in, c, kT0 + 3 * LV_COOKIE_PERIOD_NS, kKeys, nullptr));
  }
}

// A cookie, and its TSval, made on a CPU whose reading is ahead of the checking CPU's
// (a busy CPU's is up to a jiffy old, clock.h) are good: before, the ACK was dropped
// and the listener reset its connection (1 or 2 of 180 under a SYN flood). Not more
// than LV_CLOCK_AHEAD_NS ahead.
TEST(SynCookie, ItsClockMayBeAheadOfTheCheckersByLittle) {
  const uint64_t ms = 1'000'000;
  const lv_cookie_in in = connection();
  const uint64_t made = 1025 * LV_COOKIE_PERIOD_NS + ms;  // just into a period
  const __u64 wide = lv_cookie_make_wide(&in, made, kKeys, nullptr);
  const auto c = static_cast<uint32_t>(wide);
  __u64 checked = 0;
  EXPECT_TRUE(lv_cookie_check_wide(&in, c, made - 5 * ms, kKeys, nullptr, &checked)) << "still the period before";
  EXPECT_EQ(checked >> 32, wide >> 32) << "the TSval's offset";
  EXPECT_FALSE(lv_cookie_check(&in, c, made - 30 * ms, kKeys, nullptr)) << "more than LV_CLOCK_AHEAD_NS before";
  // A cookie of the period before, in the last LV_CLOCK_AHEAD_NS of its next period: the
  // check takes it for the next one's (its life is that much shorter).
  const uint32_t old = lv_cookie_make(&in, 1024 * LV_COOKIE_PERIOD_NS, kKeys, nullptr);
  EXPECT_TRUE(lv_cookie_check(&in, old, 1026 * LV_COOKIE_PERIOD_NS - 30 * ms, kKeys, nullptr));
  EXPECT_FALSE(lv_cookie_check(&in, old, 1026 * LV_COOKIE_PERIOD_NS - 5 * ms, kKeys, nullptr));

  const uint32_t tsval = lv_cookie_tsval(wide, made);
  EXPECT_TRUE(lv_cookie_ts_echoed(wide, tsval, made));
  EXPECT_TRUE(lv_cookie_ts_echoed(wide, tsval, made - 4 * ms)) << "a jiffy behind";
  EXPECT_TRUE(lv_cookie_ts_echoed(wide, tsval, made - 16 * ms));
  EXPECT_FALSE(lv_cookie_ts_echoed(wide, tsval, made - 40 * ms));
  EXPECT_TRUE(lv_cookie_ts_echoed(wide, tsval, made + 2 * LV_COOKIE_PERIOD_NS - 2 * ms)) << "a cookie's lifetime";
  EXPECT_FALSE(lv_cookie_ts_echoed(wide, tsval, made + 2 * LV_COOKIE_PERIOD_NS + 10 * ms));
}

TEST(SynCookie, BindsTheConnectionAndTheKey) {
  const lv_cookie_in in = connection();
  const uint32_t c = lv_cookie_make(&in, kT0, kKeys, nullptr);
  lv_cookie_in other = in;
  other.sport++;
  EXPECT_FALSE(lv_cookie_check(&other, c, kT0, kKeys, nullptr));
  other = in;
  other.saddr[3] ^= 0x01000000;
  EXPECT_FALSE(lv_cookie_check(&other, c, kT0, kKeys, nullptr));
  other = in;
  other.dport = 443;
  EXPECT_FALSE(lv_cookie_check(&other, c, kT0, kKeys, nullptr));
  other = connection(LV_AF_INET6);
  EXPECT_NE(lv_cookie_make(&other, kT0, kKeys, nullptr), c) << "the families are hashed apart";
  __u64 keys2[2][2] = {{kKeys[0][0], kKeys[0][1] ^ 1}, {kKeys[1][0], kKeys[1][1]}};
  EXPECT_FALSE(lv_cookie_check(&in, c, kT0, keys2, nullptr));
  other = in;
  other.isn++;
  EXPECT_FALSE(lv_cookie_check(&other, c, kT0, kKeys, nullptr)) << "the client's ISN";
  // The option bits are MAC'd: a client cannot change what the SYN asked for.
  for (uint32_t bit = 1; bit <= LV_COOKIE_PERIOD_BIT; bit <<= 1)
    EXPECT_FALSE(lv_cookie_check(&in, c ^ bit, kT0, kKeys, nullptr)) << "bit " << bit;
  EXPECT_FALSE(lv_cookie_check(&in, c ^ 0x200, kT0, kKeys, nullptr)) << "the MAC's lowest bit";
}

TEST(SynCookie, CarriesTheOptionsItWasMadeWith) {
  lv_cookie_in in = connection(LV_AF_INET6);
  in.isn = 0x12345678;
  in.opts = 3u << LV_COOKIE_OPT_MSS_SHIFT | LV_COOKIE_OPT_TS | LV_COOKIE_OPT_SACK | 9;
  const uint32_t c = lv_cookie_make(&in, kT0, kKeys, nullptr);
  EXPECT_EQ(c & LV_COOKIE_OPTS_MASK, in.opts);
  lv_cookie_in checked = in;
  checked.opts = 0;  // the check reads them from the cookie
  EXPECT_TRUE(lv_cookie_check(&checked, c, kT0, kKeys, nullptr));
  EXPECT_EQ(lv_cookie_mss(c, LV_AF_INET6), 8940);
  EXPECT_EQ(lv_cookie_mss(c, LV_AF_INET), 1460);
}

// The MSS is rounded down to the kernel's table (its own SYN cookies'), never up.
TEST(SynCookie, RoundsTheMssDown) {
  struct Case {
    uint8_t family;
    uint16_t mss, want;
  };
  for (Case k : {Case{LV_AF_INET, 1460, 1460}, Case{LV_AF_INET, 1459, 1440}, Case{LV_AF_INET, 1400, 1300},
                 Case{LV_AF_INET, 1299, 536}, Case{LV_AF_INET, 100, 536}, Case{LV_AF_INET, 9000, 1460},
                 Case{LV_AF_INET6, 1440, 1440}, Case{LV_AF_INET6, 1439, 1420}, Case{LV_AF_INET6, 9000, 8940},
                 Case{LV_AF_INET6, 1280, 1220}}) {
    const uint32_t opts = lv_cookie_mss_index(k.mss, k.family) << LV_COOKIE_OPT_MSS_SHIFT;
    EXPECT_EQ(lv_cookie_mss(opts, k.family), k.want) << k.mss << " in IPv" << int{k.family};
  }
}

// An epoch's cookies use its parity's key; the other key does not matter to them.
TEST(SynCookieKeys, AnEpochUsesItsOwnSlot) {
  const lv_cookie_in in = connection();
  const uint64_t t1 = kT0 + LV_COOKIE_EPOCH_PERIODS * LV_COOKIE_PERIOD_NS;  // the next epoch: slot 1
  __u64 other[2][2] = {{kKeys[0][0], kKeys[0][1]}, {1, 2}};
  EXPECT_EQ(lv_cookie_make(&in, kT0, kKeys, nullptr), lv_cookie_make(&in, kT0, other, nullptr))
      << "slot 1 is not epoch 0's";
  EXPECT_NE(lv_cookie_make(&in, t1, kKeys, nullptr), lv_cookie_make(&in, t1, other, nullptr)) << "slot 1 is epoch 1's";
  // A cookie from the last period of an epoch is checked, in the next epoch, with its own.
  const uint64_t last = t1 - LV_COOKIE_PERIOD_NS / 2;
  const uint32_t c = lv_cookie_make(&in, last, kKeys, nullptr);
  EXPECT_TRUE(lv_cookie_check(&in, c, t1 + 1000, kKeys, nullptr));
  EXPECT_TRUE(lv_cookie_check(&in, c, t1 + 1000, other, nullptr)) << "it needs slot 0 only";
}

// Whenever the window is open, the slot it names is used by no cookie made or checked
// within a period either side (the datapath's cached clock may lag), and it is the slot
// of the epoch after: the one the key is drawn for.
TEST(SynCookieKeys, TheSpareSlotHoldsNoLiveCookie) {
  const uint64_t step = LV_COOKIE_PERIOD_NS / 16;
  unsigned open = 0;
  for (uint64_t t = kT0; t < kT0 + 4 * LV_COOKIE_EPOCH_PERIODS * LV_COOKIE_PERIOD_NS; t += step) {
    __u64 next_epoch = 0;
    const int slot = lv_cookie_spare_slot(t, &next_epoch);
    if (slot < 0) continue;
    ++open;
    ASSERT_EQ(next_epoch, (t >> LV_COOKIE_PERIOD_SHIFT >> LV_COOKIE_EPOCH_SHIFT) + 1);
    ASSERT_EQ(static_cast<__u32>(slot), lv_cookie_key_slot(next_epoch << LV_COOKIE_EPOCH_SHIFT));
    // Cookies made from two periods before t (alive at t) to a period after it.
    for (uint64_t m = t - 2 * LV_COOKIE_PERIOD_NS; m <= t + LV_COOKIE_PERIOD_NS; m += step)
      ASSERT_NE(lv_cookie_key_slot(m >> LV_COOKIE_PERIOD_SHIFT), static_cast<__u32>(slot)) << "at " << t;
  }
  // Open for 5 of every 8 periods: far more than the daemon's loop needs.
  EXPECT_EQ(open, 4 * 5 * 16u);
}

}  // namespace
}  // namespace levee::test
