// prune_test.cpp - levee prune without the kernel: which sources are idle (every limit
// in use full for the idle time, networks by their own limits, overrides widening
// them), which ban records may go, and the known-source filter it refills.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "datapath/maps.hpp"
#include "datapath/prune.hpp"
#include "limiter.h"
#include "policy/class_ids.hpp"
#include "policy/compile.hpp"
#include "policy/policy.hpp"
#include "unit.hpp"

namespace levee {
namespace {

constexpr uint64_t kNow = 5'000 * kSec;  // CLOCK_MONOTONIC, well after boot

TEST(PruneIdle, AFullBucketForTheIdleTimeIsIdle) {
  const lv_class c = pps_class();
  ASSERT_EQ(c.pkt.tau_ns, 400 * kMs);
  const lv_key k = v4_key("198.18.0.7");
  const uint64_t idle = 10 * kSec;
  lv_state s{};
  // Full since ready + tau: idle once that is more than `idle` in the past.
  s.ready_ns = kNow - idle - c.pkt.tau_ns - 1;
  EXPECT_TRUE(state_idle(k, s, c, kNow, idle));
  s.ready_ns = kNow - idle - c.pkt.tau_ns;  // exactly `idle` ago: not yet more
  EXPECT_FALSE(state_idle(k, s, c, kNow, idle));
  s.ready_ns = kNow - c.pkt.tau_ns;  // full just now
  EXPECT_FALSE(state_idle(k, s, c, kNow, idle));
  s.ready_ns = kNow + 30 * kSec;  // pushed ahead by a ban
  EXPECT_FALSE(state_idle(k, s, c, kNow, idle));
  // A source that sent its first packet long ago and nothing since: first = t - tau + T.
  s.ready_ns = lv_gcra_first(kNow - 11 * kSec, &c.pkt);
  EXPECT_TRUE(state_idle(k, s, c, kNow, idle));
  s.ready_ns = lv_gcra_first(kNow - 9 * kSec, &c.pkt);
  EXPECT_FALSE(state_idle(k, s, c, kNow, idle));
}

TEST(PruneIdle, EveryLimitInUseMustBeFull) {
  ClassSpec spec;
  spec.name = "both";
  spec.packets = {10, 5};
  spec.bytes = {1000, 1000};  // tau 1 s
  const lv_class c = compile_class(spec, 4 * kMs, 2);
  const lv_key k = v4_key("198.18.0.7");
  lv_state s{};
  s.ready_ns = kNow - 100 * kSec;
  s.ready_bytes_ns = kNow - 100 * kSec;
  EXPECT_TRUE(state_idle(k, s, c, kNow, 60 * kSec));
  s.ready_bytes_ns = kNow - 30 * kSec;  // the byte limit was spent recently
  EXPECT_FALSE(state_idle(k, s, c, kNow, 60 * kSec));
  // A limit the class does not have is not looked at (its word stays 0 in the state).
  const lv_class pkt_only = pps_class();
  EXPECT_TRUE(state_idle(k, s, pkt_only, kNow, 60 * kSec));
}

TEST(PruneIdle, NetworksAreJudgedByTheNetworkLimits) {
  ClassSpec spec;
  spec.name = "net";
  spec.packets = {10, 5};
  spec.network.packets = {100, 1000};  // tau 9.99 s
  const lv_class c = compile_class(spec, 4 * kMs, 2);
  const lv_key net = v4_key("198.18.0.0", 0, 0, true);
  lv_state s{};
  s.ready_ns = kNow - 15 * kSec;  // full 5 s ago by the network's tau, 14.6 s by the source's
  EXPECT_FALSE(state_idle(net, s, c, kNow, 10 * kSec));
  EXPECT_TRUE(state_idle(net, s, c, kNow, 4 * kSec));
  EXPECT_TRUE(state_idle(v4_key("198.18.0.1"), s, c, kNow, 10 * kSec));  // a source, by its own limit
  // A network entry of a class that lost its network limit is never read again.
  EXPECT_TRUE(state_idle(net, s, pps_class(), kNow, 10 * kSec));
}

TEST(PruneIdle, WithoutALimitPerSourceOnlyAnAdmissionBudgetKeepsTheState) {
  ClassSpec spec;
  spec.name = "total-only";
  spec.total.packets = {1000, 100};
  const lv_class c = compile_class(spec, 4 * kMs, 2);
  lv_state s{};  // ready times 0: nothing to judge by
  EXPECT_TRUE(state_idle(v4_key("198.18.0.7"), s, c, kNow, 10 * kSec));
  spec.new_sources = {100, 10};
  const lv_class admits = compile_class(spec, 4 * kMs, 2);
  EXPECT_FALSE(state_idle(v4_key("198.18.0.7"), s, admits, kNow, 10 * kSec));
}

TEST(PruneIdle, NothingIsIdleLongerThanTheClockHasRun) {
  lv_state s{};
  EXPECT_FALSE(state_idle(v4_key("198.18.0.7"), s, pps_class(), 5 * kSec, 10 * kSec));
}

TEST(PruneIdle, KeysOfGoneClassesAreNotCurrent) {
  lv_policy p = two_class_policy();
  const std::vector<uint8_t> ids = class_order(p);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_TRUE(key_current(v4_key("198.18.0.7", ids[0], p.classes[ids[0]].epoch), p));
  EXPECT_FALSE(key_current(v4_key("198.18.0.7", ids[0], p.classes[ids[0]].epoch + 1), p)) << "earlier class's epoch";
  EXPECT_FALSE(key_current(v4_key("198.18.0.7", 17), p)) << "unused id";
  EXPECT_FALSE(key_current(v4_key("198.18.0.7", LV_ALL_CLASSES), p));
}

TEST(PruneIdle, OverridesWidenTheLimitsJudged) {
  Policy p;
  ClassSpec def;
  def.name = "default";
  def.packets = {10, 5};  // tau 400 ms
  p.classes = {def};
  OverrideSpec o;
  o.name = "partner";
  o.packets = {10, 1000};  // tau 99.9 s
  o.bytes = {1000, 2000};
  p.overrides = {o};
  const lv_policy slot = compile(p, Clocks::read()).slot;
  const lv_class c = prune_class(slot, 0);
  EXPECT_EQ(c.pkt.tau_ns, slot.overrides[0].pkt.tau_ns);
  EXPECT_EQ(c.bytes.tau_ns, slot.overrides[0].bytes.tau_ns);
  lv_state s{};
  s.ready_ns = kNow - 60 * kSec;  // idle for 10 s by the class, not by the override
  EXPECT_TRUE(state_idle(v4_key("198.18.0.7"), s, slot.classes[0], kNow, 10 * kSec));
  EXPECT_FALSE(state_idle(v4_key("198.18.0.7"), s, c, kNow, 10 * kSec));
}

TEST(PruneBans, RecordsGoWhenTheirOffencesAreForgotten) {
  const lv_policy p = two_class_policy();
  const uint8_t dns = class_order(p)[0];
  const lv_key k = v4_key("198.18.0.7", dns, p.classes[dns].epoch);
  lv_ban b{};
  b.class_id = dns;
  b.until_ns = kNow + kSec;  // banning
  EXPECT_FALSE(ban_forgettable(k, b, p, kNow));
  b.until_ns = kNow - 59 * kSec;  // over, offences remembered for 60 s
  EXPECT_FALSE(ban_forgettable(k, b, p, kNow));
  b.until_ns = kNow - 60 * kSec;
  EXPECT_TRUE(ban_forgettable(k, b, p, kNow));
  // A record of a class that is gone, even banning: no packet looks it up again.
  b.until_ns = kNow + kSec;
  EXPECT_TRUE(ban_forgettable(v4_key("198.18.0.7", dns, p.classes[dns].epoch + 1), b, p, kNow));
}

TEST(PruneBans, EveryClassRecordsUseTheLongestForgetOfTheClassesBanningEverywhere) {
  Policy pol;
  ClassSpec a;
  a.name = "a";
  a.match.protos = {Proto::Udp};
  a.packets = {10, 5};
  a.ban = {.ban_ns = kSec, .forget_ns = 30 * kSec, .all_classes = true};
  ClassSpec d;
  d.name = "default";
  d.packets = {10, 5};
  d.ban = {.ban_ns = kSec, .forget_ns = 90 * kSec, .all_classes = true};
  pol.classes = {a, d};
  const lv_policy p = compile(pol, Clocks::read()).slot;
  lv_key k = v4_key("198.18.0.7", LV_ALL_CLASSES);
  lv_ban b{};
  b.until_ns = kNow - 60 * kSec;
  EXPECT_FALSE(ban_forgettable(k, b, p, kNow)) << "class default remembers it for 90 s";
  b.until_ns = kNow - 91 * kSec;
  EXPECT_TRUE(ban_forgettable(k, b, p, kNow));
  // No class bans in every class any more: such a record goes once its ban is over.
  const lv_policy none = two_class_policy();
  b.until_ns = kNow - kSec;
  EXPECT_TRUE(ban_forgettable(k, b, none, kNow));
  b.until_ns = kNow + kSec;
  EXPECT_FALSE(ban_forgettable(k, b, none, kNow));
}

}  // namespace
}  // namespace levee
