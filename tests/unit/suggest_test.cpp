// suggest_test.cpp - levee suggest without the kernel: percentiles and rounding, the
// sampler on synthetic walks (rates, busiest intervals, 32-bit wraps, states made again,
// new sources, network keys and gone classes skipped), the suggestions and their
// coverage, too few sources, the output, and the diff of a config file.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "export/render_suggest.hpp"
#include "export/suggest.hpp"
#include "policy/config_edit.hpp"
#include "unit.hpp"

namespace levee {
namespace {

lv_key key(uint32_t host, uint8_t class_id, uint8_t epoch = 0) {
  lv_key k{};
  k.addr[2] = htonl(0xffff);
  k.addr[3] = htonl(0xc6120000u + host);  // 198.18.x.y
  k.class_id = class_id;
  k.family = LV_AF_INET;
  k.epoch = epoch;
  return k;
}

lv_state state(uint32_t passed_packets, uint32_t passed_bytes, uint32_t dropped_packets = 0,
               uint32_t dropped_bytes = 0) {
  lv_state s{};
  s.passed = passed_packets | (uint64_t{passed_bytes} << 32);
  s.dropped = dropped_packets | (uint64_t{dropped_bytes} << 32);
  return s;
}

// A walk being built: keys and states side by side.
struct Walk {
  std::vector<lv_key> keys;
  std::vector<lv_state> states;
  void put(const lv_key& k, const lv_state& s) { keys.push_back(k), states.push_back(s); }
};

const std::vector<SuggestClass> kTwo = {{"udp", 3, 0}, {"default", 0, 0}};

TEST(Suggest, PercentileIsTheNearestRank) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_EQ(percentile(v, 0.50), 50);
  EXPECT_EQ(percentile(v, 0.90), 90);
  EXPECT_EQ(percentile(v, 0.99), 99);
  EXPECT_EQ(percentile(v, 1.0), 100);
  const std::vector<double> ten = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(percentile(ten, 0.90), 9);   // 0.9 * 10 is rank 9, not 10 by a rounding error
  EXPECT_EQ(percentile(ten, 0.99), 10);  // the top one of ten
  EXPECT_EQ(percentile(ten, 0.50), 5);
  EXPECT_EQ(percentile(std::vector<double>{7}, 0.5), 7);
  EXPECT_EQ(percentile(std::vector<double>{}, 0.5), 0);
}

TEST(Suggest, RoundsUpToTwoSignificantFigures) {
  EXPECT_EQ(round_up_2sig(151), 160u);
  EXPECT_EQ(round_up_2sig(150), 150u);
  EXPECT_EQ(round_up_2sig(149.2), 150u);
  EXPECT_EQ(round_up_2sig(30), 30u);
  EXPECT_EQ(round_up_2sig(30.000001), 31u);
  EXPECT_EQ(round_up_2sig(7.2), 8u);
  EXPECT_EQ(round_up_2sig(12'345), 13'000u);
  EXPECT_EQ(round_up_2sig(1.5e6), 1'500'000u);
  EXPECT_EQ(round_up_2sig(0), 1u);
  EXPECT_EQ(round_up_2sig(-3), 1u);
  EXPECT_EQ(config_count(13'000), "\"13k\"");
  EXPECT_EQ(config_count(1'500'000), "\"1.5M\"");
  EXPECT_EQ(config_count(160), "160");
  EXPECT_EQ(config_count(1234), "1234");
}

TEST(Suggest, RatesAndBurstsPerSourceOverTheWindow) {
  SuggestSampler s(kTwo);
  // Source 1 of "udp": 100 packets of 64 bytes a second, 150 in the second interval.
  // Source 2 of "default": 10 a second, with some dropped.
  const uint32_t p1[] = {1000, 1100, 1250, 1350, 1450};
  const uint32_t p2[] = {0, 5, 10, 15, 20};
  for (int i = 0; i < 5; ++i) {
    Walk w;
    w.put(key(1, 3), state(p1[i], p1[i] * 64));
    w.put(key(2, 0), state(p2[i], p2[i] * 100, p2[i], p2[i] * 100));
    s.add(w.keys, w.states, i);
  }
  EXPECT_EQ(s.walks(), 5u);
  EXPECT_DOUBLE_EQ(s.window_s(), 4);
  const SuggestReport r = suggest(s, {1.5, 1});
  ASSERT_EQ(r.classes.size(), 2u);
  const ClassSuggestion& udp = r.classes[0];
  EXPECT_EQ(udp.name, "udp");
  EXPECT_EQ(udp.sources, 1u);
  EXPECT_DOUBLE_EQ(udp.pps.p50, 112.5);  // 450 packets in 4 s
  EXPECT_DOUBLE_EQ(udp.bps.p50, 112.5 * 64);
  EXPECT_DOUBLE_EQ(udp.burst_packets.max, 150);
  EXPECT_DOUBLE_EQ(udp.burst_bytes.max, 150 * 64);
  ASSERT_TRUE(udp.rate);
  EXPECT_EQ(udp.rate->value, 170u);            // 112.5 x 1.5 = 168.75
  EXPECT_EQ(udp.burst->value, 230u);           // 150 x 1.5 = 225
  EXPECT_EQ(udp.bytes_rate->value, 11'000u);   // 10,800
  EXPECT_EQ(udp.bytes_burst->value, 15'000u);  // 14,400
  EXPECT_DOUBLE_EQ(udp.rate->covers, 1.0);
  // Dropped packets are offered too: 10 passed and 10 dropped a second.
  EXPECT_DOUBLE_EQ(r.classes[1].pps.p50, 10);
  EXPECT_DOUBLE_EQ(r.classes[1].bps.p50, 1000);
}

TEST(Suggest, CountersDifferAcross32BitWraps) {
  SuggestSampler s({{"udp", 3, 0}});
  // Bytes wrap every walk at this size; packets wrap once, between the 2nd and 3rd walk.
  uint32_t packets = 0xffffff00u, bytes = 0xfff00000u;
  for (int i = 0; i < 4; ++i) {
    Walk w;
    w.put(key(1, 3), state(packets, bytes));
    s.add(w.keys, w.states, i);
    packets += 200;        // wraps from the second walk on
    bytes += 0x00200000u;  // 2 MiB a second: wraps at once
  }
  const SuggestReport r = suggest(s, {1.0, 1});
  EXPECT_DOUBLE_EQ(r.classes[0].pps.p50, 200);
  EXPECT_DOUBLE_EQ(r.classes[0].bps.p50, 0x00200000u);
  EXPECT_EQ(r.classes[0].arrivals, 0u);  // a wrap is not a new state
}

TEST(Suggest, NewSourcesAndStatesMadeAgainAreArrivals) {
  SuggestSampler s(kTwo);
  Walk w0;
  w0.put(key(1, 3), state(100, 6400));
  s.add(w0.keys, w0.states, 0);
  // 1 s later: two new sources in "udp", one in "default".
  Walk w1 = w0;
  w1.states[0] = state(200, 12'800);
  w1.put(key(2, 3), state(40, 2560));
  w1.put(key(3, 3), state(60, 3840));
  w1.put(key(4, 0), state(10, 1000));
  s.add(w1.keys, w1.states, 1);
  // 2 s later: source 1 evicted and made again (its count went back), nothing new.
  Walk w2 = w1;
  w2.states[0] = state(30, 1920);
  s.add(w2.keys, w2.states, 3);
  const SuggestReport r = suggest(s, {1.5, 1});
  const ClassSuggestion& udp = r.classes[0];
  EXPECT_EQ(udp.arrivals, 3u);
  EXPECT_DOUBLE_EQ(udp.arrivals_per_s, 1.0);       // 3 in 3 s
  EXPECT_DOUBLE_EQ(udp.arrivals_peak_per_s, 2.0);  // 2 in the first second
  EXPECT_EQ(r.classes[1].arrivals, 1u);
  // A new source's counts are all from the interval it appeared in: 40 in 1 s, then
  // nothing for 2 s: 40 over 3 s.
  EXPECT_EQ(udp.sources, 3u);
  // new_sources: the peak 2/s x 1.5 = 3, under the floor.
  ASSERT_TRUE(udp.new_sources);
  EXPECT_EQ(udp.new_sources->value, kMinNewSources);
  EXPECT_DOUBLE_EQ(udp.new_sources->covers, 1.0);
}

TEST(Suggest, SkipsNetworksGoneClassesAndIdleSources) {
  SuggestSampler s({{"udp", 3, 2}});
  for (int i = 0; i < 3; ++i) {
    Walk w;
    lv_key net = key(0, 3, 2);
    net.family |= LV_KEY_NETWORK;
    w.put(net, state(1000 * i, 0));
    w.put(key(1, 3, 1), state(1000 * i, 0));  // the id's former class (another epoch)
    w.put(key(2, 5, 2), state(1000 * i, 0));  // a class not sampled
    w.put(key(3, 3, 2), state(7, 700));       // idle: sent nothing in the window
    w.put(key(4, 3, 2), state(10 * i, 0));
    s.add(w.keys, w.states, i);
  }
  const SuggestReport r = suggest(s, {1.5, 1});
  ASSERT_EQ(r.classes.size(), 1u);
  EXPECT_EQ(r.classes[0].sources, 1u);
  EXPECT_DOUBLE_EQ(r.classes[0].pps.max, 10);
}

TEST(Suggest, SpreadAndCoverageOverManySources) {
  SuggestSampler s({{"web", 1, 0}});
  // 100 sources at 1..100 packets a second; source 100 at 1000.
  for (int i = 0; i < 3; ++i) {
    Walk w;
    for (uint32_t src = 1; src <= 100; ++src) w.put(key(src, 1), state((src == 100 ? 1000 : src) * i, 0));
    s.add(w.keys, w.states, i);
  }
  const SuggestReport r = suggest(s, {1.5, 10});
  const ClassSuggestion& c = r.classes[0];
  EXPECT_EQ(c.sources, 100u);
  EXPECT_DOUBLE_EQ(c.pps.p50, 50);
  EXPECT_DOUBLE_EQ(c.pps.p90, 90);
  EXPECT_DOUBLE_EQ(c.pps.p99, 99);
  EXPECT_DOUBLE_EQ(c.pps.max, 1000);
  ASSERT_TRUE(c.rate);
  EXPECT_EQ(c.rate->value, 150u);          // 99 x 1.5 = 148.5
  EXPECT_DOUBLE_EQ(c.rate->covers, 0.99);  // all but the one at 1000
  const std::string text = suggest_text(r);
  EXPECT_NE(text.find("rate = 150"), std::string::npos) << text;
  EXPECT_NE(text.find("99 % of sources"), std::string::npos) << text;
  const auto j = suggest_json(r);
  EXPECT_EQ(j.at("classes")[0].at("suggest").at("rate").at("value"), 150);
  EXPECT_EQ(j.at("classes")[0].at("packets_per_s").at("p99"), 99.0);
}

TEST(Suggest, TooFewSourcesSuggestNothing) {
  SuggestSampler s(kTwo);
  for (int i = 0; i < 3; ++i) {
    Walk w;
    for (uint32_t src = 1; src <= 9; ++src) w.put(key(src, 3), state(20 * i, 0));
    s.add(w.keys, w.states, i);
  }
  const SuggestReport r = suggest(s, {});
  EXPECT_EQ(r.classes[0].sources, 9u);
  EXPECT_DOUBLE_EQ(r.classes[0].pps.p50, 20);  // still measured
  EXPECT_FALSE(r.classes[0].rate);
  EXPECT_FALSE(r.classes[0].new_sources);
  const std::string text = suggest_text(r);
  EXPECT_NE(text.find("too few sources to suggest limits: 9 sent, 10 needed"), std::string::npos) << text;
  EXPECT_NE(text.find("no traffic in the window"), std::string::npos) << text;  // "default"
  EXPECT_TRUE(suggest_json(r).at("classes")[0].at("suggest").is_null());
}

// The report of a class under the autopilot shows what a budget would be, and keeps
// it out of the suggestions to set (JSON null); a class with a budget gets a new one.
TEST(Suggest, AClassUnderTheAutopilotKeepsItUnlessABudgetIsAsked) {
  const std::vector<SuggestClass> classes = {{"udp", 3, 0, Admission::Budget}, {"default", 0, 0, Admission::Auto}};
  SuggestSampler s(classes);
  for (int i = 0; i < 3; ++i) {
    Walk w;
    for (uint32_t src = 1; src <= 10; ++src) {
      w.put(key(src, 3), state(20 * i, 0));
      w.put(key(src, 0), state(20 * i, 0));
    }
    s.add(w.keys, w.states, i);
  }
  const SuggestReport r = suggest(s, {});
  ASSERT_TRUE(r.classes[0].new_sources && r.classes[1].new_sources);
  EXPECT_FALSE(r.classes[0].new_sources_kept);
  EXPECT_TRUE(r.classes[1].new_sources_kept);
  const auto j = suggest_json(r);
  EXPECT_EQ(j.at("classes")[0].at("admission"), "budget");
  EXPECT_EQ(j.at("classes")[0].at("suggest").at("new_sources").at("value"), kMinNewSources);
  EXPECT_EQ(j.at("classes")[1].at("admission"), "auto");
  EXPECT_TRUE(j.at("classes")[1].at("suggest").at("new_sources").is_null()) << j.dump();
  const std::string text = suggest_text(r);
  EXPECT_NE(text.find("new_sources = 10"), std::string::npos) << text;
  EXPECT_NE(text.find("new_sources = \"auto\"     kept: the autopilot (--new-sources-budget: 10)"), std::string::npos)
      << text;

  const SuggestReport asked = suggest(s, {kDefaultHeadroom, kDefaultMinSources, true});
  EXPECT_FALSE(asked.classes[1].new_sources_kept);
  EXPECT_EQ(suggest_json(asked).at("classes")[1].at("suggest").at("new_sources").at("value"), kMinNewSources);
}

// ---- the config file's diff --------------------------------------------------------

const std::string kConfig = R"(# a comment
[[class]]
name = "dns"
match.proto = "udp"
match.port = 53
rate = 500             # per source
burst = 100

[[class]]
name = "web"
match.proto = "tcp"
bytes_rate = "1M"
bytes_burst = "100k"

[default]
rate = "10k"
burst = "1k"
)";

TEST(SuggestConfig, ReplacesValuesInPlaceAndAddsMissingKeys) {
  std::vector<ClassLimits> l = {{"dns", 750, 150, 64'000, 2000, 10}, {"default", 20'000, std::nullopt, {}, {}, {}}};
  auto d = config_limits_diff(kConfig, "levee.toml", l);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->diff, R"(--- levee.toml
+++ levee.toml
@@ -3,8 +3,10 @@
 name = "dns"
 match.proto = "udp"
 match.port = 53
-rate = 500             # per source
-burst = 100
+rate = 750             # per source
+burst = 150
+bytes_rate = "64k"
+bytes_burst = "2k"
 
 [[class]]
 name = "web"
@@ -13,5 +15,5 @@
 bytes_burst = "100k"
 
 [default]
-rate = "10k"
+rate = "20k"
 burst = "1k"
)");
  // dns has no new_sources: the autopilot's, which a number would turn off.
  ASSERT_EQ(d->notes.size(), 1u);
  EXPECT_EQ(d->notes[0].rfind("class dns: new_sources stays \"auto\"", 0), 0u) << d->notes[0];
}

// A number for new_sources is a fixed budget that replaces the autopilot: suggest keeps
// a class's autopilot, and "off", unless asked, and says so either way; a budget the
// file has is changed where it stands.
TEST(SuggestConfig, KeepsTheAutopilotOfAClassWithoutABudgetUnlessAsked) {
  const std::string text = R"([defaults]
new_sources = 500

[[class]]
name = "auto"
match.proto = "udp"
new_sources = "auto"
rate = 10
burst = 10

[[class]]
name = "off"
match.proto = "tcp"
new_sources = "off"
rate = 10
burst = 10

[default]
rate = 10
burst = 10
)";
  std::vector<ClassLimits> l = {
      {"auto", {}, {}, {}, {}, 45}, {"off", {}, {}, {}, {}, 45}, {"default", {}, {}, {}, {}, 45}};
  auto kept = config_limits_diff(text, "t.toml", l);
  ASSERT_TRUE(kept.ok()) << kept.error().message();
  // Only [default], whose budget comes from [defaults], gets the new one.
  EXPECT_EQ(kept->diff, R"(--- t.toml
+++ t.toml
@@ -18,3 +18,4 @@
 [default]
 rate = 10
 burst = 10
+new_sources = 45
)");
  ASSERT_EQ(kept->notes.size(), 2u);
  EXPECT_EQ(kept->notes[0],
            "class auto: new_sources stays \"auto\" (the autopilot admits new sources); a number there is a fixed "
            "budget that turns the class's autopilot off: --new-sources-budget writes the one suggested (45)");
  EXPECT_EQ(kept->notes[1],
            "class off: new_sources stays \"off\" (every new source gets state); a number there is a fixed budget "
            "that refuses new sources over it: --new-sources-budget writes the one suggested (45)");

  for (ClassLimits& c : l) c.budget_new_sources = true;
  auto asked = config_limits_diff(text, "t.toml", l);
  ASSERT_TRUE(asked.ok()) << asked.error().message();
  EXPECT_NE(asked->diff.find("-new_sources = \"auto\"\n+new_sources = 45\n"), std::string::npos) << asked->diff;
  EXPECT_NE(asked->diff.find("-new_sources = \"off\"\n+new_sources = 45\n"), std::string::npos) << asked->diff;
  ASSERT_EQ(asked->notes.size(), 2u);
  EXPECT_EQ(asked->notes[0],
            "class auto: new_sources = 45 turns the class's autopilot off: a fixed budget replaces \"auto\" (leave "
            "the line out to keep it)");
  EXPECT_EQ(asked->notes[1], "class off: new_sources = 45 replaces \"off\": new sources over it are refused");
}

TEST(SuggestConfig, NothingToChangeAndClassesNotInTheFile) {
  auto d = config_limits_diff(kConfig, "levee.toml", {{"dns", 500, 100, {}, {}, {}}, {"ssh", 5, 5, {}, {}, {}}});
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->diff, "");
  ASSERT_EQ(d->notes.size(), 1u);
  EXPECT_EQ(d->notes[0], "class ssh is not in levee.toml: left out");
}

TEST(SuggestConfig, KeysAddedAfterTheHeaderAndToAFileWithoutANewlineAtItsEnd) {
  const std::string text =
      "[[class]]\nname = \"a\"\nmatch.proto = \"udp\"\nrate = 1\nburst = 1\n[default]\nrate = 5\nburst = 5";
  auto d = config_limits_diff(text, "t.toml", {{"default", {}, {}, 300, 30, {}}});
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->diff, R"(--- t.toml
+++ t.toml
@@ -5,4 +5,6 @@
 burst = 1
 [default]
 rate = 5
-burst = 5
\ No newline at end of file
+burst = 5
+bytes_rate = 300
+bytes_burst = 30
\ No newline at end of file
)");
}

TEST(SuggestConfig, AnInvalidFileIsRefusedAsLoadConfigWould) {
  auto d = config_limits_diff("[default]\nrate = 5\n", "bad.toml", {});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message().find("bad.toml"), std::string::npos) << d.error().message();
}

TEST(SuggestConfig, UnifiedDiffHunksMergeWhenCloseAndSplitWhenFar) {
  std::vector<LineOp> ops;
  for (int i = 1; i <= 20; ++i) ops.push_back({' ', std::to_string(i)});
  ops[1] = {'-', "2"};
  ops.insert(ops.begin() + 2, {'+', "two"});
  ops[9] = {'-', "9"};    // 6 kept lines after the first change: one hunk
  ops[19] = {'-', "19"};  // far: a hunk of its own
  const std::string d = unified_diff(ops, "f", false);
  EXPECT_NE(d.find("@@ -1,12 +1,11 @@\n 1\n-2\n+two\n"), std::string::npos) << d;
  EXPECT_NE(d.find("@@ -16,5 +15,4 @@\n 16\n 17\n 18\n-19\n 20\n"), std::string::npos) << d;
}

}  // namespace
}  // namespace levee
