// lists_test.cpp - allow, deny and override lists in the kernel: LPM tries per policy
// slot, written by the controller's compile() and PolicyMap, consulted before the
// buckets.
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "frames.hpp"
#include "packet.hpp"
#include "policy/keys.hpp"

namespace levee::progtest {
namespace {

using pkt::kTcpSyn;

constexpr uint32_t kPass = XDP_PASS, kDrop = XDP_DROP;
constexpr uint64_t kSec = LV_NSEC_PER_SEC;
constexpr Outcome kConforming{kPass, LV_R_CONFORMING}, kRateDrop{kDrop, LV_R_RATE}, kAllowed{kPass, LV_R_ALLOW},
    kDenied{kDrop, LV_R_DENY};

enum ClassId : uint16_t { kDns, kSyn, kDefault };
constexpr uint64_t kClassBurst = 2, kPartnerBurst = 10, kEverywhereBurst = 5;

// Three classes of burst 2 (1 packet/s: no refill within a test).
Policy base_policy() {
  Policy p;
  p.classes = {
      class_spec("dns", on({Proto::Udp}, {{53, 53}}), {1, kClassBurst}),
      class_spec("syn", on({Proto::Tcp}, {}, true), {1, kClassBurst}),
      class_spec("default", Match{}, {1, kClassBurst}),
  };
  OverrideSpec partner;
  partner.name = "partner";
  partner.packets = {1, kPartnerBurst};
  partner.classes = {"dns"};
  OverrideSpec everywhere;
  everywhere.name = "everywhere";
  everywhere.packets = {1, kEverywhereBurst};  // no classes named: all of them
  OverrideSpec bytes_only;
  bytes_only.name = "bytes-only";
  bytes_only.bytes = {100, 1000};  // 100 B/s, 1000 B: ten 100-byte frames and one more
  bytes_only.classes = {"default"};
  p.overrides = {partner, everywhere, bytes_only};
  return p;
}

Policy lists_policy() {
  Policy p = base_policy();
  p.lists = {
      list_entry("198.18.1.0/24", LV_LIST_ALLOW),
      list_entry("198.18.2.0/24", LV_LIST_DENY),
      // Longest prefix wins, both ways round.
      list_entry("198.18.3.0/24", LV_LIST_ALLOW),
      list_entry("198.18.3.7/32", LV_LIST_DENY),
      list_entry("198.18.4.0/24", LV_LIST_DENY),
      list_entry("198.18.4.7/32", LV_LIST_ALLOW),
      list_entry("198.18.5.0/24", LV_LIST_OVERRIDE, "partner"),
      list_entry("198.18.6.0/24", LV_LIST_OVERRIDE, "everywhere"),
      list_entry("198.18.7.0/24", LV_LIST_OVERRIDE, "bytes-only"),
      // An allow inside an override, an override inside a deny.
      list_entry("198.18.5.128/25", LV_LIST_ALLOW),
      list_entry("198.18.2.64/26", LV_LIST_OVERRIDE, "partner"),
      // IPv6.
      list_entry("2001:db8:1::/48", LV_LIST_ALLOW),
      list_entry("2001:db8:1:7::/64", LV_LIST_DENY),
      list_entry("2001:db8:2::/48", LV_LIST_DENY),
      list_entry("2001:db8:2:7::7/128", LV_LIST_ALLOW),
      list_entry("2001:db8:5::/48", LV_LIST_OVERRIDE, "partner"),
  };
  return p;
}

lv_lpm4 lpm4(std::string_view text) {
  const Cidr c = cidr(text);
  lv_lpm4 k{c.len, 0};
  std::memcpy(&k.addr, c.addr.data(), 4);
  return k;
}

lv_lpm6 lpm6(std::string_view text) {
  const Cidr c = cidr(text);
  lv_lpm6 k{c.len, {}};
  std::memcpy(k.addr, c.addr.data(), 16);
  return k;
}

// Send `n` single frames, each checked to pass or be dropped for `over`; returns passes.
int passes(Datapath& dp, const Bytes& frame, int n, uint32_t over = LV_R_RATE) {
  int passed = 0;
  for (int i = 0; i < n; ++i) {
    const Outcome o = dp.send(frame);
    EXPECT_TRUE(o == kConforming || o == (Outcome{kDrop, over})) << ::testing::PrintToString(o);
    passed += o.verdict == kPass;
  }
  return passed;
}

// A burst's worth in one run with repeat: (by-reason counters moved).
Counters burst(Datapath& dp, const Bytes& frame, int repeat) {
  const Counters before = dp.counters();
  EXPECT_EQ(dp.run(frame, repeat).err, 0);
  Counters d = dp.counters();
  for (size_t r = 0; r < LV_REASON_MAX; ++r) {
    d[r].packets -= before[r].packets;
    d[r].bytes -= before[r].bytes;
  }
  return d;
}

// ---- allow and deny -----------------------------------------------------------------

TEST_F(ProgTest, AllowedSourcePassesFarOverItsLimitCountedPerClassWithoutState) {
  Controller ctl(dp());
  ctl.install(lists_policy());
  constexpr int kFlood = 1000;  // 500 times the class's burst
  const Bytes dns = udp_from("198.18.1.9", 53), syn = tcp_from("198.18.1.9", 443, kTcpSyn),
              v6 = udp_from("2001:db8:1:9::1", 53);
  const Counters c1 = burst(dp(), dns, kFlood);
  EXPECT_EQ(c1[LV_R_ALLOW].packets, uint64_t{kFlood}) << describe(c1);
  EXPECT_EQ(c1[LV_R_ALLOW].bytes, uint64_t{kFlood} * dns.size());
  EXPECT_EQ(burst(dp(), syn, kFlood)[LV_R_ALLOW].packets, uint64_t{kFlood});
  EXPECT_EQ(burst(dp(), v6, kFlood)[LV_R_ALLOW].packets, uint64_t{kFlood});
  EXPECT_EQ(dp().send(dns), kAllowed);

  const auto cc = dp().class_counters();
  EXPECT_EQ(cc[kDns].passed.packets, 2u * kFlood + 1);
  EXPECT_EQ(cc[kDns].passed.bytes, (kFlood + 1) * dns.size() + kFlood * v6.size());
  EXPECT_EQ(cc[kSyn].passed.packets, uint64_t{kFlood});
  EXPECT_EQ(cc[kSyn].passed.bytes, kFlood * syn.size());
  for (auto id : {kDns, kSyn, kDefault}) EXPECT_EQ(cc[id].dropped.packets, 0u);
  EXPECT_EQ(dp().state_count(), 0u) << "allowed traffic creates no per-source state";

  // The neighbour outside the /24 is limited.
  EXPECT_EQ(passes(dp(), udp_from("198.18.0.9", 53), 5), int{kClassBurst});
}

TEST_F(ProgTest, DeniedSourceGetsNothingThroughCountedPerClassWithoutState) {
  Controller ctl(dp());
  ctl.install(lists_policy());
  const Bytes dns = udp_from("198.18.2.9", 53), syn = tcp_from("198.18.2.200", 80, kTcpSyn),
              other = ip_proto_from("198.18.2.1", 47), v6 = udp_from("2001:db8:2:9::1", 53);
  EXPECT_EQ(dp().send(dns), kDenied) << "the first packet, which its bucket would pass";
  EXPECT_EQ(dp().send(syn), kDenied);
  EXPECT_EQ(dp().send(other), kDenied);
  EXPECT_EQ(dp().send(v6), kDenied);
  const Counters c = burst(dp(), dns, 100);
  EXPECT_EQ(c[LV_R_DENY].packets, 100u) << describe(c);
  EXPECT_EQ(c[LV_R_DENY].bytes, 100u * dns.size());
  const auto cc = dp().class_counters();
  EXPECT_EQ(cc[kDns].dropped.packets, 102u);
  EXPECT_EQ(cc[kDns].dropped.bytes, 101u * dns.size() + v6.size());
  EXPECT_EQ(cc[kSyn].dropped.packets, 1u);
  EXPECT_EQ(cc[kDefault].dropped.packets, 1u);
  EXPECT_EQ(cc[kDefault].dropped.bytes, other.size());
  for (auto id : {kDns, kSyn, kDefault}) EXPECT_EQ(cc[id].passed.packets, 0u);
  EXPECT_EQ(dp().state_count(), 0u);
}

TEST_F(ProgTest, LongestPrefixDecides) {
  Controller ctl(dp());
  ctl.install(lists_policy());
  // Deny /32 inside allow /24.
  EXPECT_EQ(dp().send(udp_from("198.18.3.7", 53)), kDenied);
  EXPECT_EQ(dp().send(udp_from("198.18.3.6", 53)), kAllowed);
  EXPECT_EQ(dp().send(udp_from("198.18.3.8", 53)), kAllowed);
  // Allow /32 inside deny /24.
  EXPECT_EQ(burst(dp(), udp_from("198.18.4.7", 53), 50)[LV_R_ALLOW].packets, 50u);
  EXPECT_EQ(dp().send(udp_from("198.18.4.6", 53)), kDenied);
  EXPECT_EQ(dp().send(udp_from("198.18.4.8", 53)), kDenied);
  // Allow /25 inside an override /24: allowed, not limited by the override.
  EXPECT_EQ(burst(dp(), udp_from("198.18.5.200", 53), 50)[LV_R_ALLOW].packets, 50u);
  // Override /26 inside a deny /24: limited by the override, not denied.
  EXPECT_EQ(passes(dp(), udp_from("198.18.2.70", 53), 15), int{kPartnerBurst});
  EXPECT_EQ(dp().send(udp_from("198.18.2.130", 53)), kDenied);
  // IPv6: deny /64 inside allow /48, allow /128 inside deny /48.
  EXPECT_EQ(dp().send(udp_from("2001:db8:1:7::1", 53)), kDenied);
  EXPECT_EQ(dp().send(udp_from("2001:db8:1:8::1", 53)), kAllowed);
  EXPECT_EQ(dp().send(udp_from("2001:db8:1:6:ffff:ffff:ffff:ffff", 53)), kAllowed);
  EXPECT_EQ(dp().send(udp_from("2001:db8:2:7::7", 53)), kAllowed);
  EXPECT_EQ(dp().send(udp_from("2001:db8:2:7::8", 53)), kDenied);
  // Just outside every entry: limited.
  EXPECT_EQ(dp().send(udp_from("2001:db8:3::1", 53)), kConforming);
  EXPECT_EQ(dp().send(udp_from("198.18.8.1", 53)), kConforming);
}

TEST_F(ProgTest, OverrideReplacesTheLimitsOnlyOfItsClasses) {
  Controller ctl(dp());
  ctl.install(lists_policy());
  // "partner" applies to dns only.
  EXPECT_EQ(passes(dp(), udp_from("198.18.5.1", 53), 15), int{kPartnerBurst});
  EXPECT_EQ(passes(dp(), tcp_from("198.18.5.1", 80, kTcpSyn), 6), int{kClassBurst}) << "syn: the class's own";
  EXPECT_EQ(passes(dp(), udp_from("198.18.5.1", 54), 6), int{kClassBurst}) << "default: the class's own";
  // Keyed by the class's prefix (/32): another address of the network has its own.
  EXPECT_EQ(passes(dp(), udp_from("198.18.5.2", 53), 15), int{kPartnerBurst});
  EXPECT_TRUE(dp().state(source_key("198.18.5.1", 32, kDns)));
  // "everywhere" names no class: all of them.
  EXPECT_EQ(passes(dp(), udp_from("198.18.6.1", 53), 9), int{kEverywhereBurst});
  EXPECT_EQ(passes(dp(), tcp_from("198.18.6.1", 80, kTcpSyn), 9), int{kEverywhereBurst});
  EXPECT_EQ(passes(dp(), ip_proto_from("198.18.6.1", 47), 9), int{kEverywhereBurst});
  // No entry: the class's limits.
  EXPECT_EQ(passes(dp(), udp_from("198.18.8.1", 53), 6), int{kClassBurst});
  // IPv6.
  EXPECT_EQ(passes(dp(), udp_from("2001:db8:5::1", 53), 15), int{kPartnerBurst});
  EXPECT_EQ(passes(dp(), tcp_from("2001:db8:5::1", 80, kTcpSyn), 6), int{kClassBurst});
  EXPECT_EQ(passes(dp(), udp_from("2001:db8:6::1", 53), 6), int{kClassBurst});
}

// An override with only a byte limit: the class's packet limit is replaced, not kept.
TEST_F(ProgTest, OverrideWithOnlyAByteLimitReplacesThePacketLimit) {
  Controller ctl(dp());
  ctl.install(lists_policy());
  // 100-byte frames against 1000 bytes of burst: ten, and one more on the last credit.
  const Bytes f = ip_proto_from("198.18.7.1", 47, 100 - 34);
  ASSERT_EQ(f.size(), 100u);
  EXPECT_EQ(passes(dp(), f, 15, LV_R_BYTES), 11);
  const auto st = dp().state(source_key("198.18.7.1", 32, kDefault));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->ready_ns, 0u) << "no packet limit applied";
  // The override is for "default" only: dns from the same network has the class's limit.
  EXPECT_EQ(passes(dp(), udp_from("198.18.7.1", 53), 5), int{kClassBurst});
}

// ---- expiry --------------------------------------------------------------------------

// Clocks on which an entry expiring at now + 1 h (wall clock) compiles to a monotonic
// time an hour in the past, and one at now + 3 h to an hour ahead.
// The controller's clocks as if it had compiled the lists `shift` ago: expiries between
// then and now are over when the packets come. The shift is two hours, or less on a
// machine up for less (CLOCK_MONOTONIC counts from boot and must not go below 0).
struct Shifted {
  Clocks clk;
  uint64_t shift;
  uint64_t past() const { return clk.now_unix_ns + shift / 2; }            // over shift/2 ago
  uint64_t later_past() const { return clk.now_unix_ns + shift * 3 / 4; }  // over shift/4 ago
  uint64_t future() const { return clk.now_unix_ns + 3 * 3600 * kSec; }    // an hour or more ahead
};
Shifted shifted_clocks() {
  Shifted s{Clocks::read(), 0};
  s.shift = std::min<uint64_t>(2 * 3600 * kSec, s.clk.now_mono_ns / 2);
  s.clk.now_mono_ns -= s.shift;
  return s;
}

TEST_F(ProgTest, ExpiredDenyStopsMatchingAndItsCoveringEntryDecides) {
  const Shifted sh = shifted_clocks();
  const Clocks& clk = sh.clk;
  const uint64_t past = sh.past(), future = sh.future();
  Policy p = base_policy();
  p.lists = {
      list_entry("198.18.20.0/24", LV_LIST_ALLOW),
      list_entry("198.18.20.7/32", LV_LIST_DENY, {}, past),    // expired: the allow decides
      list_entry("198.18.20.8/32", LV_LIST_DENY, {}, future),  // still denies
      list_entry("198.18.21.7/32", LV_LIST_DENY, {}, past),    // expired, nothing covers it
      list_entry("198.18.22.0/24", LV_LIST_OVERRIDE, "partner"),
      list_entry("198.18.22.7/32", LV_LIST_DENY, {}, past),  // expired: the override decides
      list_entry("198.18.23.0/24", LV_LIST_DENY),
      list_entry("198.18.23.7/32", LV_LIST_DENY, {}, past),  // expired: the lasting deny decides
      list_entry("2001:db8:20::/48", LV_LIST_ALLOW),
      list_entry("2001:db8:20::7/128", LV_LIST_DENY, {}, past),
      list_entry("2001:db8:20::8/128", LV_LIST_DENY, {}, future),
  };
  Controller ctl(dp());
  ctl.install(p, clk);

  // The entries are in the active slot's trie as meant: expired, with their fallback.
  const uint64_t now = monotonic_ns();
  auto lists = ctl.map().active_lists();
  ASSERT_TRUE(lists);
  ASSERT_EQ(lists->v4.size(), 8u);
  ASSERT_EQ(lists->v6.size(), 3u);
  auto value_of = [&](std::string_view text) {
    const lv_lpm4 k = lpm4(text);
    for (const auto& [key, v] : lists->v4)
      if (key.prefixlen == k.prefixlen && key.addr == k.addr) return v;
    ADD_FAILURE() << text << " is not in the trie";
    return lv_list_value{};
  };
  for (const char* e : {"198.18.20.7/32", "198.18.21.7/32", "198.18.22.7/32", "198.18.23.7/32"}) {
    EXPECT_NE(value_of(e).expires_ns, 0u) << e;
    EXPECT_LT(value_of(e).expires_ns, now) << e;
  }
  EXPECT_GT(value_of("198.18.20.8/32").expires_ns, now + 3000 * kSec);
  EXPECT_EQ(value_of("198.18.20.7/32").after_kind, LV_LIST_ALLOW);
  EXPECT_EQ(value_of("198.18.21.7/32").after_kind, LV_LIST_NONE);
  EXPECT_EQ(value_of("198.18.22.7/32").after_kind, LV_LIST_OVERRIDE);
  EXPECT_EQ(value_of("198.18.22.7/32").after_override, 0u) << "partner is override 0";
  EXPECT_EQ(value_of("198.18.23.7/32").after_kind, LV_LIST_DENY);

  EXPECT_EQ(burst(dp(), udp_from("198.18.20.7", 53), 20)[LV_R_ALLOW].packets, 20u) << "allowed once expired";
  EXPECT_EQ(dp().send(udp_from("198.18.20.8", 53)), kDenied) << "not yet expired";
  EXPECT_EQ(dp().send(udp_from("198.18.20.9", 53)), kAllowed);
  EXPECT_EQ(passes(dp(), udp_from("198.18.21.7", 53), 5), int{kClassBurst}) << "expired, uncovered: limited";
  EXPECT_EQ(passes(dp(), udp_from("198.18.22.7", 53), 15), int{kPartnerBurst}) << "the override's limits";
  EXPECT_EQ(dp().send(udp_from("198.18.23.7", 53)), kDenied) << "the covering deny";
  EXPECT_EQ(burst(dp(), udp_from("2001:db8:20::7", 53), 20)[LV_R_ALLOW].packets, 20u);
  EXPECT_EQ(dp().send(udp_from("2001:db8:20::8", 53)), kDenied);
}

// An entry that expires while packets come: denied before, the fallback after.
TEST_F(ProgTest, DenyEntryExpiresInTheDatapathOnTime) {
  const Clocks clk = Clocks::read();
  constexpr uint64_t kIn = 300'000'000;  // 300 ms
  Policy p = base_policy();
  p.lists = {list_entry("198.18.24.0/24", LV_LIST_ALLOW),
             list_entry("198.18.24.7/32", LV_LIST_DENY, {}, clk.now_unix_ns + kIn)};
  Controller ctl(dp());
  ctl.install(p, clk);
  const uint64_t expires = clk.now_mono_ns + kIn;
  const Bytes f = udp_from("198.18.24.7", 53);
  ASSERT_LT(monotonic_ns() + 50'000'000, expires) << "the machine was too slow to test before the expiry";
  EXPECT_EQ(dp().send(f), kDenied);
  // The datapath judges expiry on its cached clock, up to a tick behind.
  const uint64_t settle = expires + 3 * clock_tick_ns();
  while (monotonic_ns() < settle) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(dp().send(f), kAllowed);
}

// An expiring deny /32 inside an expiring deny /24 that is still in force: once the /32
// expires, the /24 decides (after_*), and once that expires too, what covers both
// (then_*). (Both once fell back to "no entry".)
TEST_F(ProgTest, ExpiredDenyInsideALaterExpiringDenyIsStillDenied) {
  const Shifted sh = shifted_clocks();
  const Clocks& clk = sh.clk;
  const uint64_t past = sh.past(), future = sh.future();
  Policy p = base_policy();
  p.lists = {list_entry("198.18.25.0/24", LV_LIST_DENY, {}, future),
             list_entry("198.18.25.7/32", LV_LIST_DENY, {}, past),
             list_entry("2001:db8:25::/48", LV_LIST_DENY, {}, future),
             list_entry("2001:db8:25::7/128", LV_LIST_DENY, {}, past)};
  Controller ctl(dp());
  ctl.install(p, clk);
  ASSERT_EQ(dp().send(udp_from("198.18.25.8", 53)), kDenied) << "the /24 is in force";
  ASSERT_EQ(dp().send(udp_from("2001:db8:25::8", 53)), kDenied) << "the /48 is in force";
  const Outcome v4 = dp().send(udp_from("198.18.25.7", 53));
  const Outcome v6 = dp().send(udp_from("2001:db8:25::7", 53));
  EXPECT_EQ(v4, kDenied) << "inside the /24, which is in force";
  EXPECT_EQ(v6, kDenied) << "inside the /48, which is in force";

  // Both expired (the /32 first, then the /24), under an allow /16 that never expires:
  // the second fallback level decides.
  const uint64_t later_past = sh.later_past();
  p.lists = {list_entry("198.18.0.0/16", LV_LIST_ALLOW), list_entry("198.18.25.0/24", LV_LIST_DENY, {}, later_past),
             list_entry("198.18.25.7/32", LV_LIST_DENY, {}, past)};
  ctl.publish(p, clk);
  EXPECT_EQ(dp().send(udp_from("198.18.25.7", 53)), kAllowed) << "both denies over: the /16 allows";
  EXPECT_EQ(dp().send(udp_from("198.18.25.8", 53)), kAllowed);
}

// An expired deny /32 inside a deny /24 still in force, inside an allow /16 that never
// expires: the /24 decides, and the packet is dropped as denied. (`levee show` once
// said "allow" here, falling back to the /16; tests/unit/list_entries_test.cpp checks
// that it now finds the /24.)
TEST_F(ProgTest, ExpiredDenyUnderALiveDenyAndAPermanentAllowIsDenied) {
  const Shifted sh = shifted_clocks();
  Policy p = base_policy();
  p.lists = {list_entry("198.19.0.0/16", LV_LIST_ALLOW),
             list_entry("198.19.26.0/24", LV_LIST_DENY, {}, sh.future()),
             list_entry("198.19.26.7/32", LV_LIST_DENY, {}, sh.past()),
             list_entry("2001:db8:26::/48", LV_LIST_ALLOW),
             list_entry("2001:db8:26:1::/64", LV_LIST_DENY, {}, sh.future()),
             list_entry("2001:db8:26:1::7/128", LV_LIST_DENY, {}, sh.past())};
  Controller ctl(dp());
  ctl.install(p, sh.clk);
  EXPECT_EQ(dp().send(udp_from("198.19.26.7", 53)), kDenied) << "the /24 decides, not the /16";
  EXPECT_EQ(dp().send(udp_from("2001:db8:26:1::7", 53)), kDenied) << "the /64 decides, not the /48";
  EXPECT_EQ(dp().send(udp_from("198.19.27.7", 53)), kAllowed);
  EXPECT_EQ(dp().send(udp_from("2001:db8:26:2::7", 53)), kAllowed);
}

// ---- lists and the hot source ---------------------------------------------------------

// The hot-source check runs before the list lookup; the hot entry is keyed by the source
// masked to the class prefix, lists judge single addresses. A listed host in a flooding
// neighbour's /24 (/64) must be judged by its own entry, never rejected from the
// neighbour's hot entry. (It once was: 95 of 100 allowed packets dropped as RATE.)
TEST_F(ProgTest, ListedHostIsJudgedByItsEntryWhileItsClassPrefixFloods) {
  Policy p;
  p.classes = {class_spec("default", Match{}, {1, 2}, {}, 24, 64)};
  p.lists = {list_entry("198.18.50.2/32", LV_LIST_ALLOW), list_entry("198.18.50.3/32", LV_LIST_DENY),
             list_entry("2001:db8:50::2/128", LV_LIST_ALLOW)};
  Controller ctl(dp());
  ctl.install(p);
  ASSERT_TRUE(ctl.active().classes[0].flags & LV_CLASS_FAST_REJECT) << "tau 1 s covers two ticks";
  struct Group {
    Bytes flood, allowed, denied;
  };
  const Group v4{udp_from("198.18.50.1", 53), udp_from("198.18.50.2", 53), udp_from("198.18.50.3", 53)};
  const Group v6{udp_from("2001:db8:50::1", 53), udp_from("2001:db8:50::2", 53), {}};
  int wrong_allow = 0, wrong_deny = 0;
  for (const Group* g : {&v4, &v6}) {
    ASSERT_EQ(passes(dp(), g->flood, 3), 2) << "the flooder spent its /24 (/64) bucket and is hot";
    for (int i = 0; i < 50; ++i) {
      EXPECT_EQ(dp().send(g->flood), kRateDrop);
      const Outcome a = dp().send(g->allowed);
      wrong_allow += a != kAllowed;
      if (a != kAllowed) {
        EXPECT_EQ(a, kRateDrop) << "the only wrong outcome seen so far";
      }
      if (g->denied.empty()) continue;
      const Outcome d = dp().send(g->denied);
      wrong_deny += d != kDenied;
      EXPECT_EQ(d.verdict, kDrop) << "denied: dropped whatever the reason";
    }
  }
  EXPECT_EQ(wrong_allow, 0) << "allow-listed packets rejected from the neighbour's hot entry";
  EXPECT_EQ(wrong_deny, 0) << "denied packets counted under another reason than deny";
}

// ---- list counts and slots -------------------------------------------------------------

TEST_F(ProgTest, AFamilyWithoutListEntriesSkipsTheTrie) {
  Policy p = base_policy();
  Controller ctl(dp());
  ctl.install(p);
  ASSERT_EQ(ctl.active().nr_list4, 0u);
  ASSERT_EQ(ctl.active().nr_list6, 0u);
  // An entry put in the active slot's tries behind the controller's back: with a count of
  // 0 the datapath does not look.
  const unsigned slot = ctl.map().control().active & 1;
  const lv_list_value deny{LV_LIST_DENY, LV_ORIGIN_CLI, 0, 0, 0, 0, 0};
  const lv_lpm4 k4 = lpm4("198.18.30.0/24");
  const lv_lpm6 k6 = lpm6("2001:db8:30::/48");
  ASSERT_EQ(bpf_map_update_elem(dp().list_fds()[slot][0], &k4, &deny, BPF_ANY), 0);
  ASSERT_EQ(bpf_map_update_elem(dp().list_fds()[slot][1], &k6, &deny, BPF_ANY), 0);
  EXPECT_EQ(dp().send(udp_from("198.18.30.1", 53)), kConforming);
  EXPECT_EQ(dp().send(udp_from("2001:db8:30::1", 53)), kConforming);

  // IPv4 entries only: the IPv6 trie is still skipped, the IPv4 one consulted.
  p.lists = {list_entry("198.18.31.0/24", LV_LIST_DENY)};
  ctl.publish(p);
  ASSERT_EQ(ctl.active().nr_list4, 1u);
  ASSERT_EQ(ctl.active().nr_list6, 0u);
  const unsigned now_slot = ctl.map().control().active & 1;
  ASSERT_NE(now_slot, slot);
  ASSERT_EQ(bpf_map_update_elem(dp().list_fds()[now_slot][1], &k6, &deny, BPF_ANY), 0);
  EXPECT_EQ(dp().send(udp_from("198.18.31.1", 53)), kDenied);
  EXPECT_EQ(dp().send(udp_from("2001:db8:30::2", 53)), kConforming);

  // The IPv6 entry published: consulted now.
  p.lists.push_back(list_entry("2001:db8:30::/48", LV_LIST_DENY));
  ctl.publish(p);
  EXPECT_EQ(ctl.active().nr_list6, 1u);
  EXPECT_EQ(dp().send(udp_from("2001:db8:30::2", 53)), kDenied);
}

// Entries of one slot's trie, as CIDR strings, sorted.
template <typename Key>
std::vector<std::string> trie_cidrs(int fd) {
  auto entries = read_trie<Key>(fd);
  EXPECT_TRUE(entries);
  std::vector<std::string> out;
  if (!entries) return out;
  for (const auto& [k, v] : *entries) {
    Cidr c;
    c.len = k.prefixlen;
    if constexpr (sizeof(Key) == sizeof(lv_lpm4)) {
      c.family = 4;
      std::memcpy(c.addr.data(), &k.addr, 4);
    } else {
      c.family = 6;
      std::memcpy(c.addr.data(), k.addr, 16);
    }
    out.push_back(c.to_string() + (v.kind == LV_LIST_DENY ? " deny" : v.kind == LV_LIST_ALLOW ? " allow" : " ?"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(ProgTest, PublishSwitchesListsWithTheSlotAndThenCatchesUpTheOldSlot) {
  using V = std::vector<std::string>;
  Policy p = base_policy();
  for (ClassSpec& c : p.classes) c.packets = {1, 100};  // every unlisted packet here conforms
  p.lists = {list_entry("198.18.40.0/24", LV_LIST_DENY), list_entry("2001:db8:40::/48", LV_LIST_DENY)};
  Controller ctl(dp());
  ctl.install(p);
  const ListFds fds = dp().list_fds();
  // init writes both slots.
  EXPECT_EQ(trie_cidrs<lv_lpm4>(fds[0][0]), (V{"198.18.40.0/24 deny"}));
  EXPECT_EQ(trie_cidrs<lv_lpm4>(fds[1][0]), (V{"198.18.40.0/24 deny"}));
  EXPECT_TRUE(ctl.map().lists_synced());
  const Bytes a = udp_from("198.18.40.1", 53), b = udp_from("198.18.41.1", 53), c = udp_from("198.18.42.1", 53);
  const Bytes a6 = udp_from("2001:db8:40::1", 53), b6 = udp_from("2001:db8:41::1", 53);
  EXPECT_EQ(dp().send(a), kDenied);
  EXPECT_EQ(dp().send(a6), kDenied);
  EXPECT_EQ(dp().send(b), kConforming);

  // Publish B: applies from the next packet; after a grace period the old slot's maps
  // are brought to B as well, ready for the next change to be written as a difference.
  p.lists = {list_entry("198.18.41.0/24", LV_LIST_DENY), list_entry("2001:db8:41::/48", LV_LIST_DENY)};
  const uint32_t before = ctl.map().control().active;
  ctl.publish(p);
  const uint32_t after = ctl.map().control().active;
  ASSERT_EQ(after, before ^ 1);
  EXPECT_EQ(dp().send(b), kDenied);
  EXPECT_EQ(dp().send(b6), kDenied);
  EXPECT_EQ(dp().send(a), kConforming);
  EXPECT_EQ(dp().send(a6), kConforming);
  EXPECT_EQ(trie_cidrs<lv_lpm4>(fds[after][0]), (V{"198.18.41.0/24 deny"}));
  EXPECT_EQ(trie_cidrs<lv_lpm4>(fds[before][0]), (V{"198.18.41.0/24 deny"})) << "old slot caught up";
  EXPECT_EQ(trie_cidrs<lv_lpm6>(fds[before][1]), (V{"2001:db8:41::/48 deny"}));
  EXPECT_TRUE(ctl.map().lists_synced());

  // Publish C: the old slot is written (B gone), and becomes active.
  p.lists = {list_entry("198.18.42.0/24", LV_LIST_ALLOW)};
  ctl.publish(p);
  ASSERT_EQ(ctl.map().control().active, before);
  EXPECT_EQ(trie_cidrs<lv_lpm4>(fds[before][0]), (V{"198.18.42.0/24 allow"}));
  EXPECT_EQ(trie_cidrs<lv_lpm6>(fds[before][1]), V{});
  EXPECT_EQ(ctl.active().nr_list6, 0u);
  EXPECT_EQ(dp().send(c), kAllowed);
  EXPECT_EQ(dp().send(b), kConforming);
  EXPECT_EQ(dp().send(b6), kConforming);
  EXPECT_EQ(dp().send(a6), kConforming);
  EXPECT_EQ(trie_cidrs<lv_lpm4>(fds[after][0]), (V{"198.18.42.0/24 allow"}));

  // Publishing no lists empties both slots' tries.
  p.lists.clear();
  ctl.publish(p);
  EXPECT_EQ(trie_cidrs<lv_lpm4>(fds[after][0]), V{});
  EXPECT_EQ(trie_cidrs<lv_lpm4>(fds[before][0]), V{});
  EXPECT_EQ(dp().send(c), kConforming);
}

}  // namespace
}  // namespace levee::progtest
