// synauth_test.cpp - SYN authentication in the kernel, in a network namespace of the
// test's own (HostNetns: the frames' destinations on its loopback, a listener on the
// class's port). A SYN of an unproved source is answered with a SYN-ACK carrying a
// cookie (its bytes checked: addresses, ports, numbers, checksums, VLAN tags, a frame
// cut to its headers; SYNs with options, in one and two tags, IPv6 with extension
// headers, one deep behind a long one); only a proper SYN, from and to what a stack
// answers, to a port that listens. In reset mode the RST that returns the cookie lets
// that connection's retried SYN through, once, and proves nothing else; in proxy mode
// the SYN-ACK offers the SYN's options back (those the listener's namespace allows),
// and the ACK that returns the cookie (and echoes levee's timestamp) passes with it in
// the frame's metadata, also when its source was marked a moment before; forged and
// stale cookies, bare ACKs and SYN-ACK floods towards one network do not. What marks a
// source known-good, marks per network, connections the host has, and the known-good
// filter's summary read first.
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "datapath/filters.hpp"
#include "datapath/known_good.hpp"
#include "datapath/local_routes.hpp"
#include "frames.hpp"
#include "host_netns.hpp"
#include "packet.hpp"
#include "syn_cells.h"
#include "syncookie.h"
#include "tcp_options.h"

