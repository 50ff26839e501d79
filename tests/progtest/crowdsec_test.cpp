// crowdsec_test.cpp - CrowdSec decisions in the kernel: the maps levee run's bouncer
// writes (datapath/crowdsec_maps.hpp, through the real writer), the datapath's check after the
// operator's lists, each entry's expiry on the program's clock, monitor mode, and a
// startup pull's worth of entries written in time.
#include <linux/bpf.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "datapath/crowdsec_maps.hpp"
#include "frames.hpp"

namespace levee::progtest {
namespace {

constexpr uint32_t kPass = XDP_PASS, kDrop = XDP_DROP;
constexpr uint64_t kSec = LV_NSEC_PER_SEC;
constexpr Outcome kConforming{kPass, LV_R_CONFORMING}, kAllowed{kPass, LV_R_ALLOW}, kDenied{kDrop, LV_R_DENY},
    kFleet{kDrop, LV_R_CROWDSEC}, kWould{kPass, LV_R_MONITORED};

// One class far from its limit, an allow and a deny list.
Policy policy(bool monitor = false) {
  Policy p;
  p.classes = {class_spec("default", Match{}, {1'000'000, 1'000'000})};
  p.lists = {list_entry("198.18.1.0/24", LV_LIST_ALLOW), list_entry("2001:db8:1::/48", LV_LIST_ALLOW),
             list_entry("198.18.2.0/24", LV_LIST_DENY)};
  p.monitor = monitor;
  return p;
}

CsEntry entry(const char* net, uint64_t expires_ns, uint64_t id = 1) { return CsEntry{cidr(net), {expires_ns, id}}; }

uint32_t all_present() { return LV_CS_HOST4 | LV_CS_HOST6 | LV_CS_NET4 | LV_CS_NET6; }

CrowdsecMaps maps_of(const Datapath& dp) {
  auto m = CrowdsecMaps::of(dp.pinned("lvtest"));
  if (!m) throw std::runtime_error(m.error().message());
  return std::move(m.value());
}

TEST_F(ProgTest, CrowdsecDecisionDropsWithItsReasonAndTheAllowListWins) {
  Controller ctl(dp());
  ctl.install(policy());
  CrowdsecMaps m = maps_of(dp());
  const uint64_t later = monotonic_ns() + 3600 * kSec;
  const std::vector<CsEntry> entries{entry("198.18.9.9/32", later),     entry("198.18.10.0/24", later),
                                     entry("2001:db8:9::9/128", later), entry("2001:db8:a::/48", later),
                                     entry("198.18.1.5/32", later),     entry("2001:db8:1::5/128", later),
                                     entry("198.18.2.5/32", later)};
  ASSERT_TRUE(m.put(entries).ok());
  // Entries written, no map marked present: the datapath does not look.
  EXPECT_EQ(dp().send(udp_from("198.18.9.9", 53)), kConforming);
  m.set_present(all_present());

  for (const char* src : {"198.18.9.9", "198.18.10.77", "2001:db8:9::9", "2001:db8:a:1::1"})
    EXPECT_EQ(dp().send(udp_from(src, 53)), kFleet) << src;
  // An operator allow-listed network is never dropped by a fleet decision; the deny list
  // keeps its own reason.
  EXPECT_EQ(dp().send(udp_from("198.18.1.5", 53)), kAllowed);
  EXPECT_EQ(dp().send(udp_from("2001:db8:1::5", 53)), kAllowed);
  EXPECT_EQ(dp().send(udp_from("198.18.2.5", 53)), kDenied);
  // Neighbours of a host decision are not touched.
  EXPECT_EQ(dp().send(udp_from("198.18.9.8", 53)), kConforming);
  EXPECT_EQ(dp().send(udp_from("2001:db8:9::8", 53)), kConforming);

  // Counted under crowdsec, packets and bytes, per class as dropped.
  const Counters before = dp().counters();
  const Bytes frame = udp_from("198.18.9.9", 53);
  ASSERT_EQ(dp().run(frame, 100).err, 0);
  const Counters after = dp().counters();
  EXPECT_EQ(after[LV_R_CROWDSEC].packets - before[LV_R_CROWDSEC].packets, 100u);
  EXPECT_EQ(after[LV_R_CROWDSEC].bytes - before[LV_R_CROWDSEC].bytes, 100u * frame.size());

  // Removed: passes again.
  const std::vector<Cidr> gone{cidr("198.18.9.9/32"), cidr("2001:db8:a::/48")};
  ASSERT_TRUE(m.remove(gone).ok());
  EXPECT_EQ(dp().send(udp_from("198.18.9.9", 53)), kConforming);
  EXPECT_EQ(dp().send(udp_from("2001:db8:a:1::1", 53)), kConforming);
  auto held = m.read();
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->size(), entries.size() - 2);
}

TEST_F(ProgTest, CrowdsecDecisionStopsMatchingAtItsExpiryWithoutTheController) {
  Controller ctl(dp());
  ctl.install(policy());
  CrowdsecMaps m = maps_of(dp());
  const uint64_t now = monotonic_ns();
  const std::vector<CsEntry> entries{entry("198.18.9.1/32", now - kSec), entry("2001:db8:9::1/128", now - kSec),
                                     // an expired host inside a range in force: the range decides
                                     entry("198.18.11.0/24", now + 3600 * kSec), entry("198.18.11.1/32", now - kSec)};
  ASSERT_TRUE(m.put(entries).ok());
  m.set_present(all_present());
  EXPECT_EQ(dp().send(udp_from("198.18.9.1", 53)), kConforming);
  EXPECT_EQ(dp().send(udp_from("2001:db8:9::1", 53)), kConforming);
  EXPECT_EQ(dp().send(udp_from("198.18.11.1", 53)), kFleet);

  // One that expires in a moment: dropped, then (the cached clock lags by up to a tick)
  // passed, with nothing written in between.
  const uint64_t soon = monotonic_ns() + 200'000'000;
  const std::vector<CsEntry> brief{entry("198.18.9.2/32", soon)};
  ASSERT_TRUE(m.put(brief).ok());
  EXPECT_EQ(dp().send(udp_from("198.18.9.2", 53)), kFleet);
  while (monotonic_ns() < soon + 50'000'000) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  dp().send(udp_from("198.18.9.3", 53));  // refreshes the cached clock
  EXPECT_EQ(dp().send(udp_from("198.18.9.2", 53)), kConforming);
}

TEST_F(ProgTest, CrowdsecDecisionInMonitorModeIsCountedAsWouldDrop) {
  Controller ctl(dp());
  ctl.install(policy(true));
  CrowdsecMaps m = maps_of(dp());
  const std::vector<CsEntry> entries{entry("198.18.9.9/32", monotonic_ns() + 3600 * kSec)};
  ASSERT_TRUE(m.put(entries).ok());
  m.set_present(all_present());
  EXPECT_EQ(dp().send(udp_from("198.18.9.9", 53)), kWould);
  uint64_t would = 0;
  for (const lv_percpu& p : dp().percpu()) would += p.would[LV_R_CROWDSEC].packets;
  EXPECT_EQ(would, 1u);
}

// What levee shares with the fleet is its own bans (levee run's publisher takes only
// LV_EV_BANNED events). A source dropped for a CrowdSec decision is dropped before any
// limit: however hard it floods a class that bans, it starts no ban and raises no event,
// so a decision levee received never goes back to the Local API as levee's own.
TEST_F(ProgTest, CrowdsecDecisionStartsNoBanAndNoEventSoItIsNeverPublishedBack) {
  Policy p;
  ClassSpec c = class_spec("default", Match{}, {1, 2});
  c.ban.ban_ns = 120 * kSec;
  p.classes = {c};
  Controller ctl(dp());
  ctl.install(p);
  CrowdsecMaps m = maps_of(dp());
  const std::vector<CsEntry> entries{entry("198.18.9.9/32", monotonic_ns() + 3600 * kSec),
                                     entry("2001:db8:9::/48", monotonic_ns() + 3600 * kSec)};
  ASSERT_TRUE(m.put(entries).ok());
  m.set_present(all_present());
  dp().events();  // none so far; start from an empty ring

  for (const char* src : {"198.18.9.9", "2001:db8:9::9"}) {
    const Bytes frame = udp_from(src, 53);
    for (int i = 0; i < 50; ++i) ASSERT_EQ(dp().send(frame), kFleet) << src << " packet " << i;
  }
  EXPECT_EQ(dp().ban_count(), 0u) << "a fleet decision is not a ban of levee's";
  EXPECT_TRUE(dp().events().empty()) << "nothing for levee run to publish";

  // The same flood from a source without a decision is banned, and says so: the check
  // above would see a ban if there were one.
  const Bytes frame = udp_from("198.18.9.8", 53);
  for (int i = 0; i < 50; ++i) dp().send(frame);
  EXPECT_EQ(dp().ban_count(), 1u);
  size_t bans = 0;
  for (const lv_event& e : dp().events()) bans += e.type == LV_EV_BANNED;
  EXPECT_EQ(bans, 1u);
}

// A startup pull of 100k decisions (the size the bouncer is asked to handle in 2 s):
// the writer's share, batched into the hashes.
TEST_F(ProgTest, CrowdsecHundredThousandDecisionsAreWrittenWellWithinTwoSeconds) {
  Controller ctl(dp());
  ctl.install(policy());
  CrowdsecMaps m = maps_of(dp());
  const uint64_t later = monotonic_ns() + 3600 * kSec;
  std::vector<CsEntry> entries;
  constexpr uint32_t kN = 100'000;
  for (uint32_t i = 0; i < kN; ++i) {
    CsEntry e{cidr("198.18.0.0/32"), {later, i + 1}};
    e.net.family = 4;
    e.net.len = i % 100 == 0 ? 24 : 32;  // 1 % ranges, into the tries
    const uint32_t a = (198u << 24) | (19u << 16) | (i & 0xffff);
    const uint32_t addr = i % 100 == 0 ? ((10u << 24) | (i << 8)) : (i < 65536 ? a : (a ^ 0x00020000u));
    for (int b = 0; b < 4; ++b) e.net.addr[b] = static_cast<uint8_t>(addr >> (24 - 8 * b));
    entries.push_back(e);
  }
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(m.put(entries).ok());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.set_present(all_present());
  RecordProperty("seconds", std::to_string(s));
  std::printf("100k CrowdSec decisions written in %.3f s\n", s);
  EXPECT_LT(s, 1.0) << "the bouncer has 2 s for the pull, the parse and this";
  auto held = m.read();
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->size(), kN);
  EXPECT_EQ(dp().send(udp_from("198.19.0.5", 53)), kFleet);
}

}  // namespace
}  // namespace levee::progtest
