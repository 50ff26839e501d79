// frames_test.cpp - what the XDP program does with each kind of frame: a table of
// frames and the verdict and reason each must get (in the spirit of katran's
// BpfTester), run through BPF_PROG_TEST_RUN.
#include <linux/bpf.h>

#include <cerrno>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "packet.hpp"

namespace levee::progtest {
namespace {

using pkt::Frame;
using pkt::Layer;
using Bytes = std::vector<uint8_t>;

constexpr const char* kSrc4 = "198.18.0.10";
constexpr const char* kDst4 = "198.19.0.1";
constexpr const char* kSrc6 = "2001:db8::10";
constexpr const char* kDst6 = "2001:db8:ffff::1";
constexpr pkt::Mac kLldpMac{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};

struct FrameCase {
  std::string name;
  Bytes frame;
  uint32_t verdict;
  uint32_t reason;
};

void PrintTo(const FrameCase& c, std::ostream* os) { *os << c.name << " (" << c.frame.size() << " bytes)"; }

// A frame built, then changed: `edit` gets the bytes and the builder (for offsets).
Bytes edited(const Frame& f, const std::function<void(Bytes&, const Frame&)>& edit) {
  Bytes b = f.bytes();
  edit(b, f);
  return b;
}

Bytes cut(const Frame& f, size_t len) {
  Bytes b = f.bytes();
  b.resize(len);
  return b;
}

void put16(Bytes& b, size_t off, uint16_t v) {
  b[off] = static_cast<uint8_t>(v >> 8);
  b[off + 1] = static_cast<uint8_t>(v);
}

uint16_t get16(const Bytes& b, size_t off) { return static_cast<uint16_t>(b[off] << 8 | b[off + 1]); }

// IPv4 byte 0: version and IHL.
std::function<void(Bytes&, const Frame&)> ipv4_vihl(uint8_t v) {
  return [v](Bytes& b, const Frame& f) { b[f.layer(Layer::Ipv4)] = v; };
}
std::function<void(Bytes&, const Frame&)> ipv4_tot_len(uint16_t v) {
  return [v](Bytes& b, const Frame& f) { put16(b, f.layer(Layer::Ipv4) + 2, v); };
}

// The first `len` bytes of a frame, then zeros up to `to` bytes.
Bytes padded_runt(size_t len, size_t to) {
  Bytes b = Frame().eth().ipv4(kSrc4, kDst4).udp(1234, 53).bytes();
  b.resize(len);
  b.resize(to, 0);
  return b;
}

Frame udp4() { return Frame().eth().ipv4(kSrc4, kDst4).udp(1234, 53).payload(18); }
Frame udp6() { return Frame().eth().ipv6(kSrc6, kDst6).udp(1234, 53).payload(18); }

std::vector<FrameCase> frame_cases() {
  const uint32_t P = XDP_PASS, D = XDP_DROP;
  std::vector<FrameCase> c;
  auto add = [&](std::string name, Bytes frame, uint32_t verdict, uint32_t reason) {
    c.push_back({std::move(name), std::move(frame), verdict, reason});
  };

  // --- IP, limited (within the limit here) -------------------------------------------
  add("Ipv4Udp", udp4().bytes(), P, LV_R_CONFORMING);
  add("Ipv4Tcp", Frame().eth().ipv4(kSrc4, kDst4).tcp(40000, 80).bytes(), P, LV_R_CONFORMING);
  add("Ipv4Icmp", Frame().eth().ipv4(kSrc4, kDst4).icmp_echo().payload(56).bytes(), P, LV_R_CONFORMING);
  add("Ipv4PaddedToEthernetMinimum", Frame().eth().ipv4(kSrc4, kDst4).udp(1, 2).pad_to(60).bytes(), P, LV_R_CONFORMING);
  add("Ipv4HeaderOnlyPadded", Frame().eth().ipv4(kSrc4, kDst4).pad_to(60).bytes(), P, LV_R_CONFORMING);
  add("Ipv4BadChecksumIsStillJustLimited",
      edited(udp4(), [](Bytes& b, const Frame& f) { b[f.layer(Layer::Ipv4) + 10] ^= 0xff; }), P, LV_R_CONFORMING);
  add("Ipv4Options", Frame().eth().ipv4(kSrc4, kDst4, {0x94, 0x04, 0x00, 0x00}).udp(1, 2).bytes(), P, LV_R_CONFORMING);
  add("Ipv4FortyBytesOfOptions", Frame().eth().ipv4(kSrc4, kDst4, Bytes(40, 0x01)).udp(1, 2).bytes(), P,
      LV_R_CONFORMING);
  add("Ipv4FirstFragment", Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(0, true).udp(1, 2).payload(32).bytes(), P,
      LV_R_CONFORMING);
  add("Ipv4LaterFragment", Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(5, false).payload(24).bytes(), P,
      LV_R_CONFORMING);
  add("Ipv6Udp", udp6().bytes(), P, LV_R_CONFORMING);
  add("Ipv6Tcp", Frame().eth().ipv6(kSrc6, kDst6).tcp(40000, 443).bytes(), P, LV_R_CONFORMING);
  add("Ipv6Icmp6", Frame().eth().ipv6(kSrc6, kDst6).icmp6_echo().payload(56).bytes(), P, LV_R_CONFORMING);
  add("Ipv6Padded", Frame().eth().ipv6(kSrc6, kDst6).udp(1, 2).pad_to(80).bytes(), P, LV_R_CONFORMING);
  // Payload length 0 (a jumbogram's): the UDP header lies outside the payload. XDP frames
  // never carry a jumbogram, so it is malformed.
  add("Ipv6PayloadLengthZero", edited(udp6(), [](Bytes& b, const Frame& f) { put16(b, f.layer(Layer::Ipv6) + 4, 0); }),
      D, LV_R_MALFORMED);
  add("Ipv6HopByHop", Frame().eth().ipv6(kSrc6, kDst6).ipv6_ext(0).udp(1, 2).bytes(), P, LV_R_CONFORMING);
  add("Ipv6Routing", Frame().eth().ipv6(kSrc6, kDst6).ipv6_ext(43).udp(1, 2).bytes(), P, LV_R_CONFORMING);
  add("Ipv6DestinationOptions", Frame().eth().ipv6(kSrc6, kDst6).ipv6_ext(60).udp(1, 2).bytes(), P, LV_R_CONFORMING);
  add("Ipv6FirstFragment", Frame().eth().ipv6(kSrc6, kDst6).ipv6_frag(0, true).udp(1, 2).payload(32).bytes(), P,
      LV_R_CONFORMING);
  add("Ipv6LaterFragment", Frame().eth().ipv6(kSrc6, kDst6).ipv6_frag(5, false).payload(24).bytes(), P,
      LV_R_CONFORMING);
  add("Ipv6ExtensionChain",
      Frame().eth().ipv6(kSrc6, kDst6).ipv6_ext(0).ipv6_ext(60).ipv6_frag(0, true).udp(1, 2).bytes(), P,
      LV_R_CONFORMING);

  // --- VLAN tags ------------------------------------------------------------------
  add("Dot1qIpv4", Frame().eth().vlan(100).ipv4(kSrc4, kDst4).udp(1, 2).bytes(), P, LV_R_CONFORMING);
  add("Dot1qIpv6", Frame().eth().vlan(100).ipv6(kSrc6, kDst6).udp(1, 2).bytes(), P, LV_R_CONFORMING);
  add("Dot1qPriorityTagIpv4", Frame().eth().vlan(0).ipv4(kSrc4, kDst4).udp(1, 2).bytes(), P, LV_R_CONFORMING);
  add("QinQIpv4", Frame().eth().vlan(100, 0x88a8).vlan(200).ipv4(kSrc4, kDst4).udp(1, 2).bytes(), P, LV_R_CONFORMING);
  add("QinQIpv6", Frame().eth().vlan(100, 0x88a8).vlan(200).ipv6(kSrc6, kDst6).udp(1, 2).bytes(), P, LV_R_CONFORMING);
  add("TwoDot1qTags", Frame().eth().vlan(100).vlan(200).ipv4(kSrc4, kDst4).udp(1, 2).bytes(), P, LV_R_CONFORMING);
  add("Dot1qOuterDot1adInner", Frame().eth().vlan(100).vlan(200, 0x88a8).ipv4(kSrc4, kDst4).udp(1, 2).bytes(), P,
      LV_R_CONFORMING);
  add("ThreeTags", Frame().eth().vlan(100, 0x88a8).vlan(200).vlan(300).ipv4(kSrc4, kDst4).udp(1, 2).bytes(), D,
      LV_R_VLAN_DEPTH);
  add("ThreeDot1qTags", Frame().eth().vlan(1).vlan(2).vlan(3).ipv6(kSrc6, kDst6).udp(1, 2).bytes(), D, LV_R_VLAN_DEPTH);
  add("FourTags", Frame().eth().vlan(1, 0x88a8).vlan(2, 0x88a8).vlan(3).vlan(4).ipv4(kSrc4, kDst4).bytes(), D,
      LV_R_VLAN_DEPTH);
  add("ThreeTagsAroundArp", Frame().eth().vlan(1, 0x88a8).vlan(2).vlan(3).arp_request(kSrc4, kDst4).bytes(), D,
      LV_R_VLAN_DEPTH);
  // The third tag is judged by its TPID alone: not read, so a cut one is still depth.
  add("ThirdTagCut", cut(Frame().eth().vlan(1, 0x88a8).vlan(2).vlan(3), 14 + 8 + 1), D, LV_R_VLAN_DEPTH);

  // --- not IP: passed, never limited ---------------------------------------------------
  add("Arp", Frame().eth().arp_request(kSrc4, kDst4).pad_to(60).bytes(), P, LV_R_NOT_IP);
  add("Lldp", Frame().eth(kLldpMac).ethertype(0x88cc).payload(46).bytes(), P, LV_R_NOT_IP);
  add("Dot1qArp", Frame().eth().vlan(100).arp_request(kSrc4, kDst4).bytes(), P, LV_R_NOT_IP);
  add("QinQLldp", Frame().eth().vlan(100, 0x88a8).vlan(7).ethertype(0x88cc).payload(40).bytes(), P, LV_R_NOT_IP);
  add("EthernetHeaderOnlyArp", Frame().eth().ethertype(0x0806).bytes(), P, LV_R_NOT_IP);
  add("Ieee8023LengthField", Frame().eth().ethertype(0x002e).payload(46).bytes(), P, LV_R_NOT_IP);

  // --- truncated: dropped as malformed ---------------------------------------------------
  add("EthernetOnlyIpv4", Frame().eth().ethertype(0x0800).bytes(), D, LV_R_MALFORMED);
  add("EthernetOnlyIpv6", Frame().eth().ethertype(0x86dd).bytes(), D, LV_R_MALFORMED);
  // A runt the driver padded with zeros to a whole Ethernet header (what a 10-byte frame
  // arrives as): its type field reads as an 802.3 length of 0, too short for LLC.
  add("TenBytesPaddedWithZeros", padded_runt(10, 14), D, LV_R_MALFORMED);
  add("TenBytesPaddedToEthernetMinimum", padded_runt(10, 60), D, LV_R_MALFORMED);
  add("Ieee8023LengthBeyondFrame", Frame().eth().ethertype(0x002e).payload(45).bytes(), D, LV_R_MALFORMED);
  add("Ieee8023LengthBelowLlc", Frame().eth().ethertype(0x0002).payload(46).bytes(), D, LV_R_MALFORMED);
  add("Dot1qIeee8023LengthZero", Frame().eth().vlan(100).ethertype(0x0000).bytes(), D, LV_R_MALFORMED);
  add("EthernetOnlyVlan", Frame().eth().ethertype(0x8100).bytes(), D, LV_R_MALFORMED);
  add("PartialVlanTag", cut(Frame().eth().vlan(100).ipv4(kSrc4, kDst4), 14 + 2), D, LV_R_MALFORMED);
  add("PartialSecondVlanTag", cut(Frame().eth().vlan(100, 0x88a8).vlan(200).ipv4(kSrc4, kDst4), 14 + 4 + 3), D,
      LV_R_MALFORMED);
  add("PartialIpv4Header", cut(udp4(), 14 + 19), D, LV_R_MALFORMED);
  add("PartialIpv4HeaderAfterQinQ", cut(Frame().eth().vlan(1, 0x88a8).vlan(2).ipv4(kSrc4, kDst4).udp(1, 2), 22 + 12), D,
      LV_R_MALFORMED);
  add("PartialIpv6Header", cut(udp6(), 14 + 39), D, LV_R_MALFORMED);
  add("PartialIpv6HeaderAfterDot1q", cut(Frame().eth().vlan(5).ipv6(kSrc6, kDst6).udp(1, 2), 18 + 24), D,
      LV_R_MALFORMED);

  // --- inconsistent IPv4 ------------------------------------------------------------------
  add("Ipv4Version6", edited(udp4(), ipv4_vihl(0x65)), D, LV_R_MALFORMED);
  add("Ipv4Version0", edited(udp4(), ipv4_vihl(0x05)), D, LV_R_MALFORMED);
  add("Ipv4Ihl4", edited(udp4(), ipv4_vihl(0x44)), D, LV_R_MALFORMED);
  add("Ipv4Ihl0", edited(udp4(), ipv4_vihl(0x40)), D, LV_R_MALFORMED);
  // IHL 15 (60 bytes) on a 46-byte datagram: the header runs past tot_len and the frame.
  add("Ipv4IhlBeyondFrame", edited(udp4(), ipv4_vihl(0x4f)), D, LV_R_MALFORMED);
  add("Ipv4IhlAndTotLenBeyondFrame",
      edited(udp4(),
             [](Bytes& b, const Frame& f) {
               b[f.layer(Layer::Ipv4)] = 0x4f;
               put16(b, f.layer(Layer::Ipv4) + 2, 60);
             }),
      D, LV_R_MALFORMED);
  add("Ipv4TotLenBelowIhl", edited(udp4(), ipv4_tot_len(19)), D, LV_R_MALFORMED);
  add("Ipv4TotLenZero", edited(udp4(), ipv4_tot_len(0)), D, LV_R_MALFORMED);
  add("Ipv4TotLenBelowIhlWithOptions",
      edited(Frame().eth().ipv4(kSrc4, kDst4, {1, 1, 1, 1}).udp(1, 2), ipv4_tot_len(23)), D, LV_R_MALFORMED);
  add("Ipv4TotLenOnePastFrame",
      edited(
          udp4(),
          [](Bytes& b, const Frame& f) { put16(b, f.layer(Layer::Ipv4) + 2, get16(b, f.layer(Layer::Ipv4) + 2) + 1); }),
      D, LV_R_MALFORMED);
  add("Ipv4TotLenMax", edited(udp4(), ipv4_tot_len(0xffff)), D, LV_R_MALFORMED);
  add("Ipv4TotLenPastFrameBehindVlan",
      edited(Frame().eth().vlan(9).ipv4(kSrc4, kDst4).udp(1, 2).pad_to(60), ipv4_tot_len(60 - 18 + 1)), D,
      LV_R_MALFORMED);

  // --- inconsistent IPv6 ------------------------------------------------------------------
  add("Ipv6Version4", edited(udp6(), [](Bytes& b, const Frame& f) { b[f.layer(Layer::Ipv6)] = 0x40; }), D,
      LV_R_MALFORMED);
  add("Ipv6PayloadOnePastFrame",
      edited(
          udp6(),
          [](Bytes& b, const Frame& f) { put16(b, f.layer(Layer::Ipv6) + 4, get16(b, f.layer(Layer::Ipv6) + 4) + 1); }),
      D, LV_R_MALFORMED);
  add("Ipv6PayloadMax", edited(udp6(), [](Bytes& b, const Frame& f) { put16(b, f.layer(Layer::Ipv6) + 4, 0xffff); }), D,
      LV_R_MALFORMED);
  return c;
}

class FrameVerdict : public ProgTest, public ::testing::WithParamInterface<FrameCase> {};

TEST_P(FrameVerdict, GetsItsVerdictAndReason) {
  const FrameCase& fc = GetParam();
  dp().set_class(make_class(1000, 100));
  const RunResult r = dp().run(fc.frame);
  ASSERT_EQ(r.err, 0) << fc.name;
  EXPECT_EQ(r.retval, fc.verdict);
  const Counters got = dp().counters();
  Counters want{};
  want[fc.reason] = {1, fc.frame.size()};
  for (uint32_t reason = 0; reason < LV_REASON_MAX; ++reason) {
    EXPECT_EQ(got[reason].packets, want[reason].packets) << reason_name(reason);
    EXPECT_EQ(got[reason].bytes, want[reason].bytes) << reason_name(reason);
  }
  // Only limited packets create per-source state.
  EXPECT_EQ(dp().state_count(), fc.reason == LV_R_CONFORMING ? 1u : 0u) << describe(got);
}

INSTANTIATE_TEST_SUITE_P(Table, FrameVerdict, ::testing::ValuesIn(frame_cases()),
                         [](const ::testing::TestParamInfo<FrameCase>& info) { return info.param.name; });

// The whole table through one program: every reason's packets
// and bytes must be exactly what was sent.
TEST_F(ProgTest, CountersMatchWhatWasSentPerReason) {
  dp().set_class(make_class(1000, 1000));
  Counters want{};
  const auto cases = frame_cases();
  // Every fourth frame three times in one run (a run with repeat > 1 costs ~20 ms).
  for (size_t i = 0; i < cases.size(); ++i) {
    const FrameCase& fc = cases[i];
    const int repeat = i % 4 == 3 ? 3 : 1;
    SCOPED_TRACE(fc.name);
    const RunResult r = dp().run(fc.frame, repeat);
    ASSERT_EQ(r.err, 0);
    EXPECT_EQ(r.retval, fc.verdict);
    want[fc.reason].packets += static_cast<uint64_t>(repeat);
    want[fc.reason].bytes += static_cast<uint64_t>(repeat) * fc.frame.size();
  }
  const Counters got = dp().counters();
  for (uint32_t reason = 0; reason < LV_REASON_MAX; ++reason) {
    EXPECT_EQ(got[reason].packets, want[reason].packets) << reason_name(reason);
    EXPECT_EQ(got[reason].bytes, want[reason].bytes) << reason_name(reason);
  }
  EXPECT_GT(want[LV_R_CONFORMING].packets, 0u);
  EXPECT_GT(want[LV_R_MALFORMED].packets, 0u);
  EXPECT_GT(want[LV_R_NOT_IP].packets, 0u);
  EXPECT_GT(want[LV_R_VLAN_DEPTH].packets, 0u);
  // All IPv4 cases came from one source, all IPv6 ones from another.
  EXPECT_EQ(dp().state_count(), 2u);
}

TEST_F(ProgTest, KernelRefusesFramesShorterThanEthernet) {
  // BPF_PROG_TEST_RUN itself rejects data_in shorter than ETH_HLEN with EINVAL, so the
  // program never sees such a frame here (a driver would not hand it one either).
  dp().set_class(make_class(1000, 100));
  const Bytes full = udp4().bytes();
  for (size_t len : {size_t{1}, size_t{6}, size_t{13}}) {
    const Bytes runt(full.begin(), full.begin() + static_cast<long>(len));
    EXPECT_EQ(dp().run(runt).err, -EINVAL) << len << " bytes";
  }
  const Counters none{};
  const Counters got = dp().counters();
  for (uint32_t reason = 0; reason < LV_REASON_MAX; ++reason)
    EXPECT_EQ(got[reason].packets, none[reason].packets) << reason_name(reason);
  // 14 bytes is the shortest frame that runs: an IPv4 ethertype with nothing after it.
  const RunResult r = dp().run(Bytes(full.begin(), full.begin() + 14));
  ASSERT_EQ(r.err, 0);
  EXPECT_EQ(r.retval, uint32_t{XDP_DROP});
  EXPECT_EQ(dp().counters()[LV_R_MALFORMED].packets, 1u);
}

}  // namespace
}  // namespace levee::progtest