namespace levee::progtest {
namespace {

using pkt::kTcpAck;
using pkt::kTcpRst;
using pkt::kTcpSyn;

constexpr uint16_t kPort = 80, kClientPort = 40000;
constexpr Outcome kChallenged{XDP_TX, LV_R_CHALLENGED}, kVerified{XDP_DROP, LV_R_VERIFIED},
    kUnverified{XDP_DROP, LV_R_UNVERIFIED}, kConforming{XDP_PASS, LV_R_CONFORMING};

Policy syn_auth_policy() {
  Policy p;
  ClassSpec web = class_spec("web", on({Proto::Tcp}, {{kPort, kPort}}), {100, 10});
  web.syn_auth = SynAuth::Cookie;
  p.classes = {web, class_spec("default", Match{}, {100, 10})};
  return p;
}

uint32_t be32(const std::vector<uint8_t>& b, size_t off) {
  return uint32_t{b[off]} << 24 | uint32_t{b[off + 1]} << 16 | uint32_t{b[off + 2]} << 8 | b[off + 3];
}
uint16_t be16(const std::vector<uint8_t>& b, size_t off) { return static_cast<uint16_t>(b[off] << 8 | b[off + 1]); }

// The frame a client sends: `flags`, and `seq` as its sequence number.
Bytes client(const std::string& src, uint8_t flags, uint32_t seq = 1, uint16_t vlan = 0, uint16_t sport = kClientPort) {
  pkt::Frame f = pkt::Frame().eth();
  if (vlan) f.vlan(vlan);
  if (is_ipv6(src))
    f.ipv6(src, kDst6);
  else
    f.ipv4(src, kDst4);
  f.tcp(sport, kPort, flags);
  Bytes b = f.bytes();
  const size_t at = f.layer(pkt::Layer::Tcp) + 4;
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(seq >> (24 - 8 * i));
  fix_tcp_checksum(b, f);
  return b;
}

// What a cookie of a client's connection binds, as the datapath builds it.
lv_cookie_in cookie_in(const std::string& src, uint16_t sport = kClientPort) {
  lv_cookie_in in{};
  const Bytes syn = client(src, kTcpSyn);
  if (is_ipv6(src)) {
    std::memcpy(in.saddr, &syn[14 + 8], 16);
    std::memcpy(in.daddr, &syn[14 + 24], 16);
  } else {
    in.saddr[2] = in.daddr[2] = htonl(0xffff);
    std::memcpy(&in.saddr[3], &syn[14 + 12], 4);
    std::memcpy(&in.daddr[3], &syn[14 + 16], 4);
  }
  in.sport = sport;
  in.dport = kPort;
  in.family = is_ipv6(src) ? LV_AF_INET6 : LV_AF_INET;
  return in;
}

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * LV_NSEC_PER_SEC + static_cast<uint64_t>(ts.tv_nsec);
}

class SynAuth : public ProgTest {
 protected:
  void SetUp() override {
    ProgTest::SetUp();
    if (IsSkipped()) return;
    net_.emplace(std::vector<std::string>{kDst4, kDst6});
    net_->listen(kPort);
    ctl_.emplace(dp());
    ctl_->install(syn_auth_policy());
    know_local();
    lv_control c = dp().control();
    c.cookie_key[0][0] = 0x0123456789abcdefULL;
    c.cookie_key[0][1] = 0xfedcba9876543210ULL;
    c.cookie_key[1][0] = 0x1357924680acebdfULL;
    c.cookie_key[1][1] = 0x2468013579bdfaceULL;
    dp().write_control(c);
  }
  // The namespace's own addresses into lv_local, as attach writes them.
  void know_local() {
    auto local = local_routes();
    ASSERT_TRUE(local) << local.error().message();
    ASSERT_TRUE(sync_local(dp().local_fd(), *local));
    ctl_->map().set_local_known();
  }
  // A new key into one slot, as the daemon's rotation writes it.
  void rekey(unsigned slot) {
    lv_control c = dp().control();
    c.cookie_key[slot][0] ^= 0x5a5a5a5a;
    dp().write_control(c);
  }
  // The SYN-ACK levee answers a SYN from `src` with, checked as a whole; returns its cookie.
  uint32_t challenge(const std::string& src, uint16_t vlan = 0) {
    return challenge_frame(client(src, kTcpSyn, 1000, vlan), is_ipv6(src), 14 + (vlan ? 4 : 0));
  }
  // The same for any SYN frame whose IP header starts at `l3`: the answer keeps the
  // tags, and has a bare IP header (no options, no extension headers) and TCP header.
  uint32_t challenge_frame(const Bytes& syn, bool v6, size_t l3) {
    EXPECT_EQ(dp().send(syn), kChallenged);
    const RunResult r = dp().run_out(syn);
    EXPECT_EQ(r.retval, uint32_t{XDP_TX});
    const std::vector<uint8_t>& a = r.out;
    const size_t ip_len = v6 ? 40 : 20, l4 = l3 + ip_len;
    EXPECT_EQ(a.size(), l4 + 20) << "cut to its headers";
    if (a.size() != l4 + 20) return 0;
    // Ethernet addresses swapped, the tag kept.
    EXPECT_TRUE(std::equal(a.begin(), a.begin() + 6, syn.begin() + 6));
    EXPECT_TRUE(std::equal(a.begin() + 6, a.begin() + 12, syn.begin()));
    EXPECT_TRUE(std::equal(a.begin() + 12, a.begin() + l3, syn.begin() + 12));
    uint32_t pseudo = 0;
    if (v6) {
      EXPECT_EQ(a[l3] >> 4, 6);
      EXPECT_EQ(be16(a, l3 + 4), 20);
      EXPECT_EQ(a[l3 + 6], 6);
      EXPECT_TRUE(std::equal(a.begin() + l3 + 8, a.begin() + l3 + 24, syn.begin() + l3 + 24)) << "source";
      EXPECT_TRUE(std::equal(a.begin() + l3 + 24, a.begin() + l3 + 40, syn.begin() + l3 + 8)) << "destination";
      for (size_t i = 8; i < 40; i += 2) pseudo += be16(a, l3 + i);
    } else {
      EXPECT_EQ(a[l3], 0x45);
      EXPECT_EQ(be16(a, l3 + 2), 40);
      EXPECT_EQ(a[l3 + 9], 6);
      EXPECT_EQ(pkt::inet_checksum(&a[l3], 20), 0) << "IPv4 header checksum";
      EXPECT_EQ(be32(a, l3 + 12), be32(syn, l3 + 16));
      EXPECT_EQ(be32(a, l3 + 16), be32(syn, l3 + 12));
      for (size_t i = 12; i < 20; i += 2) pseudo += be16(a, l3 + i);
    }
    pseudo += 6 + 20;
    EXPECT_EQ(pkt::inet_checksum(&a[l4], 20, pseudo), 0) << "TCP checksum";
    EXPECT_EQ(be16(a, l4), kPort);
    EXPECT_EQ(be16(a, l4 + 2), kClientPort);
    EXPECT_EQ(a[l4 + 12], 5 << 4);
    EXPECT_EQ(a[l4 + 13], kTcpSyn | kTcpAck);
    return be32(a, l4 + 8);  // the acknowledgment number: the cookie
  }
  std::optional<pkt::HostNetns> net_;
  std::optional<Controller> ctl_;
};

constexpr Outcome kRetried{XDP_PASS, LV_R_RETRIED}, kMalformed{XDP_DROP, LV_R_MALFORMED},
    kMartian{XDP_DROP, LV_R_MARTIAN}, kNoListener{XDP_DROP, LV_R_NO_LISTENER}, kProxied{XDP_PASS, LV_R_PROXIED},
    kOpening{XDP_PASS, LV_R_OPENING};

TEST_F(SynAuth, ASynIsAnsweredAndTheRstThatReturnsTheCookieLetsItsRetryThrough) {
  for (const std::string src : {"198.18.2.1", "2001:db8:2::1"}) {
    SCOPED_TRACE(src);
    const uint32_t cookie = challenge(src);
    EXPECT_EQ(dp().state_count(), 0u) << "an answer keeps nothing";
    // The cookie is the shared rule's, under the interface's key.
    const lv_cookie_in in = cookie_in(src);
    const lv_control c = dp().control();
    EXPECT_TRUE(lv_cookie_check(&in, cookie, monotonic_ns(), c.cookie_key, nullptr));
    // A forged cookie proves nothing; the real one lets the retried SYN through.
    EXPECT_EQ(dp().send(client(src, kTcpRst, cookie ^ 0x100)), kUnverified);
    EXPECT_EQ(dp().send(client(src, kTcpRst, cookie)), kVerified);
    EXPECT_EQ(dp().state_count(), 0u);
    // Its retransmitted SYN goes to the listener, once, without state.
    EXPECT_EQ(dp().send(client(src, kTcpSyn, 1000)), kRetried);
    EXPECT_EQ(dp().send(client(src, kTcpSyn, 1000)), kChallenged) << "a pass is taken once";
    EXPECT_EQ(dp().state_count(), 0u);
    dp().reset_state();
  }
}

// The key is the slot of the cookie's epoch: a new key in the other slot (the rotation's
// spare) leaves it good; a new key in its own slot voids it.
TEST_F(SynAuth, ACookieIsCheckedUnderItsEpochsKeySlot) {
  const uint32_t slot = lv_cookie_key_slot(monotonic_ns() >> LV_COOKIE_PERIOD_SHIFT);
  uint32_t cookie = challenge("198.18.2.5");
  rekey(slot ^ 1);
  EXPECT_EQ(dp().send(client("198.18.2.5", kTcpRst, cookie)), kVerified);
  cookie = challenge("198.18.2.6");
  rekey(slot);
  EXPECT_EQ(dp().send(client("198.18.2.6", kTcpRst, cookie)), kUnverified);
}

TEST_F(SynAuth, AnswersInTheSynsVlanTags) {
  const uint32_t cookie = challenge("198.18.2.2", 100);
  EXPECT_EQ(dp().send(client("198.18.2.2", kTcpRst, cookie, 100)), kVerified);
  // Two tags (802.1ad outside 802.1Q), kept in the answer.
  const Bytes two =
      pkt::Frame().eth().vlan(7, 0x88a8).vlan(100).ipv4("198.18.2.7", kDst4).tcp(kClientPort, kPort).bytes();
  const uint32_t c2 = challenge_frame(two, false, 14 + 8);
  EXPECT_EQ(dp().send(client("198.18.2.7", kTcpRst, c2)), kVerified) << "the cookie binds the connection, not tags";
}

// A SYN with the options a Linux client sends (MSS, SACK permitted, timestamps, window
// scale) is answered without options: the cookie cannot carry them back (the full
// proxy's cookie would), so the client falls back to no options on this SYN-ACK, which
// it only answers with its RST anyway.
TEST_F(SynAuth, ASynWithOptionsIsAnsweredWithoutThem) {
  for (const std::string src : {"198.18.2.8", "2001:db8:2::8"}) {
    SCOPED_TRACE(src);
    pkt::Frame f = pkt::Frame().eth();
    if (is_ipv6(src))
      f.ipv6(src, kDst6);
    else
      f.ipv4(src, kDst4);
    f.tcp(kClientPort, kPort, kTcpSyn).payload(20);
    Bytes syn = f.bytes();
    const size_t l4 = f.layer(pkt::Layer::Tcp);
    const uint8_t opts[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7};
    std::memcpy(&syn[l4 + 20], opts, sizeof opts);
    syn[l4 + 12] = 10 << 4;  // a 40-byte header
    fix_tcp_checksum(syn, f);
    const uint32_t cookie = challenge_frame(syn, is_ipv6(src), 14);
    EXPECT_EQ(dp().send(client(src, kTcpRst, cookie)), kVerified);
  }
}

// IPv6 extension headers before the TCP header (hop-by-hop, destination options) are
// walked to the SYN, and the answer has none: a bare IPv6 header, next header TCP.
TEST_F(SynAuth, AnIpv6SynAfterExtensionHeadersIsAnswered) {
  const Bytes syn = pkt::Frame()
                        .eth()
                        .ipv6("2001:db8:2::9", kDst6)
                        .ipv6_ext(IPPROTO_HOPOPTS)
                        .ipv6_ext(IPPROTO_DSTOPTS)
                        .tcp(kClientPort, kPort)
                        .bytes();
  const uint32_t cookie = challenge_frame(syn, true, 14);
  EXPECT_EQ(dp().send(client("2001:db8:2::9", kTcpRst, cookie)), kVerified);
}

// The test knows the key, so it makes cookies of other times: one of the period before
// is still good, one two periods old is stale.
TEST_F(SynAuth, ACookieFromThePeriodBeforeIsGoodAnOlderOneIsStale) {
  for (const std::string src : {"198.18.2.10", "2001:db8:2::10"}) {
    SCOPED_TRACE(src);
    const lv_cookie_in in = cookie_in(src);
    const lv_control c = dp().control();
    const uint64_t now = monotonic_ns();
    EXPECT_EQ(
        dp().send(client(src, kTcpRst, lv_cookie_make(&in, now - 2 * LV_COOKIE_PERIOD_NS, c.cookie_key, nullptr))),
        kUnverified);
    EXPECT_EQ(dp().send(client(src, kTcpRst, lv_cookie_make(&in, now - LV_COOKIE_PERIOD_NS, c.cookie_key, nullptr))),
              kVerified);
  }
}

TEST_F(SynAuth, AnythingButASynOfAnUnprovedSourceIsDropped) {
  for (const std::string src : {"198.18.2.3", "2001:db8:2::3"}) {
    SCOPED_TRACE(src);
    EXPECT_EQ(dp().send(client(src, kTcpAck)), kUnverified);
    EXPECT_EQ(dp().send(client(src, kTcpAck | pkt::kTcpPsh)), kUnverified);
    EXPECT_EQ(dp().send(client(src, kTcpRst, 12345)), kUnverified);
    EXPECT_EQ(dp().send(client(src, kTcpSyn | kTcpAck)), kUnverified);
    EXPECT_EQ(dp().state_count(), 0u);
  }
}

// State is not proof: a source that got it before the class authenticated SYNs (here, a
// reload that turned it on) answers a challenge on its next SYN, and its other packets
// go on only where they belong to a connection the host has.
TEST_F(SynAuth, ASynOfASourceWithStateButNoProofIsChallenged) {
  Policy open = syn_auth_policy();
  open.classes[0].syn_auth = levee::SynAuth::Off;
  ctl_->publish(open);
  for (const std::string src : {"198.18.2.11", "2001:db8:2::11"}) {
    SCOPED_TRACE(src);
    ctl_->publish(open);
    EXPECT_EQ(dp().send(client(src, kTcpSyn)), kConforming);
    EXPECT_EQ(dp().state_count(), 1u);
    ctl_->publish(syn_auth_policy());
    EXPECT_EQ(dp().send(client(src, kTcpAck)), kUnverified) << "not of a connection the host has";
    const uint32_t cookie = challenge(src);
    EXPECT_EQ(dp().send(client(src, kTcpRst, cookie)), kVerified);
    EXPECT_EQ(dp().send(client(src, kTcpSyn)), kRetried);
    dp().reset_state();
  }
}

// The summary is read first: a controller's mark lets the source's SYN on, and the same
// bits under a cleared summary bit do not.
TEST_F(SynAuth, AMarkUnderAClearSummaryBitIsNotRead) {
  const Pinned pins = dp().pinned("lvt");
  auto good = KnownGood::open(pins, ctl_->map());
  ASSERT_TRUE(good) << good.error().message();
  auto map = GoodMap::map(pins.good.get());
  ASSERT_TRUE(map) << map.error().message();
  const std::string src = "2001:db8:2::22";
  const lv_key k = key6(src, ctl_->active().classes[0]);
  good->mark(k);
  EXPECT_EQ(dp().send(client(src, kTcpSyn)), kConforming);
  dp().reset_state();
  good->mark(k);
  const lv_key as_source = filter_key(k);
  const uint32_t s = lv_seen_hash(&as_source, dp().control().seen_seed);
  const GoodHalf half = map->half(dp().control().good_active);
  ASSERT_TRUE(half.words[s >> 6] & (uint64_t{1} << (s & 63)));
  half.summary[lv_good_sum_word(s)] &= ~lv_good_sum_bit(s);
  challenge(src);
}

TEST_F(SynAuth, OtherClassesAreNotChallenged) {
  const Bytes other = ip_from("198.18.2.4").tcp(kClientPort, 22, kTcpSyn).bytes();
  EXPECT_EQ(dp().send(other), kConforming);
}

// 300 SYNs towards one answer network, the i-th from src_of(i): answer_burst are answered
// at once, then answer_rate a second, whatever time the sends take (a slow build takes
// longer); a SYN from `other`, of another network, is answered (its own budget). The one
// event that names the network, however many SYNs it was refused.
std::optional<lv_event> answer_limited(Datapath& dp, const std::function<std::string(int)>& src_of,
                                       const std::string& other) {
  const Rate per_network = SynAuthSpec{}.per_network;
  int answered = 0, limited = 0;
  const uint64_t t0 = monotonic_ns();
  for (int i = 0; i < 300; ++i) {
    const Outcome o = dp.send(client(src_of(i), kTcpSyn));
    answered += o == kChallenged;
    limited += o == Outcome{XDP_DROP, LV_R_ANSWER_LIMIT};
  }
  const double seconds = static_cast<double>(monotonic_ns() - t0) / 1e9;
  EXPECT_EQ(answered + limited, 300);
  EXPECT_GE(answered, int(per_network.burst));
  EXPECT_LE(answered, int(per_network.burst) + int(static_cast<double>(per_network.rate) * seconds) + 1)
      << "in " << seconds << " s";
  EXPECT_EQ(dp.send(client(other, kTcpSyn)), kChallenged) << other << ": another network has its own";
  std::vector<lv_event> said;
  for (const lv_event& e : dp.events())
    if (e.type == LV_EV_ANSWER_LIMITED) said.push_back(e);
  EXPECT_EQ(said.size(), 1u) << limited << " refused";
  if (said.size() != 1) return std::nullopt;
  EXPECT_EQ(said[0].reason, LV_R_ANSWER_LIMIT);
  EXPECT_EQ(said[0].value, per_network.rate);
  return said[0];
}

TEST_F(SynAuth, SynAcksTowardsOneNetworkKeepToTheirRate) {
  // Sources of one /24 with a new address each.
  const auto e = answer_limited(
      dp(), [](int i) { return "198.18.3." + std::to_string(i % 250 + 1); }, "198.18.4.1");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->addr[3], htonl(0xc6120300)) << "198.18.3.0: the /24";
}

