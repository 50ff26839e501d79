// ops_test.cpp - the operations on a running interface without the kernel: prune's idle
// predicate and ban records, the known-source filter refill, top's ranking and output,
// the event log's decoding, JSON and ban ends, and the command line of prune, top and
// events.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "bpf/maps.hpp"
#include "bpf/prune.hpp"
#include "cli/app.hpp"
#include "export/events.hpp"
#include "export/top.hpp"
#include "limiter.h"
#include "policy/class_ids.hpp"
#include "policy/compile.hpp"
#include "policy/policy.hpp"

namespace levee {
namespace {

constexpr uint64_t kSec = LV_NSEC_PER_SEC;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kNow = 5'000 * kSec;  // CLOCK_MONOTONIC, well after boot

lv_key v4_key(const char* addr, unsigned class_id = 0, uint8_t epoch = 0, bool network = false) {
  lv_key k{};
  k.addr[2] = htonl(0xffff);
  inet_pton(AF_INET, addr, &k.addr[3]);
  k.class_id = static_cast<uint16_t>(class_id);
  k.family = LV_AF_INET | (network ? LV_KEY_NETWORK : 0);
  k.epoch = epoch;
  return k;
}

lv_key v6_key(const char* addr, unsigned class_id = 0) {
  lv_key k{};
  inet_pton(AF_INET6, addr, k.addr);
  k.class_id = static_cast<uint16_t>(class_id);
  k.family = LV_AF_INET6;
  return k;
}

// A class of 10 pps, burst 5 (tau 400 ms), as compile() makes it.
lv_class pps_class() {
  ClassSpec c;
  c.name = "c";
  c.packets = {10, 5};
  return compile_class(c, 4 * kMs, 2);
}

// ---- prune: the idle predicate -----------------------------------------------------------

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

lv_policy two_class_policy() {
  Policy p;
  ClassSpec dns;
  dns.name = "dns";
  dns.match.protos = {Proto::Udp};
  dns.match.ports = {{53, 53}};
  dns.packets = {10, 5};
  dns.ban.ban_ns = 2 * kSec;
  dns.ban.forget_ns = 60 * kSec;
  ClassSpec def;
  def.name = "default";
  def.packets = {100, 10};
  p.classes = {dns, def};
  return compile(p, Clocks::read()).slot;
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

// ---- the known-source filter ------------------------------------------------------------

TEST(SeenFilter, MarkSetsTheBitTheDatapathTests) {
  std::vector<uint64_t> half(LV_SEEN_WORDS, ~uint64_t{0});
  seen_clear(half.data());
  EXPECT_TRUE(std::all_of(half.begin(), half.end(), [](uint64_t w) { return w == 0; }));
  const uint32_t seed = 0x5eed;
  const lv_key k = v4_key("198.18.0.7");
  EXPECT_FALSE(seen_test(half.data(), k, seed));
  seen_mark(half.data(), k, seed);
  EXPECT_TRUE(seen_test(half.data(), k, seed));
  const uint32_t h = lv_seen_hash(&k, seed);
  EXPECT_EQ(half[h >> 6], uint64_t{1} << (h & 63));  // the datapath's word and bit
  size_t set = 0;
  for (uint64_t w : half) set += static_cast<size_t>(__builtin_popcountll(w));
  EXPECT_EQ(set, 1u);
}

TEST(SeenFilter, MarkingLosesNoBitSetConcurrently) {
  // The datapath ORs bits into the half being refilled; a plain store of a word would
  // lose them. Two writers on the same words, every bit must survive.
  std::vector<uint64_t> half(LV_SEEN_WORDS, 0);
  std::vector<lv_key> ours, theirs;
  for (unsigned i = 0; i < 20000; ++i) {
    lv_key k = v4_key("198.18.0.0");
    k.addr[3] = htonl(0xc6120000u + i);
    (i % 2 ? theirs : ours).push_back(k);
  }
  const uint32_t seed = 7;
  std::thread datapath([&] {
    for (const lv_key& k : theirs) {
      const uint32_t h = lv_seen_hash(&k, seed);
      __atomic_fetch_or(&half[h >> 6], uint64_t{1} << (h & 63), __ATOMIC_RELAXED);
    }
  });
  for (const lv_key& k : ours) seen_mark(half.data(), k, seed);
  datapath.join();
  for (const auto* v : {&ours, &theirs})
    for (const lv_key& k : *v) ASSERT_TRUE(seen_test(half.data(), k, seed));
}

// ---- top ---------------------------------------------------------------------------------

TEST(Top, Scores) {
  const TopCounts c{100, 6400, 900, 57600};
  EXPECT_EQ(top_score(c, TopBy::Drops), 900u);
  EXPECT_EQ(top_score(c, TopBy::Packets), 1000u);
  EXPECT_EQ(top_score(c, TopBy::Bytes), 64000u);
  // Both 32-bit halves summed without wrapping in 64 bits.
  EXPECT_EQ(top_score(TopCounts{0xffffffffu, 0, 0xffffffffu, 0}, TopBy::Packets), 0x1fffffffeull);
  EXPECT_EQ(parse_top_by("packets"), TopBy::Packets);
  EXPECT_FALSE(parse_top_by("pps"));
}

TEST(Top, CountersUnpackFromTheState) {
  lv_state s{};
  s.passed = 5 | (uint64_t{320} << 32);
  s.dropped = 7 | (uint64_t{448} << 32);
  const TopCounts c = TopCounts::of(s);
  EXPECT_EQ(c.passed_packets, 5u);
  EXPECT_EQ(c.passed_bytes, 320u);
  EXPECT_EQ(c.dropped_packets, 7u);
  EXPECT_EQ(c.dropped_bytes, 448u);
}

TEST(Top, DifferencesAreModulo32BitsAndARecreatedStateStartsOver) {
  const TopCounts before{10, 0xfffffff0u, 20, 100};
  const TopCounts after{15, 0x10u, 30, 200};  // bytes wrapped
  const TopCounts d = counts_since(before, after);
  EXPECT_EQ(d.passed_packets, 5u);
  EXPECT_EQ(d.passed_bytes, 0x20u);
  EXPECT_EQ(d.dropped_packets, 10u);
  EXPECT_EQ(d.dropped_bytes, 100u);
  const TopCounts fresh{3, 192, 0, 0};  // fewer packets than before: a new state
  const TopCounts f = counts_since(before, fresh);
  EXPECT_EQ(f.passed_packets, 3u);
  EXPECT_EQ(f.passed_bytes, 192u);
}

TEST(Top, PartialSortGivesTheHighestInOrder) {
  std::mt19937_64 rng(42);
  std::vector<uint64_t> scores(100000);
  for (auto& s : scores) s = rng() % 1000;  // many ties
  const std::vector<size_t> top = top_indices(scores, 25);
  ASSERT_EQ(top.size(), 25u);
  std::vector<size_t> all(scores.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::stable_sort(all.begin(), all.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  for (size_t i = 0; i < top.size(); ++i) EXPECT_EQ(top[i], all[i]) << i;
  EXPECT_EQ(top_indices(scores, 0).size(), 0u);
  EXPECT_EQ(top_indices(std::vector<uint64_t>{3, 9, 1}, 10), (std::vector<size_t>{1, 0, 2}));
}

TEST(Top, CountsByKeyFindEveryKeyOfTheWalk) {
  std::vector<lv_key> keys;
  std::vector<lv_state> states;
  for (uint32_t i = 0; i < 50000; ++i) {
    lv_key k = v6_key("2001:db8::");
    k.addr[3] = htonl(i);
    k.class_id = static_cast<uint16_t>(i % 3);
    keys.push_back(k);
    lv_state s{};
    s.passed = i | (uint64_t{i * 64} << 32);
    states.push_back(s);
  }
  KeyedCounts kc;
  kc.assign(keys, states);
  EXPECT_EQ(kc.size(), keys.size());
  for (uint32_t i = 0; i < keys.size(); ++i) {
    const TopCounts* c = kc.find(keys[i]);
    ASSERT_NE(c, nullptr) << i;
    ASSERT_EQ(c->passed_packets, i);
    ASSERT_EQ(c->passed_bytes, i * 64);
  }
  lv_key other = keys[7];
  other.epoch = 1;  // same address and class, an earlier class's state
  EXPECT_EQ(kc.find(other), nullptr);
  kc.assign(std::span<const lv_key>(keys.data(), 1), std::span<const lv_state>(states.data(), 1));
  EXPECT_EQ(kc.size(), 1u);
  EXPECT_EQ(kc.find(keys[7]), nullptr) << "the previous walk's keys are gone";
  EXPECT_EQ(KeyedCounts{}.find(keys[0]), nullptr);
}

TEST(Top, AddressesAsKeyed) {
  EXPECT_EQ(key_address(v4_key("198.18.0.7").addr, LV_AF_INET, 32), "198.18.0.7");
  EXPECT_EQ(key_address(v4_key("198.18.0.0").addr, LV_AF_INET, 24), "198.18.0.0/24");
  EXPECT_EQ(key_address(v4_key("198.18.0.0").addr, LV_AF_INET | LV_KEY_NETWORK, 16), "198.18.0.0/16");
  EXPECT_EQ(key_address(v6_key("2001:db8:1::").addr, LV_AF_INET6, 64), "2001:db8:1::/64");
  EXPECT_EQ(key_address(v6_key("2001:db8::7").addr, LV_AF_INET6, 128), "2001:db8::7");
}

TEST(Top, LimiterViewOfARow) {
  const lv_class c = pps_class();  // 10 pps, burst 5
  lv_state s{};
  TopRow r;
  s.ready_ns = kNow - kSec;  // long full
  top_limiter(r, s, c.pkt, c.bytes, kNow);
  EXPECT_EQ(r.tokens, 5u);
  EXPECT_FALSE(r.byte_tokens);
  EXPECT_EQ(r.wait_ns, 0u);
  s.ready_ns = kNow + 30 * kMs;
  top_limiter(r, s, c.pkt, c.bytes, kNow);
  EXPECT_EQ(r.tokens, 0u);
  EXPECT_EQ(r.wait_ns, 30 * kMs);
}

TopView sample_view() {
  TopView v;
  v.iface = "eth0";
  v.by = TopBy::Drops;
  v.sources = 1'000'000;
  v.walk_seconds = 0.25;
  TopRow r;
  r.key = v4_key("198.18.0.0");
  r.address = "198.18.0.0/24";
  r.prefix = 24;
  r.class_name = "dns";
  r.counts = {111, 7104, 7827, 500928};
  r.tokens = 0;
  r.wait_ns = 9 * kMs;
  r.banned = true;
  r.ban_remaining_ns = 1500 * kMs;
  v.rows.push_back(r);
  return v;
}

TEST(Top, JsonShape) {
  nlohmann::json j = top_json(sample_view());
  for (const char* f : {"interface", "by", "sources", "networks", "counter_bits", "walk_ms", "interval_s", "rows"})
    EXPECT_TRUE(j.contains(f)) << f;
  EXPECT_EQ(j["by"], "drops");
  EXPECT_EQ(j["counter_bits"], 32);
  EXPECT_EQ(j["walk_ms"], 250);
  EXPECT_TRUE(j["networks"].is_null());
  ASSERT_EQ(j["rows"].size(), 1u);
  const auto& r = j["rows"][0];
  EXPECT_EQ(r["address"], "198.18.0.0/24");
  EXPECT_EQ(r["family"], 4);
  EXPECT_EQ(r["prefix"], 24);
  EXPECT_EQ(r["class"], "dns");
  EXPECT_EQ(r["dropped_packets"], 7827);
  EXPECT_EQ(r["passed_bytes"], 7104);
  EXPECT_EQ(r["tokens"], 0);
  EXPECT_TRUE(r["byte_tokens"].is_null());
  EXPECT_EQ(r["wait_ns"], 9 * kMs);
  EXPECT_EQ(r["banned"], true);
  EXPECT_EQ(r["ban_remaining_ms"], 1500);
  EXPECT_TRUE(r["rates"].is_null());
  EXPECT_FALSE(r["network"].get<bool>());

  TopView w = sample_view();
  w.interval = 2.0;
  w.rows[0].delta = TopCounts{20, 1280, 4000, 256000};
  const nlohmann::json wj = top_json(w);
  const auto& rates = wj["rows"][0]["rates"];
  EXPECT_DOUBLE_EQ(rates["dropped_pps"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(rates["passed_bps"].get<double>(), 640.0);
}

TEST(Top, Text) {
  const std::string t = top_text(sample_view());
  EXPECT_NE(t.find("eth0: top 1 of 1,000,000 sources by drops"), std::string::npos) << t;
  EXPECT_NE(t.find("198.18.0.0/24"), std::string::npos) << t;
  EXPECT_NE(t.find("7,827"), std::string::npos) << t;
  EXPECT_NE(t.find("for 1.5 s"), std::string::npos) << t;
  EXPECT_NE(t.find("32-bit and wrap"), std::string::npos) << t;
  TopView w = sample_view();
  w.interval = 2.0;
  w.rows[0].delta = TopCounts{20, 1280, 4000, 256000};
  const std::string tw = top_text(w);
  EXPECT_NE(tw.find("per second over 2.0 s"), std::string::npos) << tw;
  EXPECT_NE(tw.find("DROPPED/s"), std::string::npos) << tw;
}

// ---- events ----------------------------------------------------------------------------

TEST(Events, TimesAreRfc3339WithMilliseconds) {
  EXPECT_EQ(format_time(1'767'225'600'123'456'789ull, TimeDigits::Millis), "2026-01-01T00:00:00.123Z");
  EXPECT_EQ(format_time(1'767'225'600'000'000'000ull, TimeDigits::Millis), "2026-01-01T00:00:00.000Z");
  const Clocks c{0, 1'767'225'600 * kSec, 1000 * kSec};
  EXPECT_EQ(c.to_unix(1000 * kSec + 5 * kMs), 1'767'225'600 * kSec + 5 * kMs);
  EXPECT_EQ(c.to_unix(999 * kSec), 1'767'225'599 * kSec);  // before the reading, too
  // One reading of both clocks: monotonic now maps to about the wall clock now.
  const Clocks now = Clocks::read();
  const Clocks again = Clocks::read();
  const int64_t skew = static_cast<int64_t>(now.to_unix(again.now_mono_ns) - again.now_unix_ns);
  EXPECT_LT(std::llabs(skew), static_cast<long long>(5 * kMs));
}

TEST(Events, DecodeNamesTheClassAndMasksTheAddress) {
  Policy p;
  ClassSpec syn;
  syn.name = "ssh-syn";
  syn.match.protos = {Proto::Tcp};
  syn.match.syn = true;
  syn.packets = {2, 10};
  syn.prefix4 = 24;
  ClassSpec def;
  def.name = "default";
  def.packets = {100, 10};
  def.ban.ban_ns = 2 * kSec;
  p.classes = {syn, def};
  const lv_policy slot = compile(p, Clocks::read()).slot;
  const Clocks clocks{0, 1'767'225'600 * kSec, 1000 * kSec};

  lv_event e{};
  e.time_ns = 1000 * kSec + 250 * kMs;
  std::memcpy(e.addr, v4_key("198.18.7.0").addr, sizeof e.addr);
  e.type = LV_EV_LIMITED;
  e.family = LV_AF_INET;
  e.class_id = class_order(slot)[0];
  e.reason = LV_R_RATE;
  e.suppressed = 3;
  EventRecord r = decode_event(e, slot, clocks, "eth0");
  EXPECT_EQ(r.address, "198.18.7.0/24");
  EXPECT_EQ(r.class_name, "ssh-syn");
  nlohmann::json j = event_json(r);
  EXPECT_EQ(j, (nlohmann::json{{"time", "2026-01-01T00:00:00.250Z"},
                               {"iface", "eth0"},
                               {"type", "limited"},
                               {"address", "198.18.7.0/24"},
                               {"class", "ssh-syn"},
                               {"reason", "rate"},
                               {"suppressed", 3}}));
  EXPECT_EQ(
      event_text(r),
      "2026-01-01T00:00:00.250Z eth0 limited 198.18.7.0/24 class ssh-syn reason rate (3 events suppressed before)");

  lv_event b{};
  b.time_ns = 1000 * kSec;
  std::memcpy(b.addr, v6_key("2001:db8:5::").addr, sizeof b.addr);
  b.type = LV_EV_BANNED;
  b.family = LV_AF_INET6;
  b.class_id = class_order(slot)[1];
  b.reason = LV_R_RATE;
  b.count = 2;
  b.value = 4 * kSec;
  nlohmann::json bj = event_json(decode_event(b, slot, clocks, "eth0"));
  EXPECT_EQ(bj["type"], "banned");
  EXPECT_EQ(bj["address"], "2001:db8:5::/64");
  EXPECT_EQ(bj["class"], "default");
  EXPECT_EQ(bj["duration_ms"], 4000);
  EXPECT_EQ(bj["offences"], 2);
  EXPECT_EQ(bj["scope"], "class");
  EXPECT_EQ(bj["suppressed"], 0);

  b.class_id = 40;  // no class has it now
  b.type = LV_EV_ADMISSION;
  nlohmann::json aj = event_json(decode_event(b, slot, clocks, "eth0"));
  EXPECT_TRUE(aj["class"].is_null());
  EXPECT_EQ(aj["address"], "2001:db8:5::");  // no class prefix known: as a host
  EXPECT_FALSE(aj.contains("duration_ms"));
}

TEST(Events, BanEndsFromSuccessiveReads) {
  const lv_key a = v4_key("198.18.0.7"), b = v4_key("198.18.0.8"), c = v4_key("198.18.0.9");
  auto ban = [](uint64_t since, uint64_t until) {
    lv_ban x{};
    x.since_ns = since;
    x.until_ns = until;
    x.duration_ns = until - since;
    x.offences = 1;
    return x;
  };
  BanEnds ends;
  // First read: learns what bans now (a, b); c's ban is over already: never reported.
  EXPECT_TRUE(ends.update({{a, ban(kNow - kSec, kNow + kSec)},
                           {b, ban(kNow, kNow + 5 * kSec)},
                           {c, ban(kNow - 9 * kSec, kNow - 7 * kSec)}},
                          kNow)
                  .empty());
  EXPECT_EQ(ends.tracked(), 2u);
  // One second later: a's ban ran out at its until; b was extended and still bans.
  auto e1 = ends.update(
      {{a, ban(kNow - kSec, kNow + kSec)}, {b, ban(kNow, kNow + 9 * kSec)}, {c, ban(kNow - 9 * kSec, kNow - 7 * kSec)}},
      kNow + 2 * kSec);
  ASSERT_EQ(e1.size(), 1u);
  EXPECT_TRUE(std::memcmp(&e1[0].key, &a, sizeof a) == 0);
  EXPECT_EQ(e1[0].at_ns, kNow + kSec);
  EXPECT_FALSE(e1[0].lifted);
  // b's record disappears before its end: lifted (levee unban), reported at the read.
  auto e2 = ends.update({}, kNow + 3 * kSec);
  ASSERT_EQ(e2.size(), 1u);
  EXPECT_TRUE(e2[0].lifted);
  EXPECT_EQ(e2[0].at_ns, kNow + 3 * kSec);
  EXPECT_EQ(ends.tracked(), 0u);
  // A ban that ended and a new one that began between two reads: the first is reported.
  ends.update({{a, ban(kNow + 10 * kSec, kNow + 11 * kSec)}}, kNow + 10 * kSec);
  auto e3 = ends.update({{a, ban(kNow + 12 * kSec, kNow + 14 * kSec)}}, kNow + 13 * kSec);
  ASSERT_EQ(e3.size(), 1u);
  EXPECT_EQ(e3[0].at_ns, kNow + 11 * kSec);
  EXPECT_EQ(ends.tracked(), 1u);
}

TEST(Events, BanEndedJson) {
  const lv_policy p = two_class_policy();
  const uint8_t dns = class_order(p)[0];
  BanEnds::Ended e{v4_key("198.18.0.7", dns), {}, 1000 * kSec, false};
  e.ban.class_id = dns;
  e.ban.duration_ns = 2 * kSec;
  e.ban.offences = 1;
  const Clocks clocks{0, 1'767'225'600 * kSec, 1000 * kSec};
  nlohmann::json j = event_json(decode_ban_end(e, p, clocks, "eth0"));
  EXPECT_EQ(j["type"], "ban_ended");
  EXPECT_EQ(j["time"], "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(j["class"], "dns");
  EXPECT_TRUE(j["reason"].is_null());
  EXPECT_EQ(j["duration_ms"], 2000);
  EXPECT_EQ(j["offences"], 1);
  EXPECT_EQ(j["lifted"], false);
}

}  // namespace

// ---- the command line --------------------------------------------------------------------

namespace cli {
namespace {

Parsed parse_args(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"levee"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse(static_cast<int>(argv.size()), argv.data());
}

TEST(CliOps, Prune) {
  auto p = parse_args({"prune", "eth0"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Prune);
  EXPECT_EQ(p.invocation->prune.iface, "eth0");
  EXPECT_TRUE(p.invocation->prune.idle.empty());
  EXPECT_FALSE(p.invocation->prune.json);
  auto q = parse_args({"prune", "eth0", "--idle", "1s", "--json"});
  ASSERT_TRUE(q.invocation) << q.err;
  EXPECT_EQ(q.invocation->prune.idle, "1s");
  EXPECT_TRUE(q.invocation->prune.json);
}

TEST(CliOps, Top) {
  auto p = parse_args({"top", "eth0"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Top);
  EXPECT_EQ(p.invocation->top.n, 10u);
  EXPECT_EQ(p.invocation->top.by, "drops");
  EXPECT_FALSE(p.invocation->top.watch);
  EXPECT_FALSE(p.invocation->top.networks);
  auto q = parse_args({"top", "eth0", "-n", "3", "--by", "bytes", "--json", "--networks", "--watch", "--interval",
                       "0.5", "--count", "4"});
  ASSERT_TRUE(q.invocation) << q.err;
  const TopArgs& t = q.invocation->top;
  EXPECT_EQ(t.n, 3u);
  EXPECT_EQ(t.by, "bytes");
  EXPECT_TRUE(t.json && t.networks && t.watch);
  EXPECT_DOUBLE_EQ(t.interval, 0.5);
  EXPECT_EQ(t.count, 4u);
}

TEST(CliOps, Events) {
  auto p = parse_args({"events", "eth0", "--json", "--count", "5", "--duration", "2.5"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Events);
  EXPECT_EQ(p.invocation->events.iface, "eth0");
  EXPECT_TRUE(p.invocation->events.json);
  EXPECT_EQ(p.invocation->events.count, 5u);
  EXPECT_DOUBLE_EQ(p.invocation->events.duration, 2.5);
  auto d = parse_args({"events", "eth0"});
  ASSERT_TRUE(d.invocation);
  EXPECT_EQ(d.invocation->events.count, 0u);
  EXPECT_EQ(d.invocation->events.duration, 0.0);
}

TEST(CliOps, UsageErrorsExitTwoPointingAtTheirHelp) {
  struct Case {
    std::vector<const char*> args;
    const char* help;
  };
  for (const Case& c : std::vector<Case>{
           {{"prune"}, "levee prune --help"},
           {{"top", "eth0", "--by", "pps"}, "levee top --help"},
           {{"top", "eth0", "-n", "many"}, "levee top --help"},
           {{"top", "eth0", "--watch", "--interval", "0"}, "levee top --help"},
           {{"events", "eth0", "--count", "x"}, "levee events --help"},
           {{"events", "eth0", "--duration", "-1"}, "levee events --help"},
       }) {
    std::vector<const char*> argv{"levee"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto p = parse(static_cast<int>(argv.size()), argv.data());
    EXPECT_FALSE(p.invocation) << c.help;
    EXPECT_EQ(p.exit_code, kExitUsage) << c.help;
    EXPECT_EQ(p.err.rfind("levee: ", 0), 0u) << p.err;
    EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << p.err;
    EXPECT_NE(p.err.find(std::string("see: ") + c.help), std::string::npos) << p.err;
  }
}

TEST(CliOps, HelpHasExamplesAndSaysCountersWrap) {
  for (const char* sub : {"prune", "top", "events"}) {
    auto p = parse_args({sub, "--help"});
    EXPECT_EQ(p.exit_code, kExitOk);
    EXPECT_NE(p.out.find(std::string("Examples: levee ") + sub + " eth0"), std::string::npos) << p.out;
  }
  EXPECT_NE(parse_args({"top", "--help"}).out.find("wrap at 2^32"), std::string::npos);
}

// Values are checked before privileges or the kernel (no root needed).
TEST(CliOps, BadValuesFailBeforeTheKernel) {
  for (const char* idle : {"10", "soon", "0s"}) {
    Status s = prune(PruneArgs{"eth0", idle});
    ASSERT_FALSE(s.ok()) << idle;
    EXPECT_TRUE(s.error().usage) << s.error().message();
    EXPECT_NE(s.error().message().find("--idle"), std::string::npos) << s.error().message();
  }
  TopArgs t{"eth0"};
  t.n = 0;
  Status s = top(t);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.error().usage);
}

}  // namespace
}  // namespace cli
}  // namespace levee
