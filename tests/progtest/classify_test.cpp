// classify_test.cpp - traffic classes in the kernel: a table of frames and the class each
// must fall in, seen where the datapath records it (the per-class counters
// lv_percpu.by_class and the class_id of the lv_state key), with policies installed
// through the controller's path (validate, compile, PolicyMap).
#include <linux/bpf.h>
#include <netinet/in.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "frames.hpp"
#include "packet.hpp"
#include "policy/keys.hpp"

namespace levee::progtest {
namespace {

using pkt::Frame;
using pkt::kTcpAck;
using pkt::kTcpFin;
using pkt::kTcpRst;
using pkt::kTcpSyn;

constexpr uint32_t kPass = XDP_PASS, kDrop = XDP_DROP;
constexpr int kNoClass = -1;
constexpr const char* kSrc4 = "198.18.7.1";
constexpr const char* kSrc6 = "2001:db8:7::1";
constexpr Rate kRoomy{1000, 1000};  // every packet of a case passes its limit

// Table A: every kind of match, overlaps, and port-less classes for fragments.
enum ClassA : int {
  kDns,
  kSshSyn,
  kSsh,
  kRange,
  kEarly,
  kLate,
  kIcmp,
  kIcmp6,
  kOther,
  kSynAny,
  kUdpAny,
  kTcpAny,
  kDefaultA,
};

Policy table_a() {
  Policy p;
  p.classes = {
      class_spec("dns", on({Proto::Udp}, {{53, 53}}), kRoomy),
      class_spec("ssh-syn", on({Proto::Tcp}, {{22, 22}}, true), kRoomy),
      class_spec("ssh", on({Proto::Tcp}, {{22, 22}}), kRoomy),
      class_spec("range", on({Proto::Tcp}, {{1000, 2000}}), kRoomy),
      class_spec("early", on({Proto::Udp}, {{5000, 5100}}), kRoomy),
      class_spec("late", on({Proto::Udp}, {{5050, 5200}}), kRoomy),
      class_spec("icmp", on({Proto::Icmp}), kRoomy),
      class_spec("icmp6", on({Proto::Icmp6}), kRoomy),
      class_spec("other", on({Proto::Other}), kRoomy),
      class_spec("syn-any", on({Proto::Tcp}, {}, true), kRoomy),
      class_spec("udp-any", on({Proto::Udp}), kRoomy),
      class_spec("tcp-any", on({Proto::Tcp}), kRoomy),
      class_spec("default", Match{}, kRoomy),
  };
  p.source = "classify_test table A";
  return p;
}

// Table B: no port-less class for UDP or plain TCP, so their fragments go to the default.
enum ClassB : int { kDnsB, kWebB, kSynAnyB, kDefaultB };

Policy table_b() {
  Policy p;
  p.classes = {
      class_spec("dns", on({Proto::Udp}, {{53, 53}}), kRoomy),
      class_spec("web", on({Proto::Tcp}, {{80, 80}}), kRoomy),
      class_spec("syn-any", on({Proto::Tcp}, {}, true), kRoomy),
      class_spec("default", Match{}, kRoomy),
  };
  return p;
}

// Table C: reflection. A class of UDP source ports (what amplifiers answer from) after
// a destination-port class, which keeps its own packets (first match wins).
enum ClassC : int { kDnsServerC, kReflectionC, kDefaultC };

Policy table_c() {
  Match reflection = on({Proto::Udp});
  reflection.sports = {{19, 19}, {53, 53}, {123, 123}, {11211, 11211}};
  Policy p;
  p.classes = {
      class_spec("dns-server", on({Proto::Udp}, {{53, 53}}), kRoomy),
      class_spec("reflection", reflection, kRoomy),
      class_spec("default", Match{}, kRoomy),
  };
  return p;
}

Policy table(char t) {
  if (t == 'A') return table_a();
  return t == 'B' ? table_b() : table_c();
}

struct ClassCase {
  std::string name;
  char table;  // 'A', 'B' or 'C'
  Bytes frame;
  int cls;  // kNoClass: dropped before classification
  uint32_t verdict = kPass;
  uint32_t reason = LV_R_CONFORMING;
  std::string src = kSrc4;
};

void PrintTo(const ClassCase& c, std::ostream* os) { *os << c.name; }

// IPv6 with extension headers `exts` (0, 43, 60, 51: 8 bytes each; 44: a first
// fragment) and then UDP to 53.
Bytes ipv6_exts_udp53(const std::vector<uint8_t>& exts) {
  Frame f = Frame().eth().ipv6(kSrc6, kDst6);
  for (uint8_t t : exts) {
    if (t == IPPROTO_FRAGMENT)
      f.ipv6_frag(0, true);
    else
      f.ipv6_ext(t);
  }
  return f.udp(40000, 53).payload(18).bytes();
}

std::vector<ClassCase> class_cases() {
  std::vector<ClassCase> c;
  auto A = [&](std::string name, Bytes frame, int cls, std::string src = kSrc4) {
    c.push_back({std::move(name), 'A', std::move(frame), cls, kPass, LV_R_CONFORMING, std::move(src)});
  };
  auto B = [&](std::string name, Bytes frame, int cls, std::string src = kSrc4) {
    c.push_back({std::move(name), 'B', std::move(frame), cls, kPass, LV_R_CONFORMING, std::move(src)});
  };
  auto C = [&](std::string name, Bytes frame, int cls, std::string src = kSrc4) {
    c.push_back({std::move(name), 'C', std::move(frame), cls, kPass, LV_R_CONFORMING, std::move(src)});
  };
  auto A_drop = [&](std::string name, Bytes frame, uint32_t reason, std::string src = kSrc4) {
    c.push_back({std::move(name), 'A', std::move(frame), kNoClass, kDrop, reason, std::move(src)});
  };

  // --- destination ports and SYN -----------------------------------------------------
  A("UdpTo53IsDns", udp_from(kSrc4, 53), kDns);
  A("Ipv6UdpTo53IsDns", udp_from(kSrc6, 53), kDns, kSrc6);
  A("UdpTo52IsUdpAny", udp_from(kSrc4, 52), kUdpAny);
  A("UdpTo54IsUdpAny", udp_from(kSrc4, 54), kUdpAny);
  A("UdpToPort0IsUdpAny", udp_from(kSrc4, 0), kUdpAny);
  A("UdpToPort65535IsUdpAny", udp_from(kSrc4, 65535), kUdpAny);
  A("TcpTo53IsNotDns", tcp_from(kSrc4, 53, kTcpAck), kTcpAny);
  A("SynTo22IsSshSyn", tcp_from(kSrc4, 22, kTcpSyn), kSshSyn);
  A("Ipv6SynTo22IsSshSyn", tcp_from(kSrc6, 22, kTcpSyn), kSshSyn, kSrc6);
  A("SynFinTo22IsSshSyn", tcp_from(kSrc4, 22, kTcpSyn | kTcpFin), kSshSyn);
  A("AckTo22IsSsh", tcp_from(kSrc4, 22, kTcpAck), kSsh);
  A("SynAckTo22IsSsh", tcp_from(kSrc4, 22, kTcpSyn | kTcpAck), kSsh);
  A("RstTo22IsSsh", tcp_from(kSrc4, 22, kTcpRst), kSsh);
  A("NoFlagsTo22IsSsh", tcp_from(kSrc4, 22, 0), kSsh);
  A("SynTo23IsSynAny", tcp_from(kSrc4, 23, kTcpSyn), kSynAny);
  A("AckTo23IsTcpAny", tcp_from(kSrc4, 23, kTcpAck), kTcpAny);
  A("SynAckTo23IsTcpAny", tcp_from(kSrc4, 23, kTcpSyn | kTcpAck), kTcpAny);
  // Range 1000-2000 on TCP, both edges and just outside.
  A("AckTo999IsTcpAny", tcp_from(kSrc4, 999, kTcpAck), kTcpAny);
  A("AckTo1000IsRange", tcp_from(kSrc4, 1000, kTcpAck), kRange);
  A("AckTo1500IsRange", tcp_from(kSrc4, 1500, kTcpAck), kRange);
  A("AckTo2000IsRange", tcp_from(kSrc4, 2000, kTcpAck), kRange);
  A("AckTo2001IsTcpAny", tcp_from(kSrc4, 2001, kTcpAck), kTcpAny);
  A("SynTo999IsSynAny", tcp_from(kSrc4, 999, kTcpSyn), kSynAny);
  A("SynTo1000IsRange", tcp_from(kSrc4, 1000, kTcpSyn), kRange);  // a port class sees SYNs too
  A("SynTo2000IsRange", tcp_from(kSrc4, 2000, kTcpSyn), kRange);
  A("SynTo2001IsSynAny", tcp_from(kSrc4, 2001, kTcpSyn), kSynAny);
  A("UdpTo1500IsNotTheTcpRange", udp_from(kSrc4, 1500), kUdpAny);
  A("Ipv6AckTo2000IsRange", tcp_from(kSrc6, 2000, kTcpAck), kRange, kSrc6);
  A("Ipv6AckTo2001IsTcpAny", tcp_from(kSrc6, 2001, kTcpAck), kTcpAny, kSrc6);
  // Overlap: early 5000-5100 before late 5050-5200.
  A("UdpTo4999IsUdpAny", udp_from(kSrc4, 4999), kUdpAny);
  A("UdpTo5000IsEarly", udp_from(kSrc4, 5000), kEarly);
  A("UdpTo5050IsEarlyFirstMatch", udp_from(kSrc4, 5050), kEarly);
  A("UdpTo5100IsEarlyFirstMatch", udp_from(kSrc4, 5100), kEarly);
  A("UdpTo5101IsLate", udp_from(kSrc4, 5101), kLate);
  A("UdpTo5200IsLate", udp_from(kSrc4, 5200), kLate);
  A("UdpTo5201IsUdpAny", udp_from(kSrc4, 5201), kUdpAny);

  // --- protocols without ports ---------------------------------------------------------
  A("Ipv4IcmpIsIcmp", Frame().eth().ipv4(kSrc4, kDst4).icmp_echo().payload(56).bytes(), kIcmp);
  A("Ipv6Icmp6IsIcmp6", Frame().eth().ipv6(kSrc6, kDst6).icmp6_echo().payload(56).bytes(), kIcmp6, kSrc6);
  A("Ipv6Icmp6AfterHopByHopIsIcmp6", Frame().eth().ipv6(kSrc6, kDst6).ipv6_ext(0).icmp6_echo().bytes(), kIcmp6, kSrc6);
  A("Ipv4GreIsOther", ip_proto_from(kSrc4, 47), kOther);
  A("Ipv6GreIsOther", ip_proto_from(kSrc6, 47), kOther, kSrc6);
  A("Ipv4EspIsOther", ip_proto_from(kSrc4, 50), kOther);
  A("Ipv6NoNextHeaderIsOther", ip_proto_from(kSrc6, 59), kOther, kSrc6);
  A("Ipv6CarryingIcmpv4IsOther", ip_proto_from(kSrc6, IPPROTO_ICMP), kOther, kSrc6);
  A("Ipv4CarryingIcmpv6IsOther", ip_proto_from(kSrc4, IPPROTO_ICMPV6), kOther);
  A("Ipv4HeaderOnlyProto0IsOther", Frame().eth().ipv4(kSrc4, kDst4).pad_to(60).bytes(), kOther);

  // --- fragments -------------------------------------------------------------------------
  A("Ipv4FirstFragmentIsClassifiedByPorts",
    Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(0, true).udp(40000, 53).payload(64).bytes(), kDns);
  A("Ipv4FirstFragmentSynTo22",
    Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(0, true).tcp(40000, 22).payload(16).bytes(), kSshSyn);
  // A later fragment's first bytes look like a UDP header to 53: they are data, not ports.
  A("Ipv4LaterUdpFragmentIsUdpAny",
    Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(185, false).udp(40000, 53).payload(16).bytes(), kUdpAny);
  A("Ipv4UdpFragmentAtOffset1IsUdpAny",
    Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(1, true).udp(40000, 53).payload(16).bytes(), kUdpAny);
  // The SYN-only class before tcp-any matches no fragment: a fragment has no flags.
  A("Ipv4LaterTcpFragmentIsTcpAny",
    Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(100, true).tcp(40000, 22).payload(16).bytes(), kTcpAny);
  A("Ipv4LaterIcmpFragmentIsIcmp",
    Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(100, false).icmp_echo().payload(16).bytes(), kIcmp);
  A(
      "Ipv4LaterGreFragmentIsOther",
      [] {
        Frame f = Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(100, false).payload(24);
        Bytes b = f.bytes();
        b[f.layer(pkt::Layer::Ipv4) + 9] = 47;
        fix_ipv4_checksum(b, f);
        return b;
      }(),
      kOther);
  A("Ipv6FragmentOffset0IsClassifiedByPorts",
    Frame().eth().ipv6(kSrc6, kDst6).ipv6_frag(0, true).udp(40000, 53).payload(64).bytes(), kDns, kSrc6);
  A("Ipv6AtomicFragmentIsClassifiedByPorts",
    Frame().eth().ipv6(kSrc6, kDst6).ipv6_frag(0, false).tcp(40000, 22).bytes(), kSshSyn, kSrc6);
  A("Ipv6LaterUdpFragmentIsUdpAny",
    Frame().eth().ipv6(kSrc6, kDst6).ipv6_frag(185, false).udp(40000, 53).payload(16).bytes(), kUdpAny, kSrc6);
  A("Ipv6UdpFragmentAtOffset1IsUdpAny",
    Frame().eth().ipv6(kSrc6, kDst6).ipv6_frag(1, true).udp(40000, 53).payload(16).bytes(), kUdpAny, kSrc6);
  A("Ipv6LaterTcpFragmentIsTcpAny",
    Frame().eth().ipv6(kSrc6, kDst6).ipv6_frag(7, true).tcp(40000, 22).payload(16).bytes(), kTcpAny, kSrc6);
  A("Ipv6LaterIcmp6FragmentIsIcmp6",
    Frame().eth().ipv6(kSrc6, kDst6).ipv6_frag(7, false).icmp6_echo().payload(16).bytes(), kIcmp6, kSrc6);
  A("Ipv6LaterFragmentAfterHopByHopIsUdpAny",
    Frame().eth().ipv6(kSrc6, kDst6).ipv6_ext(0).ipv6_frag(9, false).udp(40000, 53).bytes(), kUdpAny, kSrc6);

  // --- IPv6 extension header chains ---------------------------------------------------
  A("Ipv6TwoExtensionHeaders", ipv6_exts_udp53({IPPROTO_HOPOPTS, IPPROTO_DSTOPTS}), kDns, kSrc6);
  A("Ipv6AuthHeader", ipv6_exts_udp53({IPPROTO_AH}), kDns, kSrc6);
  const std::vector<uint8_t> eight = {IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING, IPPROTO_FRAGMENT,
                                      IPPROTO_DSTOPTS, IPPROTO_ROUTING, IPPROTO_AH,      IPPROTO_DSTOPTS};
  A("Ipv6EightExtensionHeaders", ipv6_exts_udp53(eight), kDns, kSrc6);
  {
    std::vector<uint8_t> nine = eight;
    nine.push_back(IPPROTO_DSTOPTS);
    A_drop("Ipv6NineExtensionHeadersIsExtDepth", ipv6_exts_udp53(nine), LV_R_EXT_DEPTH, kSrc6);
    std::vector<uint8_t> nine_frag = {IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING,
                                      IPPROTO_DSTOPTS, IPPROTO_ROUTING, IPPROTO_DSTOPTS,
                                      IPPROTO_ROUTING, IPPROTO_DSTOPTS, IPPROTO_FRAGMENT};
    A_drop("Ipv6NinthHeaderAFragmentIsExtDepth", ipv6_exts_udp53(nine_frag), LV_R_EXT_DEPTH, kSrc6);
  }
  {
    // Seven plain headers and a later fragment as the eighth: classified by protocol.
    Frame f = Frame().eth().ipv6(kSrc6, kDst6);
    for (int i = 0; i < 7; ++i) f.ipv6_ext(IPPROTO_DSTOPTS);
    A("Ipv6EighthHeaderALaterFragment", f.ipv6_frag(3, false).udp(40000, 53).bytes(), kUdpAny, kSrc6);
  }

  // --- transport headers that end beyond the IP payload ---------------------------------
  {
    Frame udp = Frame().eth().ipv4(kSrc4, kDst4).udp(40000, 53).pad_to(60);
    A("Ipv4UdpHeaderExactlyTheIpPayload", with_ip_length(udp, 20 + 8), kDns);
    A_drop("Ipv4UdpHeaderEndsInEthernetPadding", with_ip_length(udp, 20 + 7), LV_R_MALFORMED);
    A_drop("Ipv4UdpHeaderEntirelyInEthernetPadding", with_ip_length(udp, 20), LV_R_MALFORMED);
    Frame tcp = Frame().eth().ipv4(kSrc4, kDst4).tcp(40000, 22).pad_to(60);
    A("Ipv4TcpHeaderExactlyTheIpPayload", with_ip_length(tcp, 20 + 20), kSshSyn);
    A_drop("Ipv4TcpHeaderEndsInEthernetPadding", with_ip_length(tcp, 20 + 19), LV_R_MALFORMED);
    Frame opts = Frame().eth().ipv4(kSrc4, kDst4, {1, 1, 1, 1}).udp(40000, 53).pad_to(64);
    A_drop("Ipv4WithOptionsUdpHeaderEndsInPadding", with_ip_length(opts, 24 + 7), LV_R_MALFORMED);
    Frame udp6 = Frame().eth().ipv6(kSrc6, kDst6).udp(40000, 53).pad_to(80);
    A("Ipv6UdpHeaderExactlyThePayload", with_ip_length(udp6, 8), kDns, kSrc6);
    A_drop("Ipv6UdpHeaderEndsInEthernetPadding", with_ip_length(udp6, 7), LV_R_MALFORMED, kSrc6);
    Frame tcp6 = Frame().eth().ipv6(kSrc6, kDst6).ipv6_ext(IPPROTO_HOPOPTS).tcp(40000, 22).pad_to(100);
    A("Ipv6TcpAfterExtExactlyThePayload", with_ip_length(tcp6, 8 + 20), kSshSyn, kSrc6);
    A_drop("Ipv6TcpAfterExtEndsInEthernetPadding", with_ip_length(tcp6, 8 + 19), LV_R_MALFORMED, kSrc6);
    Frame ext6 = Frame().eth().ipv6(kSrc6, kDst6).ipv6_ext(IPPROTO_DSTOPTS).udp(40000, 53).pad_to(100);
    A_drop("Ipv6ExtHeaderEndsInEthernetPadding", with_ip_length(ext6, 7), LV_R_MALFORMED, kSrc6);
  }
  // --- tiny first fragments: too short for the ports (RFC 1858) ---------------------------
  {
    Frame f = Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(0, true).udp(40000, 53).payload(16);
    A_drop("Ipv4TinyFirstUdpFragment", with_ip_length(f, 20 + 4), LV_R_MALFORMED);
    Bytes cut = with_ip_length(f, 20 + 4);
    cut.resize(14 + 20 + 4);
    A_drop("Ipv4TinyFirstUdpFragmentUnpadded", cut, LV_R_MALFORMED);
    Frame t = Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(0, true).tcp(40000, 22).payload(16);
    A_drop("Ipv4FirstTcpFragmentWithPortsButNoFlags", with_ip_length(t, 20 + 8), LV_R_MALFORMED);
    Frame f6 = Frame().eth().ipv6(kSrc6, kDst6).ipv6_frag(0, true).udp(40000, 53).payload(16);
    A_drop("Ipv6TinyFirstUdpFragment", with_ip_length(f6, 8 + 4), LV_R_MALFORMED, kSrc6);
    Frame t6 = Frame().eth().ipv6(kSrc6, kDst6).ipv6_frag(0, true).tcp(40000, 22).payload(16);
    A_drop("Ipv6FirstTcpFragmentWithPortsButNoFlags", with_ip_length(t6, 8 + 8), LV_R_MALFORMED, kSrc6);
  }

  // --- table B: fragments without a port-less class of their protocol ---------------------
  B("BUdpTo53IsDns", udp_from(kSrc4, 53), kDnsB);
  B("BUdpTo54IsDefault", udp_from(kSrc4, 54), kDefaultB);
  B("BSynTo80IsWeb", tcp_from(kSrc4, 80, kTcpSyn), kWebB);
  B("BSynTo81IsSynAny", tcp_from(kSrc4, 81, kTcpSyn), kSynAnyB);
  B("BAckTo81IsDefault", tcp_from(kSrc4, 81, kTcpAck), kDefaultB);
  B("BIpv4LaterUdpFragmentIsDefault",
    Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(185, false).udp(40000, 53).payload(16).bytes(), kDefaultB);
  B("BIpv4LaterTcpFragmentIsDefaultNotSynAny",
    Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(185, false).tcp(40000, 80).payload(16).bytes(), kDefaultB);
  B("BIpv6LaterUdpFragmentIsDefault",
    Frame().eth().ipv6(kSrc6, kDst6).ipv6_frag(185, false).udp(40000, 53).payload(16).bytes(), kDefaultB, kSrc6);
  B("BIpv4IcmpIsDefault", Frame().eth().ipv4(kSrc4, kDst4).icmp_echo().bytes(), kDefaultB);
  B("BIpv6GreIsDefault", ip_proto_from(kSrc6, 47), kDefaultB, kSrc6);

  // --- table C: source ports -----------------------------------------------------------
  auto udp_ports = [](const char* src, uint16_t sport, uint16_t dport) {
    return ip_from(src).udp(sport, dport).payload(18).bytes();
  };
  C("CNtpReplyToAnyPortIsReflection", udp_ports(kSrc4, 123, 40000), kReflectionC);
  C("CIpv6MemcachedReplyIsReflection", udp_ports(kSrc6, 11211, 1), kReflectionC, kSrc6);
  C("CChargenReplyIsReflection", udp_ports(kSrc4, 19, 65535), kReflectionC);
  C("CDnsReplyToThePortOfTheClassBeforeIsDnsServer", udp_ports(kSrc4, 53, 53), kDnsServerC);
  C("CSourcePort124IsDefault", udp_ports(kSrc4, 124, 40000), kDefaultC);
  C("CTcpFrom123IsDefault", ip_from(kSrc4).tcp(123, 40000, kTcpAck).bytes(), kDefaultC);
  C("CIpv4FirstFragmentFrom123IsReflection",
    Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(0, true).udp(123, 40000).payload(64).bytes(), kReflectionC);
  // A later fragment has no ports: it goes where a port-less class would take it.
  C("CIpv4LaterFragmentIsDefault",
    Frame().eth().ipv4(kSrc4, kDst4).ipv4_fragment(185, false).udp(123, 40000).payload(16).bytes(), kDefaultC);
  return c;
}

// Expected per-class counters after `cases` were each sent once.
Datapath::ClassCounters expected_counters(const std::vector<const ClassCase*>& cases) {
  Datapath::ClassCounters want{};
  for (const ClassCase* c : cases) {
    if (c->cls == kNoClass) continue;
    lv_counter& k = c->verdict == kPass ? want[c->cls].passed : want[c->cls].dropped;
    k.packets += 1;
    k.bytes += c->frame.size();
  }
  return want;
}

void expect_class_counters(const Datapath::ClassCounters& got, const Datapath::ClassCounters& want) {
  for (size_t i = 0; i < LV_MAX_CLASSES; ++i) {
    SCOPED_TRACE("class " + std::to_string(i));
    EXPECT_EQ(got[i].passed.packets, want[i].passed.packets);
    EXPECT_EQ(got[i].passed.bytes, want[i].passed.bytes);
    EXPECT_EQ(got[i].dropped.packets, want[i].dropped.packets);
    EXPECT_EQ(got[i].dropped.bytes, want[i].dropped.bytes);
  }
}

class Classify : public ProgTest, public ::testing::WithParamInterface<ClassCase> {};

TEST_P(Classify, FrameFallsInItsClass) {
  const ClassCase& cc = GetParam();
  Controller ctl(dp());
  ctl.install(table(cc.table));

  EXPECT_EQ(dp().send(cc.frame), (Outcome{cc.verdict, cc.reason}));
  expect_class_counters(dp().class_counters(), expected_counters({&cc}));
  if (cc.cls == kNoClass) {
    EXPECT_EQ(dp().state_count(), 0u) << "dropped before classification: no state";
    return;
  }
  // The state was created under the class, for the source (/32, /64 by default).
  const lv_key key = source_key(cc.src, is_ipv6(cc.src) ? 64 : 32, static_cast<uint16_t>(cc.cls));
  const auto st = dp().state(key);
  ASSERT_TRUE(st) << "no lv_state for the source in class " << cc.cls;
  EXPECT_EQ(st->passed, 1u | uint64_t{cc.frame.size()} << 32);
  EXPECT_EQ(dp().state_count(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Table, Classify, ::testing::ValuesIn(class_cases()),
                         [](const ::testing::TestParamInfo<ClassCase>& info) { return info.param.name; });

// The whole of table A through one installed policy: every class's counters and every
// (source, class) state exact at the end.
TEST_F(ProgTest, WholeTableThroughOnePolicyCountsEachClassExactly) {
  Controller ctl(dp());
  ctl.install(table_a());
  std::vector<const ClassCase*> sent;
  const auto cases = class_cases();
  std::vector<uint64_t> per_state(LV_MAX_CLASSES * 2, 0);  // packets by (class, family)
  for (const ClassCase& cc : cases) {
    if (cc.table != 'A') continue;
    SCOPED_TRACE(cc.name);
    EXPECT_EQ(dp().send(cc.frame), (Outcome{cc.verdict, cc.reason}));
    sent.push_back(&cc);
    if (cc.cls != kNoClass) per_state[cc.cls * 2 + is_ipv6(cc.src)]++;
  }
  expect_class_counters(dp().class_counters(), expected_counters(sent));
  size_t states = 0;
  for (int cls = 0; cls < kDefaultA + 1; ++cls) {
    for (int v6 = 0; v6 < 2; ++v6) {
      const uint64_t n = per_state[cls * 2 + v6];
      const auto st = dp().state(source_key(v6 ? kSrc6 : kSrc4, v6 ? 64 : 32, static_cast<uint16_t>(cls)));
      EXPECT_EQ(st.has_value(), n > 0) << "class " << cls << (v6 ? " IPv6" : " IPv4");
      if (st) {
        EXPECT_EQ(LV_COUNT_PACKETS(st->passed), n) << "class " << cls;
      }
      states += n > 0;
    }
  }
  EXPECT_EQ(dp().state_count(), states);
}

// ---- many classes ---------------------------------------------------------------------

// N classes, every one reachable by its own frame: 0..N-3 alternate UDP and TCP SYN on
// their own port, N-2 is ICMP, N-1 the default (reached by GRE).
Policy many_classes(size_t n, Rate r) {
  Policy p;
  for (size_t i = 0; i + 2 < n; ++i) {
    const uint16_t port = static_cast<uint16_t>(3000 + i);
    p.classes.push_back(i % 2 ? class_spec("syn" + std::to_string(i), on({Proto::Tcp}, {{port, port}}, true), r)
                              : class_spec("udp" + std::to_string(i), on({Proto::Udp}, {{port, port}}), r));
  }
  p.classes.push_back(class_spec("icmp", on({Proto::Icmp}), r));
  p.classes.push_back(class_spec("default", Match{}, r));
  return p;
}

Bytes frame_for_class(size_t n, size_t i, const std::string& src) {
  if (i + 1 == n) return ip_proto_from(src, 47);
  if (i + 2 == n) return Frame().eth().ipv4(src, kDst4).icmp_echo().payload(20).bytes();
  const uint16_t port = static_cast<uint16_t>(3000 + i);
  return i % 2 ? tcp_from(src, port, kTcpSyn) : udp_from(src, port);
}

class ManyClasses : public ProgTest, public ::testing::WithParamInterface<size_t> {};

// With N classes a packet gets exactly what it gets with one class of the same limits,
// and every class is reachable, with a bucket of its own for the same source.
TEST_P(ManyClasses, EveryClassReachableWithTheVerdictsOfOneClass) {
  const size_t n = GetParam();
  constexpr Rate kLimit{1, 3};  // 3 at once, then nothing for a second
  constexpr int kSent = 5;
  const std::string src = "198.18.9.9";

  // The reference: one default class.
  std::vector<Outcome> reference;
  {
    Datapath one;
    Controller c1(one);
    Policy p;
    p.classes = {class_spec("default", Match{}, kLimit)};
    c1.install(p);
    const Bytes f = udp_from(src, 3000);
    for (int i = 0; i < kSent; ++i) reference.push_back(one.send(f));
  }
  ASSERT_EQ(reference, (std::vector<Outcome>{{kPass, LV_R_CONFORMING},
                                             {kPass, LV_R_CONFORMING},
                                             {kPass, LV_R_CONFORMING},
                                             {kDrop, LV_R_RATE},
                                             {kDrop, LV_R_RATE}}));

  Controller ctl(dp());
  ctl.install(many_classes(n, kLimit));
  ASSERT_EQ(ctl.active().nr_classes, n);
  for (size_t i = 0; i < n; ++i) {
    SCOPED_TRACE("class " + std::to_string(i));
    const Bytes f = frame_for_class(n, i, src);
    std::vector<Outcome> got;
    for (int k = 0; k < kSent; ++k) got.push_back(dp().send(f));
    EXPECT_EQ(got, reference);
    const auto st = dp().state(source_key(src, 32, static_cast<uint16_t>(i)));
    ASSERT_TRUE(st);
    EXPECT_EQ(LV_COUNT_PACKETS(st->passed), 3u);
    EXPECT_EQ(LV_COUNT_BYTES(st->passed), 3u * f.size());
    const lv_class_counters cc = dp().class_counters()[i];
    EXPECT_EQ(cc.passed.packets, 3u);
    EXPECT_EQ(cc.passed.bytes, 3u * f.size());
    EXPECT_EQ(cc.dropped.packets, 2u);
    EXPECT_EQ(cc.dropped.bytes, 2u * f.size());
  }
  EXPECT_EQ(dp().state_count(), n) << "one bucket per class for the one source";
  const auto all = dp().class_counters();
  for (size_t i = n; i < LV_MAX_CLASSES; ++i) EXPECT_EQ(all[i].passed.packets + all[i].dropped.packets, 0u) << i;
}

INSTANTIATE_TEST_SUITE_P(Classes, ManyClasses, ::testing::Values(size_t{2}, size_t{32}, size_t{LV_MAX_CLASSES}),
                         [](const ::testing::TestParamInfo<size_t>& info) { return std::to_string(info.param); });

}  // namespace
}  // namespace levee::progtest