// The same in IPv6: one budget per /48 (answer_prefix6), whatever /64 in it a SYN claims
// (2001:db8:7:N::M: a new /64 and a new address each time); the event names the /48.
TEST_F(SynAuth, SynAcksTowardsOneIpv6NetworkKeepToTheirRate) {
  const auto e = answer_limited(
      dp(), [](int i) { return "2001:db8:7:" + std::to_string(i % 250 + 1) + "::" + std::to_string(i + 1); },
      "2001:db8:8::1");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->family, LV_AF_INET6);
  EXPECT_EQ(e->addr[0], htonl(0x20010db8));
  EXPECT_EQ(e->addr[1], htonl(0x00070000)) << "2001:db8:7::/48: the /48, its /64 bits cleared";
  EXPECT_EQ(e->addr[2], 0u);
  EXPECT_EQ(e->addr[3], 0u);
}

TEST_F(SynAuth, MonitorModeAnswersNothing) {
  Policy p = syn_auth_policy();
  p.classes[0].monitor = true;
  ctl_->publish(p);
  const Bytes syn = client("198.18.2.5", kTcpSyn);
  EXPECT_EQ(dp().send(syn), (Outcome{XDP_PASS, LV_R_MONITORED}));
  EXPECT_EQ(dp().run_out(syn).out, syn) << "the SYN goes on as it came";
}

// A SYN spoofed from a real host V is challenged, and V's own stack answers the SYN-ACK
// it never asked for with the RST that returns the cookie. That proves V's address is
// real, not that V wants a connection: V's other SYNs are still challenged, each of
// them, and only the one connection the RST named may pass a retried SYN, once.
TEST_F(SynAuth, ARstProvesNoMoreThanOneRetryOfItsConnection) {
  for (const std::string v : {"198.18.6.1", "2001:db8:6::1"}) {
    SCOPED_TRACE(v);
    const uint32_t cookie = challenge(v);
    EXPECT_EQ(dp().send(client(v, kTcpRst, cookie)), kVerified);
    for (uint16_t port = 40001; port <= 40005; ++port)
      EXPECT_EQ(dp().send(client(v, kTcpSyn, 7, 0, port)), kChallenged) << "another connection of V";
    EXPECT_EQ(dp().send(client(v, kTcpAck)), kUnverified) << "nor is V's TCP let on";
    EXPECT_EQ(dp().send(client(v, kTcpSyn, 1000)), kRetried);
    EXPECT_EQ(dp().send(client(v, kTcpSyn, 1000)), kChallenged);
    EXPECT_EQ(dp().state_count(), 0u) << "no state for V";
  }
}

// An IPv6 SYN whose TCP header sits at byte 1094, behind a 1,040-byte Destination
// Options header whose option data holds a decoy TCP header at byte 70 (1094 mod 1024):
// levee reads the real one, exactly, and answers from its port.
TEST_F(SynAuth, AnIpv6SynDeepBehindItsExtensionHeadersIsAnsweredFromItsOwnPort) {
  const std::string src = "2001:db8:2::30";
  pkt::Frame f = pkt::Frame().eth().ipv6(src, kDst6);
  Bytes b = f.bytes();
  const size_t l3 = 14, ext = l3 + 40, ext_len = 1040, l4 = ext + ext_len;
  b.resize(l4 + 20, 0);
  b[l3 + 6] = IPPROTO_DSTOPTS;
  put16(b, l3 + 4, static_cast<uint16_t>(ext_len + 20));
  b[ext] = IPPROTO_TCP;
  b[ext + 1] = static_cast<uint8_t>(ext_len / 8 - 1);
  // Unknown options of the skippable kind (0x1e), 255 bytes of data each, the last of 8.
  size_t at = ext + 2;
  for (int i = 0; i < 4; ++i, at += 257) {
    b[at] = 0x1e;
    b[at + 1] = 255;
  }
  b[at] = 0x1e;
  b[at + 1] = 8;
  auto tcp_at = [&](size_t off, uint16_t dport) {
    put16(b, off, kClientPort);
    put16(b, off + 2, dport);
    b[off + 4] = 0, b[off + 5] = 0, b[off + 6] = 0x03, b[off + 7] = 0xe8;  // seq 1000
    b[off + 12] = 5 << 4;
    b[off + 13] = kTcpSyn;
    put16(b, off + 14, 65535);
  };
  ASSERT_EQ(l4 % 1024, 70u);
  tcp_at(70, 6379);
  tcp_at(l4, kPort);
  uint32_t pseudo = 6 + 20;
  for (size_t i = 8; i < 40; i += 2) pseudo += get16(b, l3 + i);
  put16(b, l4 + 16, pkt::inet_checksum(&b[l4], 20, pseudo));
  const uint32_t cookie = challenge_frame(b, true, 14);
  EXPECT_EQ(dp().send(client(src, kTcpRst, cookie)), kVerified) << "the cookie binds the real ports";
}

