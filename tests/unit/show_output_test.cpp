// show_output_test.cpp - what `levee show` prints about a source, text and JSON: its
// state in each class read through bpf/shared/limiter.h (tokens, the wait), the list entry
// deciding for it, its network's state, its bans, and the autopilot's view of it (on
// probation, known-good, its watched network).
#include <gtest/gtest.h>

#include <string>

#include "cli/app.hpp"
#include "export/render_show.hpp"
#include "policy/compile.hpp"
#include "policy/policy.hpp"
#include "unit.hpp"

namespace levee::cli {
namespace {

// 2026-11-22T03:00:00Z, the wall clock's now; and a CLOCK_MONOTONIC now well after boot.
constexpr uint64_t kNow = 1'795'316'400ull * kSec;
constexpr uint64_t kNowMono = 5'000 * kSec;

// A class state as levee show reads it: wait and tokens come from bpf/shared/limiter.h.
ShowResult show_one(uint64_t ready, uint64_t ready_bytes, bool with_bytes) {
  ShowResult r;
  r.address = "198.51.100.77";
  ShowClass c;
  c.name = "dns";
  c.class_id = 0;
  c.cls = compile_class(ClassSpec{"dns", {}, {100, 10}, {}, 24, 64, {}}, 1);
  c.pkt = compile_packet_limit({100, 10});
  if (with_bytes) c.bytes = compile_byte_limit({10'000, 5'000});
  c.now_ns = 1'000 * kSec;
  c.state.ready_ns = c.now_ns + ready;
  c.state.ready_bytes_ns = c.now_ns + ready_bytes;
  c.state.passed = (uint64_t{64'000} << 32) | 1'000;
  c.state.dropped = (uint64_t{6'400} << 32) | 100;
  r.classes.push_back(c);
  return r;
}

TEST(ShowOutput, WaitIsTheLaterOfBothLimits) {
  // Packet limit eligible in 5 ms, byte limit in 7 ms: the next packet waits 7 ms.
  ShowResult r = show_one(5'000'000, 7'000'000, true);
  ShowLimiter l = show_limiter(r.classes[0]);
  EXPECT_EQ(l.wait_ns, 7'000'000u);
  EXPECT_EQ(l.tokens, 0u);
  EXPECT_EQ(l.byte_tokens, 0u);

  // Both long eligible: full buckets, no wait.
  const uint64_t long_ago = static_cast<uint64_t>(-static_cast<int64_t>(10 * kSec));
  r = show_one(long_ago, long_ago, true);
  l = show_limiter(r.classes[0]);
  EXPECT_EQ(l.wait_ns, 0u);
  EXPECT_EQ(l.tokens, 10u);
  EXPECT_EQ(l.byte_tokens, 5'000u);

  // No byte limit: no byte tokens, the packet limit alone decides.
  r = show_one(3'000'000, 9'000'000, false);
  l = show_limiter(r.classes[0]);
  EXPECT_EQ(l.wait_ns, 3'000'000u);
  EXPECT_FALSE(l.byte_tokens);
}

TEST(ShowOutput, JsonFields) {
  ShowResult r = show_one(5'000'000, 0, false);
  r.list = ListRow{Cidr::parse("198.51.100.0/24").value(), LV_LIST_OVERRIDE, "partner", 0, LV_ORIGIN_CONFIG};
  r.classes[0].override_name = "partner";
  auto j = show_json("eth0", r, kNow);
  EXPECT_EQ(j["interface"], "eth0");
  EXPECT_EQ(j["address"], "198.51.100.77");
  EXPECT_EQ(j["counter_bits"], 32);
  EXPECT_EQ(j["list"]["kind"], "override");
  EXPECT_EQ(j["list"]["override"], "partner");
  ASSERT_EQ(j["classes"].size(), 1u);
  const auto& c = j["classes"][0];
  for (const char* k : {"name", "id", "source", "override", "rate", "burst", "bytes_rate", "bytes_burst", "tokens",
                        "byte_tokens", "wait_ns", "passed_packets", "passed_bytes", "dropped_packets", "dropped_bytes"})
    EXPECT_TRUE(c.contains(k)) << k;
  EXPECT_EQ(c["name"], "dns");
  EXPECT_EQ(c["source"], "198.51.100.0/24");  // the class counts per /24
  EXPECT_EQ(c["override"], "partner");
  EXPECT_EQ(c["wait_ns"], 5'000'000);
  EXPECT_EQ(c["tokens"], 0);
  EXPECT_TRUE(c["byte_tokens"].is_null());
  EXPECT_EQ(c["passed_packets"], 1'000);
  EXPECT_EQ(c["passed_bytes"], 64'000);
  EXPECT_EQ(c["dropped_packets"], 100);
  EXPECT_EQ(c["dropped_bytes"], 6'400);
}

TEST(ShowOutput, Text) {
  ShowResult none;
  none.address = "203.0.113.9";
  EXPECT_EQ(show_text("eth0", none, kNow), "203.0.113.9 on eth0: no state in any class, on no list\n");

  ShowResult denied;
  denied.address = "203.0.113.9";
  denied.list = ListRow{Cidr::parse("203.0.113.0/24").value(), LV_LIST_DENY, "", kNow + 7200 * kSec, LV_ORIGIN_IMPORT};
  const std::string d = show_text("eth0", denied, kNow);
  EXPECT_NE(
      d.find("list     deny 203.0.113.0/24, origin import, expires 2026-11-22T05:00:00Z (in 2h): every packet dropped"),
      std::string::npos)
      << d;
  EXPECT_NE(d.find("no state in any class"), std::string::npos) << d;

  const std::string t = show_text("eth0", show_one(1'500'000, 0, false), kNow);
  EXPECT_NE(t.find("class dns  source 198.51.100.0/24"), std::string::npos) << t;
  EXPECT_NE(t.find("next     in 1.5ms"), std::string::npos) << t;
  EXPECT_NE(t.find("passed   1,000 packets, 64,000 bytes"), std::string::npos) << t;
  EXPECT_NE(t.find("dropped  100 packets, 6,400 bytes"), std::string::npos) << t;
  EXPECT_NE(t.find("32-bit"), std::string::npos) << t;
}

ShowClass banned_class(bool monitor) {
  ClassSpec spec;
  spec.name = "dns";
  spec.packets = {100, 10};
  spec.prefix4 = 32;
  spec.network.packets = {1000, 100};
  spec.monitor = monitor;
  ShowClass c;
  c.name = "dns";
  c.class_id = 2;
  c.cls = compile_class(spec, 4'000'000, 2);
  c.pkt = c.cls.pkt;
  c.now_ns = kNowMono;
  c.state.ready_ns = kNowMono + 1'200'000'000;  // pushed to the ban's end
  c.state.passed = (uint64_t{640} << 32) | 10;
  c.state.dropped = (uint64_t{6'400} << 32) | 100;
  lv_state net{};
  net.ready_ns = kNowMono - kSec;  // long eligible: full
  net.passed = 40;
  c.network = net;
  lv_ban b{};
  b.until_ns = kNowMono + 1'200'000'000;
  b.duration_ns = 4 * kSec;
  b.since_ns = kNowMono - 2'800'000'000;
  b.offences = 3;
  b.class_id = 2;
  c.ban = b;
  return c;
}

ShowResult show_of(ShowClass c) {
  ShowResult r;
  r.address = "198.18.0.7";
  r.now_ns = kNowMono;
  r.classes.push_back(c);
  return r;
}

TEST(ShowOutput, BanJsonFields) {
  auto j = show_json("eth0", show_of(banned_class(false)), 0);
  const auto& c = j["classes"][0];
  EXPECT_EQ(c["banned"], true);
  EXPECT_EQ(c["ban_remaining_ms"], 1200);
  EXPECT_EQ(c["offences"], 3);
  EXPECT_EQ(c["ban_duration_ms"], 4000);
  EXPECT_EQ(c["ban_since_ms_ago"], 2800);
  EXPECT_EQ(c["ban_scope"], "class");
  EXPECT_EQ(c["monitor"], false);
  EXPECT_EQ(c["has_state"], true);
  EXPECT_EQ(c["wait_ns"], 1'200'000'000u) << "the ban holds its state back";
  ASSERT_TRUE(c["network"].is_object());
  EXPECT_EQ(c["network"]["network"], "198.18.0.0/24");
  EXPECT_EQ(c["network"]["tokens"], 100);
  EXPECT_EQ(c["network"]["passed_packets"], 40);
  EXPECT_TRUE(j["ban_all"].is_null());

  // Ended: not banned, its history kept.
  ShowClass ended = banned_class(false);
  ended.ban->until_ns = kNowMono - 60 * kSec;
  auto e = show_json("eth0", show_of(ended), 0)["classes"][0];
  EXPECT_EQ(e["banned"], false);
  EXPECT_EQ(e["ban_remaining_ms"], 0);
  EXPECT_EQ(e["offences"], 3);

  // No record and no network limit: nulls and zeros, the fields still there.
  ShowClass plain = banned_class(false);
  plain.ban.reset();
  plain.network.reset();
  auto n = show_json("eth0", show_of(plain), 0)["classes"][0];
  EXPECT_EQ(n["banned"], false);
  EXPECT_EQ(n["offences"], 0);
  EXPECT_EQ(n["ban_duration_ms"], 0);
  EXPECT_TRUE(n["ban_scope"].is_null());
  EXPECT_TRUE(n["network"].is_null());
}

TEST(ShowOutput, AnEveryClassBanAppliesInEachClassAndEndsLast) {
  ShowClass c = banned_class(false);
  c.ban->until_ns = kNowMono - kSec;  // its own ban is over
  lv_ban all{};
  all.until_ns = kNowMono + 30 * kSec;
  all.duration_ns = 30 * kSec;
  all.offences = 1;
  all.class_id = 5;
  c.ban_all = all;
  ShowResult r = show_of(c);
  r.ban_all = all;
  EXPECT_EQ(show_ban(c), &*c.ban_all);
  auto j = show_json("eth0", r, 0);
  EXPECT_EQ(j["classes"][0]["banned"], true);
  EXPECT_EQ(j["classes"][0]["ban_scope"], "all");
  EXPECT_EQ(j["classes"][0]["ban_remaining_ms"], 30'000);
  EXPECT_EQ(j["ban_all"]["banned"], true);
  EXPECT_EQ(j["ban_all"]["offences"], 1);
  const std::string t = show_text("eth0", r, 0);
  EXPECT_NE(t.find("  ban      in every class: banned for 30.0 s more (30s ban"), std::string::npos) << t;
  EXPECT_NE(t.find("    ban      banned for 30.0 s more (30s ban, in every class"), std::string::npos) << t;

  // Known only by its ban in every class: still shown.
  ShowResult only;
  only.address = "198.18.0.7";
  only.now_ns = kNowMono;
  only.ban_all = all;
  const std::string o = show_text("eth0", only, 0);
  EXPECT_EQ(o.find("no state in any class, on no list"), std::string::npos) << o;
  EXPECT_NE(o.find("in every class: banned"), std::string::npos) << o;
}

TEST(ShowOutput, BanText) {
  const std::string t = show_text("eth0", show_of(banned_class(false)), 0);
  EXPECT_NE(t.find("    ban      banned for 1.2 s more (4s ban, began 2.8 s ago), 3 offences\n"), std::string::npos)
      << t;
  EXPECT_NE(t.find("    network  198.18.0.0/24: 1k pps, burst 100; tokens 100 packets; next now\n"), std::string::npos)
      << t;
  EXPECT_NE(t.find("    dropped  100 packets"), std::string::npos) << t;
  EXPECT_EQ(t.find("would drop"), std::string::npos) << t;
  // A monitoring class drops nothing: its drop counter is what it would have dropped.
  const std::string m = show_text("eth0", show_of(banned_class(true)), 0);
  EXPECT_NE(m.find("(monitor mode)"), std::string::npos) << m;
  EXPECT_NE(m.find("    would drop  100 packets"), std::string::npos) << m;
  // Known only through its network or a ban: said so, no made-up tokens.
  ShowClass gone = banned_class(false);
  gone.has_state = false;
  gone.state = {};
  const std::string g = show_text("eth0", show_of(gone), 0);
  EXPECT_NE(g.find("none of its own"), std::string::npos) << g;
  EXPECT_EQ(g.find("tokens   "), std::string::npos) << g;
}

// banned_class() without its ban, its state on probation instead of as a source (the
// class has the autopilot: compile_class's defaults).
ShowClass probation_class() {
  ShowClass c = banned_class(false);
  c.ban.reset();
  c.network.reset();
  c.has_state = false;
  lv_state p{};
  p.ready_ns = kNowMono - kSec;  // full
  p.passed = (uint64_t{192} << 32) | 3;
  c.probation = p;
  c.state = {};
  c.known_good = false;
  return c;
}

TEST(ShowOutput, OnProbation) {
  ShowClass c = probation_class();
  ASSERT_TRUE(c.cls.flags & LV_CLASS_AUTO_ADMIT);
  const std::string t = show_text("eth0", show_of(c), 0);
  EXPECT_NE(t.find("    state    on probation: admitted while the class was not calm, promoted once it is\n"
                   "    tokens   10 packets\n"
                   "    next     now\n"
                   "    passed   3 packets, 192 bytes\n"
                   "    dropped  0 packets, 0 bytes\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("none of its own"), std::string::npos) << t;
  EXPECT_NE(t.find("    admission not known-good\n"), std::string::npos) << t;
  auto j = show_json("eth0", show_of(c), 0)["classes"][0];
  EXPECT_EQ(j["has_state"], false) << "its state as a source";
  EXPECT_EQ(j["on_probation"], true);
  ASSERT_TRUE(j["probation"].is_object());
  EXPECT_EQ(j["probation"]["tokens"], 10);
  EXPECT_EQ(j["probation"]["wait_ns"], 0);
  EXPECT_EQ(j["probation"]["passed_packets"], 3);
  EXPECT_EQ(j["probation"]["passed_bytes"], 192);
  EXPECT_EQ(j["known_good"], false);

  // Both a state as a source and one on probation (promoted while being shown): both.
  c.has_state = true;
  c.state.passed = 5;
  const std::string both = show_text("eth0", show_of(c), 0);
  EXPECT_NE(
      both.find("    passed   5 packets, 0 bytes\n    dropped  0 packets, 0 bytes\n    state    also on probation:"),
      std::string::npos)
      << both;

  // Neither: not on probation, fields still there.
  ShowClass plain = banned_class(false);
  auto p = show_json("eth0", show_of(plain), 0)["classes"][0];
  EXPECT_EQ(p["on_probation"], false);
  EXPECT_TRUE(p["probation"].is_null());
  EXPECT_TRUE(p["known_good"].is_null()) << "not read";
  EXPECT_TRUE(p["watch"].is_null());
  const std::string pt = show_text("eth0", show_of(plain), 0);
  EXPECT_EQ(pt.find("probation"), std::string::npos) << pt;
  EXPECT_EQ(pt.find("admission"), std::string::npos) << pt;
}

TEST(ShowOutput, KnownGood) {
  ShowClass c = probation_class();
  c.probation.reset();
  c.known_good = true;  // evicted, but remembered
  const std::string t = show_text("eth0", show_of(c), 0);
  EXPECT_NE(t.find("    state    none of its own (not seen since its state was evicted)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("    admission known-good: let in even while the class's autopilot is engaged\n"), std::string::npos)
      << t;
  EXPECT_EQ(show_json("eth0", show_of(c), 0)["classes"][0]["known_good"], true);
}

TEST(ShowOutput, ItsWatchedNetwork) {
  ShowClass c = banned_class(false);
  c.ban.reset();
  ASSERT_TRUE(c.cls.flags & LV_CLASS_ESCALATE);
  lv_watch w{};
  w.escalated_ns = kNowMono - 4'100'000'000;
  w.last_over_ns = kNowMono - 1'000'000;
  w.dropped = (uint64_t{78'976} << 32) | 1'234;
  c.watch = w;
  std::string t = show_text("eth0", show_of(c), 0);
  EXPECT_NE(t.find("    watch    198.18.0.0/16: escalated 4.1 s ago, limited to 6.4k pps, burst 640 as a whole; 1,234 "
                   "packets, 78,976 bytes dropped\n"),
            std::string::npos)
      << t;
  auto j = show_json("eth0", show_of(c), 0)["classes"][0]["watch"];
  EXPECT_EQ(j["network"], "198.18.0.0/16");
  EXPECT_EQ(j["escalated"], true);
  EXPECT_EQ(j["since_ms"], 4'100);
  EXPECT_EQ(j["rate"], 6'400);
  EXPECT_EQ(j["burst"], 640);
  EXPECT_EQ(j["dropped_packets"], 1'234);

  // Monitor mode: what it would do.
  ShowClass m = c;
  m.cls.flags |= LV_CLASS_MONITOR;
  t = show_text("eth0", show_of(m), 0);
  EXPECT_NE(t.find("escalated 4.1 s ago, would be limited to 6.4k pps, burst 640 as a whole; 1,234 packets, 78,976 "
                   "bytes would be dropped\n"),
            std::string::npos)
      << t;

  // Calm for release (30 s): no longer enforced, not yet released.
  c.watch->last_over_ns = kNowMono - 31 * kSec;
  t = show_text("eth0", show_of(c), 0);
  EXPECT_NE(t.find("    watch    198.18.0.0/16: escalated 4.1 s ago, calm again (release pending)\n"),
            std::string::npos)
      << t;
  j = show_json("eth0", show_of(c), 0)["classes"][0]["watch"];
  EXPECT_EQ(j["escalated"], false);
  EXPECT_EQ(j["since_ms"], 4'100);

  // Only watched.
  c.watch = lv_watch{};
  t = show_text("eth0", show_of(c), 0);
  EXPECT_NE(
      t.find("    watch    198.18.0.0/16: watched, not escalated (its limit once escalated: 6.4k pps, burst 640)\n"),
      std::string::npos)
      << t;
  j = show_json("eth0", show_of(c), 0)["classes"][0]["watch"];
  EXPECT_EQ(j["escalated"], false);
  EXPECT_TRUE(j["since_ms"].is_null());

  // Known only through its escalated network: no guess about an eviction.
  ShowClass only = c;
  only.has_state = false;
  only.state = {};
  only.network.reset();
  only.watch = w;
  t = show_text("eth0", show_of(only), 0);
  EXPECT_NE(t.find("    state    none of its own\n"), std::string::npos) << t;
}

}  // namespace
}  // namespace levee::cli
