// syncookie_test.cpp - bpf/syncookie.h (the SYN cookie the XDP program makes and checks):
// SipHash-2-4 against its published vectors, and the cookie's lifetime and binding.
#include <cstdint>

#include <gtest/gtest.h>

#include "syncookie.h"

namespace levee::test {
namespace {

constexpr __u64 kReferenceKey[2] = {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};

// SipHash-2-4 of the reference message 00 01 02 ... (whole blocks), reference key.
uint64_t reference_siphash(uint32_t blocks) {
  lv_sip s{};
  lv_sip_init(&s, kReferenceKey);
  for (uint32_t b = 0; b < blocks; ++b) {
    uint64_t m = 0;
    for (uint32_t i = 0; i < 8; ++i) m |= uint64_t{8 * b + i} << (8 * i);
    lv_sip_block(&s, m);
  }
  return lv_sip_final(&s, blocks);
}

TEST(SipHash, MatchesThePublishedVectors) {
  EXPECT_EQ(reference_siphash(0), 0x726fdb47dd0e0e31ULL);
  EXPECT_EQ(reference_siphash(1), 0x93f5f5799a932462ULL);
  EXPECT_EQ(reference_siphash(2), 0x3f2acc7f57c29bdbULL);
  EXPECT_EQ(reference_siphash(3), 0xb8ad50c6f649af94ULL);
}

constexpr __u64 kKey[2] = {0x1111222233334444ULL, 0x5555666677778888ULL};
constexpr uint64_t kT0 = 1000 * LV_COOKIE_PERIOD_NS + 12345;  // early in a period

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

TEST(SynCookie, GoodForItsPeriodAndTheNextOnly) {
  for (uint8_t family : {LV_AF_INET, LV_AF_INET6}) {
    const lv_cookie_in in = connection(family);
    const uint32_t c = lv_cookie_make(&in, kT0, kKey);
    EXPECT_EQ(c & ~(LV_COOKIE_MAC_MASK | LV_COOKIE_PERIOD_BIT), 0u) << "option bits stay free";
    EXPECT_TRUE(lv_cookie_check(&in, c, kT0, kKey));
    EXPECT_TRUE(lv_cookie_check(&in, c, kT0 + LV_COOKIE_PERIOD_NS, kKey)) << "the next period";
    EXPECT_TRUE(lv_cookie_check(&in, c, kT0 - 12346 + 2 * LV_COOKIE_PERIOD_NS - 1, kKey)) << "its last ns";
    EXPECT_FALSE(lv_cookie_check(&in, c, kT0 - 12345 + 2 * LV_COOKIE_PERIOD_NS, kKey)) << "two periods on";
    EXPECT_FALSE(lv_cookie_check(&in, c, kT0 + 3 * LV_COOKIE_PERIOD_NS, kKey));
  }
}

TEST(SynCookie, BindsTheConnectionAndTheKey) {
  const lv_cookie_in in = connection();
  const uint32_t c = lv_cookie_make(&in, kT0, kKey);
  lv_cookie_in other = in;
  other.sport++;
  EXPECT_FALSE(lv_cookie_check(&other, c, kT0, kKey));
  other = in;
  other.saddr[3] ^= 0x01000000;
  EXPECT_FALSE(lv_cookie_check(&other, c, kT0, kKey));
  other = in;
  other.dport = 443;
  EXPECT_FALSE(lv_cookie_check(&other, c, kT0, kKey));
  other = connection(LV_AF_INET6);
  EXPECT_NE(lv_cookie_make(&other, kT0, kKey), c) << "the families are hashed apart";
  const __u64 key2[2] = {kKey[0], kKey[1] ^ 1};
  EXPECT_FALSE(lv_cookie_check(&in, c, kT0, key2));
  // Only the MAC's bits are checked: the option bits are the handshake's.
  EXPECT_TRUE(lv_cookie_check(&in, c | 0x7f, kT0, kKey));
  EXPECT_FALSE(lv_cookie_check(&in, c ^ 0x100, kT0, kKey));
}

}  // namespace
}  // namespace levee::test