// What no stack takes as a SYN is dropped as malformed, not answered: with RST or FIN,
// a data offset under 5 or beyond the segment, a wrong checksum.
TEST_F(SynAuth, WhatIsNotAProperSynIsDroppedNotAnswered) {
  for (const std::string src : {"198.18.7.1", "2001:db8:7::1"}) {
    SCOPED_TRACE(src);
    EXPECT_EQ(dp().send(client(src, kTcpSyn | kTcpRst)), kMalformed);
    EXPECT_EQ(dp().send(client(src, kTcpSyn | pkt::kTcpFin)), kMalformed);
    for (uint8_t doff : {0, 4, 6, 15}) {
      pkt::Frame f = ip_from(src);
      f.tcp(kClientPort, kPort, kTcpSyn);
      Bytes b = f.bytes();
      b[f.layer(pkt::Layer::Tcp) + 12] = static_cast<uint8_t>(doff << 4);
      fix_tcp_checksum(b, f);
      EXPECT_EQ(dp().send(b), kMalformed) << "data offset " << int(doff);
    }
    Bytes bad = client(src, kTcpSyn, 1000);
    bad[bad.size() - 20 + 16] ^= 0x5a;
    EXPECT_EQ(dp().send(bad), kMalformed) << "a wrong checksum";
    EXPECT_EQ(dp().counters()[LV_R_CHALLENGED].packets, 0u);
    dp().reset_state();
  }
}

