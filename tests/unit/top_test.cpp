// top_test.cpp - levee top without the kernel: the scores it ranks by, counters read
// from a state and differenced across 32-bit wraps, the partial sort, the lookup of a
// walk's keys, the limiter's view of a row, and the output, text and JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <span>
#include <vector>

#include "export/top.hpp"
#include "limiter.h"
#include "unit.hpp"

namespace levee {
namespace {

constexpr uint64_t kNow = 5'000 * kSec;  // CLOCK_MONOTONIC, well after boot

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
  EXPECT_EQ(r["kind"], "source");

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

}  // namespace
}  // namespace levee
