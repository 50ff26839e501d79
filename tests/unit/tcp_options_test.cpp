// tcp_options_test.cpp - bpf/shared/tcp_options.h: what levee reads of a SYN's options, what
// the cookie keeps of them and the options its SYN-ACK offers back.
#include <arpa/inet.h>

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "tcp_options.h"

namespace levee::test {
namespace {

lv_tcp_opts walk(const std::vector<uint8_t>& bytes) {
  lv_tcp_opts o{};
  for (size_t i = 0; i < bytes.size() && i < sizeof o.buf; ++i) o.buf[i] = bytes[i];
  lv_tcp_opts_start(&o, static_cast<__u32>(bytes.size()));
  for (int step = 0; step < LV_TCP_OPT_BYTES; ++step)
    if (lv_tcp_opt_step(&o)) break;
  return o;
}

// Linux's SYN: MSS 1460, SACK permitted, timestamps, NOP, window scale 7.
const std::vector<uint8_t> kLinuxSyn = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7};
// Windows': MSS 1460, NOP, window scale 8, NOP NOP, SACK permitted.
const std::vector<uint8_t> kWindowsSyn = {2, 4, 0x05, 0xb4, 1, 3, 3, 8, 1, 1, 4, 2};

TEST(TcpOptions, ReadsWhatCommonStacksSend) {
  lv_tcp_opts o = walk(kLinuxSyn);
  EXPECT_EQ(o.mss, 1460);
  EXPECT_EQ(o.wscale, 7);
  EXPECT_EQ(o.sack, 1);
  EXPECT_EQ(o.ts, 1);
  EXPECT_EQ(o.tsval, 1u);
  EXPECT_EQ(o.tsecr, 0u);
  o = walk(kWindowsSyn);
  EXPECT_EQ(o.mss, 1460);
  EXPECT_EQ(o.wscale, 8);
  EXPECT_EQ(o.sack, 1);
  EXPECT_EQ(o.ts, 0);
  o = walk({});
  EXPECT_EQ(o.mss, 0);
  EXPECT_EQ(o.wscale, LV_COOKIE_NO_WSCALE) << "none";
}

TEST(TcpOptions, AMalformedListEndsTheWalkAndKeepsWhatCameBefore) {
  EXPECT_EQ(walk({2, 4, 0x05, 0xb4, 3, 0, 7, 4, 2}).sack, 0) << "a zero length ends it";
  EXPECT_EQ(walk({2, 4, 0x05, 0xb4, 3, 0, 7, 4, 2}).mss, 1460);
  EXPECT_EQ(walk({2, 4, 0x05, 0xb4, 8, 10, 0, 0}).ts, 0) << "an option past the end";
  EXPECT_EQ(walk({0, 2, 4, 0x05, 0xb4}).mss, 0) << "after EOL nothing counts";
  EXPECT_EQ(walk({2, 3, 0x05, 4, 2}).mss, 0) << "an MSS of the wrong length is skipped";
  EXPECT_EQ(walk({2, 3, 0x05, 4, 2}).sack, 1) << "and what follows it read";
  EXPECT_EQ(walk({3, 3, 200}).wscale, LV_TCP_MAX_WSCALE) << "a shift over 14 means 14 (RFC 7323)";
  EXPECT_EQ(walk(std::vector<uint8_t>(40, 1)).mss, 0) << "40 NOPs";
}

// As Linux reads them (tcp_parse_options): a later MSS replaces an earlier one, but an
// MSS of 0 is ignored, so the one before it stands.
TEST(TcpOptions, AnMssOfZeroLeavesTheEarlierOne) {
  EXPECT_EQ(walk({2, 4, 0x05, 0xb4, 2, 4, 0, 0}).mss, 1460);
  EXPECT_EQ(walk({2, 4, 0, 0, 2, 4, 0x05, 0xb4}).mss, 1460);
  EXPECT_EQ(walk({2, 4, 0x05, 0xb4, 2, 4, 0x02, 0x18}).mss, 536) << "a later non-zero one replaces it";
  EXPECT_EQ(walk({2, 4, 0, 0}).mss, 0) << "none";
}

// Every byte string ends the walk within its length, reading nothing past it.
TEST(TcpOptions, EveryShortListEnds) {
  for (uint32_t a = 0; a < 256; ++a)
    for (uint32_t b = 0; b < 256; b += 3) {
      lv_tcp_opts o{};
      o.buf[0] = static_cast<uint8_t>(a);
      o.buf[1] = static_cast<uint8_t>(b);
      o.buf[2] = 2;  // past the length: must not be read as an option
      lv_tcp_opts_start(&o, 2);
      int steps = 0;
      while (!lv_tcp_opt_step(&o)) ASSERT_LT(++steps, 3);
      ASSERT_LE(o.off, 2u);
    }
}

std::vector<uint32_t> synack_options(const std::vector<uint8_t>& syn, uint16_t mss) {
  const lv_tcp_opts o = walk(syn);
  __u32 out[LV_SYNACK_OPT_WORDS] = {};
  const __u32 n = lv_synack_options(lv_cookie_opts_of(&o, LV_AF_INET), mss, 0x11223344, o.tsval, out);
  std::vector<uint32_t> words;
  for (__u32 i = 0; i < n; ++i) words.push_back(ntohl(out[i]));
  return words;
}

TEST(TcpOptions, TheSynAckOffersBackWhatTheSynAskedForAsLinuxPacksIt) {
  EXPECT_EQ(synack_options(kLinuxSyn, 1460),
            (std::vector<uint32_t>{0x020405b4, 0x01030307, 0x0402080a, 0x11223344, 0x00000001}));
  EXPECT_EQ(synack_options(kWindowsSyn, 1460), (std::vector<uint32_t>{0x020405b4, 0x01030307, 0x01010402}));
  EXPECT_EQ(synack_options({2, 4, 0x05, 0xb4}, 1440), (std::vector<uint32_t>{0x020405a0}));
  EXPECT_EQ(synack_options({8, 10, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0}, 0),
            (std::vector<uint32_t>{0x0101080a, 0x11223344, 0x00000009}))
      << "timestamps alone, without levee's MSS";
}

// levee rewrites the SYN into its SYN-ACK in place and never grows the frame: with the
// client's MSS option there, the SYN-ACK's options are never longer than the SYN's.
TEST(TcpOptions, TheSynAckIsNeverLongerThanASynWithAnMss) {
  for (uint32_t set = 0; set < 16; ++set) {
    std::vector<uint8_t> syn = {2, 4, 0x05, 0xb4};
    if (set & 1) syn.insert(syn.end(), {3, 3, 7});
    if (set & 2) syn.insert(syn.end(), {4, 2});
    if (set & 4) syn.insert(syn.end(), {8, 10, 1, 2, 3, 4, 0, 0, 0, 0});
    if (set & 8) syn.insert(syn.end(), {1});
    const size_t padded = (syn.size() + 3) / 4 * 4;
    EXPECT_LE(synack_options(syn, 1460).size() * 4, padded) << "options set " << set;
  }
}

}  // namespace
}  // namespace levee::test