// A SYN from or to an address no stack answers, through a group MAC, or to an address
// the host neither owns nor forwards (forwarding is off here) is a martian: no answer
// goes to a group, nor from an address that is not the host's.
TEST_F(SynAuth, ASynFromOrToWhatNoStackAnswersIsAMartian) {
  auto syn = [](const std::string& src, const std::string& dst, pkt::Mac eth_dst = pkt::kDstMac,
                pkt::Mac eth_src = pkt::kSrcMac) {
    pkt::Frame f = pkt::Frame().eth(eth_dst, eth_src);
    if (is_ipv6(src))
      f.ipv6(src, dst);
    else
      f.ipv4(src, dst);
    return f.tcp(kClientPort, kPort, kTcpSyn).bytes();
  };
  for (const char* src : {"224.0.0.5", "255.255.255.255", "0.0.0.0", "127.0.0.1", "240.0.0.1"})
    EXPECT_EQ(dp().send(syn(src, kDst4)), kMartian) << "from " << src;
  for (const char* dst : {"224.0.0.1", "255.255.255.255", "198.19.0.77", "198.19.0.255", "127.0.0.1"})
    EXPECT_EQ(dp().send(syn("198.18.7.2", dst)), kMartian) << "to " << dst;
  for (const char* src : {"ff02::1", "::1", "::", "::ffff:198.18.7.3"})
    EXPECT_EQ(dp().send(syn(src, kDst6)), kMartian) << "from " << src;
  for (const char* dst : {"ff02::1", "2001:db8:ffff::77", "::1"})
    EXPECT_EQ(dp().send(syn("2001:db8:7::2", dst)), kMartian) << "to " << dst;
  const pkt::Mac broadcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, multicast{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
  EXPECT_EQ(dp().send(syn("198.18.7.4", kDst4, pkt::kDstMac, broadcast)), kMartian) << "from a broadcast MAC";
  EXPECT_EQ(dp().send(syn("198.18.7.4", kDst4, broadcast)), kMartian) << "to a broadcast MAC";
  EXPECT_EQ(dp().send(syn("198.18.7.4", kDst4, multicast)), kMartian) << "to a multicast MAC";
  EXPECT_EQ(dp().counters()[LV_R_CHALLENGED].packets, 0u);
  EXPECT_EQ(dp().send(syn("198.18.7.4", kDst4)), kChallenged) << "the control";
}

// Only a port with a listener is answered (a scan during an attack sees what is open,
// as without levee), followed live: a port that begins to listen is answered within a
// CPU's memory of the last answer (LV_SYN_WHERE_NS).
TEST_F(SynAuth, ASynToAPortWithoutAListenerIsNotAnswered) {
  Policy p = syn_auth_policy();
  p.classes[0].match = on({Proto::Tcp}, {{kPort, kPort + 1}});
  ctl_->publish(p);
  auto to = [](const std::string& src, uint16_t port) { return ip_from(src).tcp(kClientPort, port, kTcpSyn).bytes(); };
  for (const std::string src : {"198.18.8.1", "2001:db8:8::1"}) {
    EXPECT_EQ(dp().send(to(src, kPort + 1)), kNoListener) << src;
    EXPECT_EQ(dp().send(to(src, kPort)), kChallenged) << src;
  }
  net_->listen(kPort + 1);
  std::this_thread::sleep_for(std::chrono::nanoseconds(2 * LV_SYN_WHERE_NS));
  for (const std::string src : {"198.18.8.2", "2001:db8:8::2"})
    EXPECT_EQ(dp().send(to(src, kPort + 1)), kChallenged) << src;
}

// A SYN to a host this one forwards to (here forwarding is on, with a route to it) is
// answered by reset, whatever the class's mode: its listener is not here.
TEST_F(SynAuth, ASynToAHostBehindThisOneIsAnsweredByReset) {
  net_->sh("ip link add lvfwd0 type veth peer name lvfwd1");
  net_->sh("ip link set lvfwd0 up");
  net_->sh("ip link set lvfwd1 up");
  net_->sh("ip route add 198.19.9.0/24 dev lvfwd0");
  net_->sh("ip -6 route add 2001:db8:9::/48 dev lvfwd0");
  net_->sh("sysctl -qw net.ipv4.conf.all.forwarding=1 net.ipv4.conf.lo.forwarding=1");
  net_->sh("sysctl -qw net.ipv6.conf.all.forwarding=1");
  lv_control c = dp().control();
  c.handoff = 1;  // proxy where it can
  dp().write_control(c);
  for (const auto& [src, dst] :
       {std::pair<std::string, std::string>{"198.18.9.1", "198.19.9.9"}, {"2001:db8:a::1", "2001:db8:9::9"}}) {
    SCOPED_TRACE(dst);
    pkt::Frame f = pkt::Frame().eth();
    if (is_ipv6(src))
      f.ipv6(src, dst);
    else
      f.ipv4(src, dst);
    const Bytes syn = f.tcp(kClientPort, kPort, kTcpSyn).bytes();
    EXPECT_EQ(dp().send(syn), kChallenged);
    const RunResult r = dp().run_out(syn);
    const size_t l4 = 14 + (is_ipv6(src) ? 40 : 20);
    ASSERT_GE(r.out.size(), l4 + 20);
    EXPECT_EQ(be32(r.out, l4 + 4), ~be32(r.out, l4 + 8)) << "reset mode's answer: seq is ~ack, the cookie";
  }
  const Bytes local = client("198.18.9.2", kTcpSyn, 1000);
  EXPECT_EQ(dp().send(local), kChallenged);
  const RunResult r = dp().run_out(local);
  ASSERT_GE(r.out.size(), 54u);
  EXPECT_EQ(be32(r.out, 34 + 8), 1001u) << "the host's own: proxied (the ACK is the ISN + 1)";
}

// ---- proxy mode: levee's tc program is on the interface (lv_control.handoff) ----------

// Linux's SYN options: MSS 1460, SACK permitted, timestamps (TSval 7), NOP, window scale 7.
constexpr uint8_t kLinuxOptions[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 0, 1, 3, 3, 7};

// A client's frame with TCP options, `seq` and `ack` its numbers.
Bytes client_with(const std::string& src, uint8_t flags, uint32_t seq, uint32_t ack, const uint8_t* opts,
                  size_t opt_len, uint16_t sport = kClientPort) {
  pkt::Frame f = pkt::Frame().eth();
  if (is_ipv6(src))
    f.ipv6(src, kDst6);
  else
    f.ipv4(src, kDst4);
  f.tcp(sport, kPort, flags).payload(opt_len);
  Bytes b = f.bytes();
  const size_t l4 = f.layer(pkt::Layer::Tcp);
  if (opt_len) std::memcpy(&b[l4 + 20], opts, opt_len);  // opts may be null with none
  b[l4 + 12] = static_cast<uint8_t>((20 + opt_len) / 4 << 4);
  for (int i = 0; i < 4; ++i) {
    b[l4 + 4 + i] = static_cast<uint8_t>(seq >> (24 - 8 * i));
    b[l4 + 8 + i] = static_cast<uint8_t>(ack >> (24 - 8 * i));
  }
  fix_tcp_checksum(b, f);
  return b;
}

class SynProxy : public SynAuth {
 protected:
  const std::string src_reset_ = "198.18.5.9";
  void SetUp() override {
    SynAuth::SetUp();
    lv_control c = dp().control();
    c.handoff = 1;
    c.mss4 = 1460;
    c.mss6 = 1440;
    dp().write_control(c);
  }
  struct Answer {
    uint32_t seq = 0, ack = 0;
    std::vector<uint32_t> options;  // host order words
  };
  // The ACK's options a client sends back: NOP NOP TS with its TSval 8 and the TSecr
  // levee's TSval (the answer's fourth word), or `tsecr` where given.
  static std::vector<uint8_t> echo(const Answer& a, std::optional<uint32_t> tsecr = std::nullopt) {
    const uint32_t e = tsecr ? *tsecr : (a.options.size() > 3 ? a.options[3] : 0);
    return {1, 1, 8, 10, 0, 0, 0, 8, uint8_t(e >> 24), uint8_t(e >> 16), uint8_t(e >> 8), uint8_t(e)};
  }
  // The SYN-ACK of a SYN: headers and checksum checked, numbers and options returned.
  Answer answer(const Bytes& syn, bool v6) {
    EXPECT_EQ(dp().send(syn), kChallenged);
    const RunResult r = dp().run_out(syn);
    EXPECT_EQ(r.retval, uint32_t{XDP_TX});
    const std::vector<uint8_t>& a = r.out;
    const size_t l3 = 14, l4 = l3 + (v6 ? 40 : 20);
    Answer out;
    if (a.size() < l4 + 20) return ADD_FAILURE() << "a frame of " << a.size(), out;
    const size_t tcp_len = static_cast<size_t>(a[l4 + 12] >> 4) * 4;
    EXPECT_EQ(a.size(), l4 + tcp_len) << "cut to its headers";
    EXPECT_LE(a.size(), syn.size()) << "never grown";
    if (a.size() != l4 + tcp_len) return out;
    uint32_t pseudo = 6 + static_cast<uint32_t>(tcp_len);
    if (v6) {
      EXPECT_EQ(be16(a, l3 + 4), tcp_len);
      for (size_t i = 8; i < 40; i += 2) pseudo += be16(a, l3 + i);
    } else {
      EXPECT_EQ(be16(a, l3 + 2), 20 + tcp_len);
      EXPECT_EQ(pkt::inet_checksum(&a[l3], 20), 0) << "IPv4 header checksum";
      for (size_t i = 12; i < 20; i += 2) pseudo += be16(a, l3 + i);
    }
    EXPECT_EQ(pkt::inet_checksum(&a[l4], tcp_len, pseudo), 0) << "TCP checksum";
    EXPECT_EQ(a[l4 + 13], kTcpSyn | kTcpAck);
    out.seq = be32(a, l4 + 4);
    out.ack = be32(a, l4 + 8);
    for (size_t i = l4 + 20; i < l4 + tcp_len; i += 4) out.options.push_back(be32(a, i));
    return out;
  }
};

// The SYN-ACK is a proper one: its sequence number is the cookie, which binds the ISN
// and keeps the options, and it offers the options back as Linux would.
TEST_F(SynProxy, TheSynAckOffersTheSynsOptionsAndItsSequenceNumberIsTheCookie) {
  for (const std::string src : {"198.18.5.1", "2001:db8:5::1"}) {
    SCOPED_TRACE(src);
    const bool v6 = is_ipv6(src);
    const Answer a = answer(client_with(src, kTcpSyn, 1000, 0, kLinuxOptions, sizeof kLinuxOptions), v6);
    EXPECT_EQ(a.ack, 1001u) << "the ISN + 1";
    ASSERT_EQ(a.options.size(), 5u);
    EXPECT_EQ(a.options[0], v6 ? 0x020405a0u : 0x020405b4u) << "levee's MSS, from the interface";
    EXPECT_EQ(a.options[1], 0x01030300u | LV_SYNACK_WSCALE);
    EXPECT_EQ(a.options[2], 0x0402080au) << "SACK permitted, timestamps";
    EXPECT_EQ(a.options[4], 7u) << "TSecr: the client's TSval";
    EXPECT_EQ(a.seq & LV_COOKIE_OPTS_MASK,
              (v6 ? 2u : 3u) << LV_COOKIE_OPT_MSS_SHIFT | LV_COOKIE_OPT_SACK | LV_COOKIE_OPT_TS | 7u)
        << "the client's MSS (1460: the table's 1440 for IPv6), SACK, timestamps and window scale";
    lv_cookie_in in = cookie_in(src);
    in.isn = 1000;
    EXPECT_TRUE(lv_cookie_check(&in, a.seq, monotonic_ns(), dp().control().cookie_key, nullptr));
  }
}

// A SYN with only a timestamp has no room for levee's MSS in a frame that never grows:
// it is left out. A bare SYN gets a bare SYN-ACK.
TEST_F(SynProxy, WhatTheFrameHasNoRoomForIsLeftOut) {
  const uint8_t ts_only[12] = {1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 0};
  Answer a = answer(client_with("198.18.5.2", kTcpSyn, 5, 0, ts_only, sizeof ts_only), false);
  EXPECT_EQ(a.options, (std::vector<uint32_t>{0x0101080a, a.options.size() > 1 ? a.options[1] : 0, 9}));
  a = answer(client("198.18.5.3", kTcpSyn, 5), false);
  EXPECT_TRUE(a.options.empty());
}

// The ACK that returns the cookie passes, its source known-good, with the cookie in the
// metadata for the tc program; its next SYN goes to the listener.
TEST_F(SynProxy, TheAckThatReturnsTheCookiePassesWithItInTheMetadata) {
  for (const std::string src : {"198.18.5.4", "2001:db8:5::4"}) {
    SCOPED_TRACE(src);
    const bool v6 = is_ipv6(src);
    const Answer a = answer(client_with(src, kTcpSyn, 1000, 0, kLinuxOptions, sizeof kLinuxOptions), v6);
    const std::vector<uint8_t> ts = echo(a);
    const Bytes ack = client_with(src, kTcpAck, 1001, a.seq + 1, ts.data(), ts.size());
    EXPECT_EQ(dp().send(client_with(src, kTcpAck, 1001, a.seq + 2, ts.data(), ts.size())), kUnverified) << "forged";
    EXPECT_EQ(dp().send(client_with(src, kTcpAck, 1002, a.seq + 1, ts.data(), ts.size())), kUnverified)
        << "another ISN";
    const RunResult r = dp().run_out(ack);
    EXPECT_EQ(r.retval, uint32_t{XDP_PASS});
    ASSERT_EQ(r.out.size(), ack.size() + sizeof(lv_handoff)) << "the metadata before the frame";
    lv_handoff h{};
    std::memcpy(&h, r.out.data(), sizeof h);
    EXPECT_EQ(h.magic, LV_HANDOFF_MAGIC);
    EXPECT_EQ(h.cookie, a.seq);
    EXPECT_EQ(h.l4, v6 ? 40 : 20);
    EXPECT_EQ(h.family, v6 ? LV_AF_INET6 : LV_AF_INET);
    EXPECT_TRUE(std::equal(ack.begin(), ack.end(), r.out.begin() + sizeof h)) << "the frame as it came";
    EXPECT_EQ(dp().send(client(src, kTcpSyn)), kConforming) << "known-good now";
  }
  EXPECT_EQ(dp().counters()[LV_R_PROXIED].packets, 2u);
}

// A class in reset mode answers as before, though the interface could proxy.
TEST_F(SynProxy, AResetClassStillAnswersForARst) {
  Policy p = syn_auth_policy();
  p.classes[0].syn_auth = levee::SynAuth::Reset;
  ctl_->publish(p);
  const uint32_t cookie = challenge(src_reset_);
  EXPECT_EQ(dp().send(client(src_reset_, kTcpRst, cookie)), kVerified);
}

// The options the listener's namespace turned off (lv_control.tcp_off, the controller's
// reading of net.ipv4.tcp_timestamps, tcp_sack and tcp_window_scaling) are not offered,
// and the cookie does not keep them: the kernel would refuse the hand-off.
TEST_F(SynProxy, OptionsTheListenersNamespaceTurnedOffAreNotOffered) {
  lv_control c = dp().control();
  c.tcp_off = LV_TCP_OFF_TS | LV_TCP_OFF_SACK | LV_TCP_OFF_WSCALE;
  dp().write_control(c);
  const Answer a = answer(client_with("198.18.5.20", kTcpSyn, 1000, 0, kLinuxOptions, sizeof kLinuxOptions), false);
  EXPECT_EQ(a.options, std::vector<uint32_t>{0x020405b4u}) << "the MSS alone";
  EXPECT_EQ(a.seq & LV_COOKIE_OPTS_MASK, 3u << LV_COOKIE_OPT_MSS_SHIFT | LV_COOKIE_NO_WSCALE);
  c.tcp_off = LV_TCP_OFF_SACK;
  dp().write_control(c);
  const Answer b = answer(client_with("198.18.5.21", kTcpSyn, 1000, 0, kLinuxOptions, sizeof kLinuxOptions), false);
  ASSERT_EQ(b.options.size(), 5u);
  EXPECT_EQ(b.options[2], 0x0101080au) << "timestamps without SACK permitted";
}

// With timestamps, the ACK must echo the TSval levee gave the connection: a guess must
// hit the cookie and the TSval. The one that does marks its source known-good.
TEST_F(SynProxy, AnAckMustEchoLeveesTimestamp) {
  for (const std::string src : {"198.18.5.22", "2001:db8:5::22"}) {
    SCOPED_TRACE(src);
    const Answer a = answer(client_with(src, kTcpSyn, 1000, 0, kLinuxOptions, sizeof kLinuxOptions), is_ipv6(src));
    ASSERT_EQ(a.options.size(), 5u);
    for (const uint32_t wrong : {0u, a.options[3] + 100000, a.options[3] - 0x40000000})
      EXPECT_EQ(dp().send(client_with(src, kTcpAck, 1001, a.seq + 1, echo(a, wrong).data(), 12)), kUnverified)
          << "TSecr " << wrong;
    EXPECT_EQ(dp().send(client_with(src, kTcpAck, 1001, a.seq + 1, nullptr, 0)), kUnverified) << "no timestamp";
    EXPECT_EQ(dp().send(client_with(src, kTcpAck, 1001, a.seq + 1, echo(a).data(), 12)), kProxied);
    EXPECT_EQ(dp().send(client(src, kTcpSyn)), kConforming) << "known-good";
  }
}

// A handshake without timestamps connects (its ACK is handed over), but marks nothing:
// its ACK is a 2^-23 guess away, too weak a proof for a day's pass.
TEST_F(SynProxy, AHandshakeWithoutTimestampsConnectsButMarksNothing) {
  for (const std::string src : {"198.18.5.23", "2001:db8:5::23"}) {
    SCOPED_TRACE(src);
    const Answer a = answer(client(src, kTcpSyn, 1000), is_ipv6(src));
    EXPECT_EQ(dp().send(client_with(src, kTcpAck, 1001, a.seq + 1, nullptr, 0)), kProxied);
    EXPECT_EQ(dp().send(client(src, kTcpSyn, 2000, 0, 40001)), kChallenged) << "not known-good";
  }
}

// A client opening several connections at once: levee answered each SYN before the
// first ACK marked the source known-good. The later ACKs still return good cookies and
// are handed over too, with the metadata (before, they went on without it and the
// listener reset them). A known-good source's ACK that is no handshake's goes on.
TEST_F(SynProxy, EveryAckThatReturnsACookieIsHandedOverAfterTheFirstMarked) {
  for (const std::string src : {"198.18.5.24", "2001:db8:5::24"}) {
    SCOPED_TRACE(src);
    const bool v6 = is_ipv6(src);
    std::vector<Answer> answers;
    for (uint16_t port = 41000; port < 41006; ++port)
      answers.push_back(answer(client_with(src, kTcpSyn, port, 0, kLinuxOptions, sizeof kLinuxOptions, port), v6));
    for (uint16_t i = 0; i < answers.size(); ++i) {
      const uint16_t port = static_cast<uint16_t>(41000 + i);
      const Bytes ack = client_with(src, kTcpAck, port + 1u, answers[i].seq + 1, echo(answers[i]).data(), 12, port);
      const RunResult r = dp().run_out(ack);
      EXPECT_EQ(r.retval, uint32_t{XDP_PASS}) << i;
      EXPECT_EQ(r.out.size(), ack.size() + sizeof(lv_handoff)) << "the metadata, ACK " << i;
    }
    EXPECT_EQ(dp().send(client_with(src, kTcpAck, 5, 6, echo(answers[0]).data(), 12, 41000)), kConforming)
        << "not a cookie: on to its limits";
  }
}

// Marks per network are bounded (lv_answer.marks_per_network): past it, a network's
// proven clients still connect, and are challenged again next time.
TEST_F(SynProxy, MarksPerNetworkAreBounded) {
  dp().edit_policy([](lv_policy& p) { p.answer.marks_per_network = 2; });
  auto handshake = [&](const std::string& src) {
    const Answer a = answer(client_with(src, kTcpSyn, 1000, 0, kLinuxOptions, sizeof kLinuxOptions), false);
    EXPECT_EQ(dp().send(client_with(src, kTcpAck, 1001, a.seq + 1, echo(a).data(), 12)), kProxied) << src;
    return dp().send(client(src, kTcpSyn, 3000, 0, 40009));
  };
  EXPECT_EQ(handshake("198.18.11.1"), kConforming);
  EXPECT_EQ(handshake("198.18.11.2"), kConforming);
  EXPECT_EQ(handshake("198.18.11.3"), kChallenged) << "the /24 made its marks";
  EXPECT_EQ(handshake("198.18.12.1"), kConforming) << "another /24";
  uint64_t capped = 0;
  for (const lv_percpu& pc : dp().percpu()) capped += pc.marks_capped;
  EXPECT_EQ(capped, 1u);
  dp().edit_policy([](lv_policy& p) { p.answer.marks_per_network = 2; });
  lv_control c = dp().control();
  c.good_epoch++;  // the filter aged: the counts start over
  dp().write_control(c);
  EXPECT_EQ(handshake("198.18.11.4"), kConforming);
}

// The datapath's mark is the controller's: a proven source reads known-good to it (its
// summary bit set with its bits) and its SYNs go on, until the filter has aged past the
// mark; then state is no proof and it is challenged again.
TEST_F(SynProxy, AProvenSourceIsKnownGoodToTheControllerUntilItsMarkAges) {
  auto good = KnownGood::open(dp().pinned("lvt"), ctl_->map());
  ASSERT_TRUE(good) << good.error().message();
  const lv_class& web = ctl_->active().classes[0];
  for (const std::string src : {"198.18.2.21", "2001:db8:2::21"}) {
    SCOPED_TRACE(src);
    const lv_key k = is_ipv6(src) ? key6(src, web) : key4(src, web);
    EXPECT_FALSE(good->test(k));
    const Answer a = answer(client_with(src, kTcpSyn, 1000, 0, kLinuxOptions, sizeof kLinuxOptions), is_ipv6(src));
    EXPECT_EQ(dp().send(client_with(src, kTcpAck, 1001, a.seq + 1, echo(a).data(), 12)), kProxied);
    EXPECT_TRUE(good->test(k));
    EXPECT_EQ(dp().send(client(src, kTcpSyn)), kConforming);
    ASSERT_TRUE(good->age());
    EXPECT_EQ(dp().send(client(src, kTcpSyn)), kConforming) << "a mark lasts one ageing at least";
    ASSERT_TRUE(good->age());
    EXPECT_FALSE(good->test(k));
    EXPECT_EQ(dp().send(client(src, kTcpSyn)), kChallenged);
  }
}

// An MPTCP listener takes no hand-off (the kernel refuses it): its SYNs are answered by
// reset, so that its clients get in.
TEST_F(SynProxy, AnMptcpListenerIsAnsweredByReset) {
  Policy p = syn_auth_policy();
  p.classes[0].match = on({Proto::Tcp}, {{kPort, kPort + 2}});
  ctl_->publish(p);
  try {
    net_->listen(kPort + 2, IPPROTO_MPTCP);
  } catch (const std::exception& e) {
    GTEST_FAIL() << "this kernel has MPTCP (/proc/sys/net/mptcp): " << e.what();
  }
  const Bytes syn = ip_from("198.18.5.30").tcp(kClientPort, kPort + 2, kTcpSyn).bytes();
  EXPECT_EQ(dp().send(syn), kChallenged);
  const RunResult r = dp().run_out(syn);
  ASSERT_GE(r.out.size(), 54u);
  EXPECT_EQ(be32(r.out, 34 + 4), ~be32(r.out, 34 + 8)) << "reset mode's answer";
}

// ---- connections the host has ---------------------------------------------------------

// A packet of a connection the host is opening (here one it connects out of, still in
// SYN_SENT) passes without state: the stack checks it. One of an established connection
// that carried the host's data to the client and back proves its source (marked); one
// that has not yet goes on to its limits, unmarked.
class HostConnections : public SynAuth {
 protected:
  void SetUp() override {
    SynAuth::SetUp();
    if (IsSkipped()) return;
    Policy p = syn_auth_policy();
    p.classes[0].match = on({Proto::Tcp});  // every TCP port: the host's own side too
    ctl_->publish(p);
  }
  // A TCP frame from `src`:`sport` to `dst`:`dport`.
  static Bytes frame(const std::string& src, uint16_t sport, const std::string& dst, uint16_t dport, uint8_t flags) {
    pkt::Frame f = pkt::Frame().eth();
    f.ipv4(src, dst);
    return f.tcp(sport, dport, flags).bytes();
  }
  static uint16_t local_port(int fd) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
  }
};

TEST_F(HostConnections, OneTheHostIsOpeningPassesWithoutState) {
  net_->sh("ip route add 198.18.13.0/24 dev lo");  // out and back in, to nobody: it stays SYN_SENT
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(5555);
  inet_pton(AF_INET, "198.18.13.1", &to.sin_addr);
  connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to);
  const uint16_t mine = local_port(fd);
  sockaddr_in me{};
  socklen_t len = sizeof me;
  getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len);
  char self[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &me.sin_addr, self, sizeof self);
  EXPECT_EQ(dp().send(frame("198.18.13.1", 5555, self, mine, kTcpSyn | kTcpAck)), kOpening);
  EXPECT_EQ(dp().send(frame("198.18.13.1", 5556, self, mine, kTcpSyn | kTcpAck)), kUnverified) << "not that one";
  EXPECT_EQ(dp().state_count(), 0u);
  close(fd);
}

TEST_F(HostConnections, AnEstablishedOneThatCarriedTheHostsDataProvesItsSource) {
  auto good = KnownGood::open(dp().pinned("lvt"), ctl_->map());
  ASSERT_TRUE(good) << good.error().message();
  const int srv = net_->listen(8087);
  const int cl = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(8087);
  inet_pton(AF_INET, kDst4, &to.sin_addr);
  ASSERT_EQ(connect(cl, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  const uint16_t port = local_port(cl);
  const lv_key k = key4(kDst4, ctl_->active().classes[0]);
  const Bytes ack = frame(kDst4, port, kDst4, 8087, kTcpAck);
  EXPECT_EQ(dp().send(ack), kConforming) << "established: on to its limits";
  EXPECT_FALSE(good->test(k)) << "no data of the host's carried yet";
  dp().reset_state();
  // The host's data to the client, and the client's answer (its ACK with it).
  sockaddr_in from{};
  socklen_t len = sizeof from;
  const int acc = accept4(srv, reinterpret_cast<sockaddr*>(&from), &len, SOCK_CLOEXEC);
  ASSERT_GE(acc, 0);
  char byte = 'x';
  ASSERT_EQ(write(acc, &byte, 1), 1);
  ASSERT_EQ(read(cl, &byte, 1), 1);
  ASSERT_EQ(write(cl, &byte, 1), 1);
  ASSERT_EQ(read(acc, &byte, 1), 1);
  EXPECT_EQ(dp().send(ack), kConforming);
  EXPECT_TRUE(good->test(k)) << "proven";
  close(acc);
  close(cl);
}

// ---- syn_auth = "auto": challenges while the autopilot is engaged -----------------------

class SynAuto : public SynProxy {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pin_.ok());
    SynProxy::SetUp();
    if (IsSkipped()) return;
    ctl_->publish(policy(false));
  }
  const OneCpu pin_;  // what this CPU remembers of the class (struct lv_pilot) is read
  static Policy policy(bool monitor) {
    Policy p = syn_auth_policy();
    p.classes[0].syn_auth = levee::SynAuth::Auto;
    p.classes[0].admission = Admission::Auto;
    p.classes[0].escalate = true;
    p.classes[0].monitor = monitor;
    return p;
  }
  lv_shared guard() { return dp().shared(0); }
  // The class engaged with its threshold spent, as a flood of new sources leaves it, and
  // this CPU told so by an arrival (refused by admission, or counted in monitor mode).
  void engage(Outcome teller = {XDP_DROP, LV_R_ADMISSION}) {
    lv_shared g = guard();
    const uint64_t now = monotonic_ns();
    g.engaged_ns = g.last_over_ns = g.over_since_ns = now;
    g.admit_ready = g.newcomer_ready = now + 3600 * LV_NSEC_PER_SEC;
    dp().put_shared(0, g);
    EXPECT_EQ(dp().send(client("198.18.7.250", kTcpSyn)), teller) << "the arrival that tells this CPU";
  }
  // The ACK a client returns `a` with, on its port `port`.
  static Bytes ack_of(const std::string& src, const Answer& a, uint16_t port = kClientPort) {
    const std::vector<uint8_t> ts = echo(a);
    return client_with(src, kTcpAck, port + 1u, a.seq + 1, ts.data(), ts.size(), port);
  }
  static Bytes syn_of(const std::string& src, uint16_t port = kClientPort) {
    return client_with(src, kTcpSyn, port, 0, kLinuxOptions, sizeof kLinuxOptions, port);
  }
};

TEST_F(SynAuto, ACalmClassLetsTheSynsOfNewSourcesStraightOn) {
  for (const std::string src : {"198.18.7.1", "2001:db8:7::1"}) {
    const Bytes syn = syn_of(src);
    EXPECT_EQ(dp().send(syn), kConforming) << src;
    EXPECT_EQ(dp().run_out(syn).out, syn) << src << ": nothing answered";
  }
  EXPECT_EQ(dp().state_count(), 2u);
  EXPECT_EQ(dp().counters()[LV_R_CHALLENGED].packets, 0u);
}

// Engaged, a new source's SYN is answered instead of refused; its handshake proves it,
// and admission lets the proven source in past the spent threshold. A bare ACK of an
// unproven source is nothing the host asked for.
TEST_F(SynAuto, AnEngagedClassChallengesNewSourcesAndAHandshakeLetsThemIn) {
  engage();
  for (const std::string src : {"198.18.7.2", "2001:db8:7::2"}) {
    SCOPED_TRACE(src);
    EXPECT_EQ(dp().send(client(src, kTcpAck)), kUnverified);
    const Answer a = answer(syn_of(src), is_ipv6(src));
    EXPECT_EQ(dp().send(ack_of(src, a)), kProxied);
    EXPECT_EQ(dp().send(client(src, kTcpSyn)), kConforming) << "known-good: admitted";
  }
  EXPECT_EQ(guard().good_admitted, 2u);
  EXPECT_EQ(dp().state_count(), 2u) << "the proven sources only";
}

// A source with state got it while the class was calm, or from admission: it keeps
// its limits and is not asked to prove anything.
TEST_F(SynAuto, ASourceWithStateIsNotChallenged) {
  for (const std::string src : {"198.18.7.3", "2001:db8:7::3"}) EXPECT_EQ(dp().send(syn_of(src)), kConforming);
  engage();
  for (const std::string src : {"198.18.7.3", "2001:db8:7::3"}) {
    EXPECT_EQ(dp().send(syn_of(src, 41000)), kConforming) << src;
    EXPECT_EQ(dp().send(client(src, kTcpAck)), kConforming) << src;
  }
  EXPECT_EQ(dp().counters()[LV_R_CHALLENGED].packets, 0u);
}

// A client opening several connections at once: the SYNs beside the one that proved it
// were answered too, and their ACKs go to the listener with their cookies, though the
// source has state by then.
TEST_F(SynAuto, AConnectionOpenedBesideTheOneThatProvedItsSourceIsHandedOver) {
  engage();
  const std::string src = "198.18.7.4";
  const Answer first = answer(syn_of(src, 41000), false), second = answer(syn_of(src, 41001), false);
  EXPECT_EQ(dp().send(ack_of(src, first, 41000)), kProxied);
  EXPECT_EQ(dp().send(client_with(src, kTcpAck, 41002, first.seq + 1, nullptr, 0, 41000)), kConforming)
      << "the first connection's data: admitted, with state";
  ASSERT_EQ(dp().state_count(), 1u);
  const Bytes ack = ack_of(src, second, 41001);
  const RunResult r = dp().run_out(ack);
  EXPECT_EQ(r.retval, uint32_t{XDP_PASS});
  EXPECT_EQ(r.out.size(), ack.size() + sizeof(lv_handoff)) << "handed over with its cookie";
}

// What the gate holds is the flood the class engaged for: it keeps the class engaged.
TEST_F(SynAuto, AFloodTheGateHoldsKeepsTheClassEngaged) {
  engage();
  lv_shared g = guard();
  g.last_over_ns = monotonic_ns() - LV_NSEC_PER_SEC;
  dp().put_shared(0, g);
  const uint64_t before = g.last_over_ns;
  for (int i = 1; i <= 20; ++i) EXPECT_EQ(dp().send(client("198.18.8." + std::to_string(i), kTcpSyn)), kChallenged);
  EXPECT_GT(guard().last_over_ns, before + LV_NSEC_PER_SEC / 2) << "noted as abnormal arrivals";
  EXPECT_NE(guard().engaged_ns, 0u);
}

// Calm again, the first packet to see it releases the class, and a new source's SYN
// goes straight on to admission, which admits it as a source.
TEST_F(SynAuto, OnceCalmTheClassReleasesAndSynsGoStraightOnAgain) {
  engage();
  EXPECT_EQ(dp().send(client("198.18.7.5", kTcpSyn)), kChallenged);
  lv_shared g = guard();
  g.last_over_ns = monotonic_ns() - ctl_->active().classes[0].autop.release_ns - LV_NSEC_PER_SEC;
  g.admit_ready = 0;
  dp().put_shared(0, g);
  const Bytes syn = syn_of("198.18.7.6");
  EXPECT_EQ(dp().send(syn), kConforming);
  EXPECT_EQ(guard().engaged_ns, 0u);
  int released = 0;
  for (const lv_event& e : dp().events()) released += e.type == LV_EV_RELEASED;
  EXPECT_EQ(released, 1);
  EXPECT_EQ(dp().send(client("198.18.7.7", kTcpSyn)), kConforming);
}

// A new client of an escalated network, in a class that is calm: its SYN is answered
// instead of refused with that network's flood, and its handshake lets it in. What the
// gate takes of the network keeps it escalated and is no arrival of the class; a new
// source of another network goes straight on.
TEST_F(SynAuto, ANewClientOfAnEscalatedNetworkIsChallengedWhileTheClassIsCalm) {
  const lv_class& c = ctl_->active().classes[0];
  ASSERT_TRUE(c.flags & LV_CLASS_ESCALATE) << "the premise: the class watches networks";
  escalate_network(dp(), c, "198.19.0.1");
  lv_watch w = std::bit_cast<lv_watch>(*dp().state(watch_key4("198.19.0.1", c)));
  w.last_over_ns -= LV_NSEC_PER_SEC;  // so that the gate's packets are seen to keep it
  dp().put_state(watch_key4("198.19.0.1", c), std::bit_cast<lv_state>(w));
  EXPECT_EQ(dp().send(client("198.19.0.250", kTcpSyn)), (Outcome{XDP_DROP, LV_R_ESCALATED}))
      << "the arrival that tells this CPU";
  const lv_shared before = guard();
  for (int i = 1; i <= 20; ++i) EXPECT_EQ(dp().send(syn_of("198.19.1." + std::to_string(i))), kChallenged) << i;
  EXPECT_EQ(dp().counters()[LV_R_CHALLENGED].packets, 20u);
  const std::string src = "198.19.2.1";
  EXPECT_EQ(dp().send(client(src, kTcpAck)), kUnverified);
  const Answer a = answer(syn_of(src), false);
  EXPECT_EQ(dp().send(ack_of(src, a)), kProxied);
  EXPECT_EQ(dp().send(client(src, kTcpSyn)), kConforming) << "known-good: admitted";
  EXPECT_EQ(dp().send(syn_of("198.18.9.1")), kConforming) << "a new source of another network";

  const lv_shared after = guard();
  EXPECT_EQ(after.engaged_ns, 0u);
  EXPECT_EQ(after.last_over_ns, before.last_over_ns) << "the network's SYNs are no abnormal arrivals of the class";
  EXPECT_GT(std::bit_cast<lv_watch>(*dp().state(watch_key4("198.19.0.1", c))).last_over_ns,
            w.last_over_ns + LV_NSEC_PER_SEC / 2)
      << "the gate's packets keep the network escalated";
}

// A source that arrived with its escalated network's run-up (watch.h) proves itself as
// a new one would: its SYN is answered, its handshake makes it known-good. An earlier
// source of the network keeps its limits and is not asked.
TEST_F(SynAuto, ASourceOfAnEscalatedNetworksRunUpIsChallenged) {
  const lv_class& c = ctl_->active().classes[0];
  const std::string before = "198.19.3.1", src = "198.19.3.2";
  put_source(dp(), key4(before, c), 3 * LV_NSEC_PER_SEC);
  escalate_network(dp(), c, "198.19.0.1");
  put_source(dp(), key4(src, c), 0);
  EXPECT_EQ(dp().send(client("198.19.0.250", kTcpSyn)), (Outcome{XDP_DROP, LV_R_ESCALATED}))
      << "the arrival that tells this CPU";
  EXPECT_EQ(dp().send(syn_of(before)), kConforming) << "from before the flood";
  EXPECT_EQ(dp().send(client(before, kTcpAck)), kConforming);
  EXPECT_EQ(dp().send(client(src, kTcpAck)), kUnverified) << "of no connection the host has";
  const Answer a = answer(syn_of(src), false);
  EXPECT_EQ(dp().send(ack_of(src, a)), kProxied);
  EXPECT_EQ(dp().send(syn_of(src, 41000)), kConforming) << "known-good";
}

// Engaged and escalated at once: the escalated network's SYNs are still answered, as
// the network's, and keep the class's budget for the others.
TEST_F(SynAuto, AnEscalatedNetworksSynsSpendNoneOfAnEngagedClassesBudget) {
  engage();
  escalate_network(dp(), ctl_->active().classes[0], "198.19.0.1");
  lv_shared g = guard();
  g.last_over_ns = monotonic_ns() - LV_NSEC_PER_SEC;
  dp().put_shared(0, g);
  for (int i = 1; i <= 20; ++i) EXPECT_EQ(dp().send(syn_of("198.19.1." + std::to_string(i))), kChallenged) << i;
  EXPECT_EQ(guard().last_over_ns, g.last_over_ns) << "not noted as the class's arrivals";
  EXPECT_EQ(guard().admit_ready, g.admit_ready);
}

TEST_F(SynAuto, InMonitorModeAnEngagedClassAnswersNothing) {
  ctl_->publish(policy(true));
  engage(Outcome{XDP_PASS, LV_R_MONITORED});
  const Bytes syn = syn_of("198.18.7.8");
  EXPECT_EQ(dp().send(syn), (Outcome{XDP_PASS, LV_R_MONITORED}));
  EXPECT_EQ(dp().run_out(syn).out, syn) << "the SYN goes on as it came";
}

}  // namespace
}  // namespace levee::progtest
