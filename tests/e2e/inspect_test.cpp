// inspect_test.cpp - what levee says about a source, against real traffic: `levee show`'s
// wait is the limiter's (a packet sent before it is dropped, one sent after it passes),
// and `levee top` ranks the flooding source first.
#include <unistd.h>

#include <map>
#include <tuple>

#include "e2e.hpp"

namespace lvt {
namespace {

using nlohmann::json;
using Show = E2e;
using Top = E2e;

// Waits until the receiver counted at least n datagrams from src, at most max_ms.
bool wait_count(const UdpReceiver& rx, const std::string& src, uint64_t n, unsigned max_ms) {
  const uint64_t end = now_ns() + uint64_t{max_ms} * 1'000'000ull;
  while (rx.count(src) < n) {
    if (now_ns() > end) return false;
    usleep(2'000);
  }
  return true;
}

constexpr const char* kTightConfig = R"(# a class tight enough to time single packets
[[class]]
name = "tight"
match.proto = "udp"
match.port = 5001
rate = 2
burst = 1

[[class]]
name = "tight3"
match.proto = "udp"
match.port = 5002
rate = 4
burst = 3

[default]
rate = "10k"
burst = "1k"
)";

// levee show's wait matches the limiter: after a source spent its burst, a packet sent
// at half the reported wait is dropped, one sent 5 ms after it passes. Rounds of
// rate 2/burst 1 (the exact path: no cached-clock fast reject at burst 1) and of
// rate 4/burst 3 after a few drops (the fast-reject path is in play).
TEST_F(Show, WaitMatchesTheLimiter) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kTightConfig)});
  UdpReceiver rx1(sb().rx_ns(), AF_INET, kPort), rx3(sb().rx_ns(), AF_INET, kPort2);
  struct Case {
    const char* cls;
    uint16_t port;
    std::string src;
    double rate, burst;
    UdpReceiver& rx;
  };
  auto send_at = [&](const Case& c, uint64_t t) {
    Sender s({.ns = sb().tx_ns(), .src = c.src, .dst = Addrs::rx4, .port = c.port, .pps = 1, .seconds = 1}, t);
    const SendLog& l = s.join();
    if (l.sent != 1) throw std::runtime_error("send failed, errno " + std::to_string(l.last_errno));
    return l.t_first;
  };
  const uint64_t kMs = 1'000'000ull;
  constexpr int kRounds = 4;
  auto ms = [](uint64_t a, uint64_t b) { return (static_cast<double>(a) - static_cast<double>(b)) / 1e6; };
  std::map<std::string, uint64_t> sent;
  for (const Case& c :
       {Case{"tight", kPort, Addrs::src4()[0], 2, 1, rx1}, Case{"tight3", kPort2, Addrs::src4()[1], 4, 3, rx3}}) {
    SCOPED_TRACE(c.cls);
    const uint64_t T = static_cast<uint64_t>(1e9 / c.rate);
    // Spend the burst (every packet passes), then two more that are dropped.
    uint64_t expect = 0, last_pass = 0;
    for (int i = 0; i < static_cast<int>(c.burst); ++i) last_pass = send_at(c, now_ns()), ++expect;
    ASSERT_TRUE(wait_count(c.rx, c.src, expect, 500)) << c.rx.summary();
    send_at(c, now_ns());
    send_at(c, now_ns());
    sent[c.cls] = expect + 2;
    usleep(20'000);
    ASSERT_EQ(c.rx.count(c.src), expect) << "over the burst, yet passed";
    int judged = 0;
    for (int attempt = 0; judged < kRounds && attempt < kRounds + 3; ++attempt) {
      SCOPED_TRACE("round " + std::to_string(attempt));
      const std::string tag = std::string(c.cls) + "_round" + std::to_string(attempt);
      const uint64_t s0 = now_ns();
      auto j = sb().show(c.src);
      const uint64_t s1 = now_ns();
      auto st = show_class(j, c.cls);
      ASSERT_FALSE(st.is_null()) << j.dump();
      const uint64_t wait = st.at("wait_ns").get<uint64_t>();
      report(tag + "_wait_ms", d(wait) / 1e6);
      EXPECT_EQ(st.at("tokens"), 0) << j.dump();
      ASSERT_GT(wait, 50 * kMs) << "no wait right after spending the burst: " << j.dump();
      ASSERT_LE(wait, T) << "a wait beyond one packet interval: " << j.dump();
      if (c.burst == 1) {
        // The next packet is due T after the last pass (which the filter saw between
        // its send and its receipt); show read its clock between s0 and s1.
        const uint64_t rx_last = c.rx.times(c.src).back();
        EXPECT_GE(d(wait) / 1e6 + 1, ms(last_pass + T, s1)) << "wait shorter than the limiter's";
        EXPECT_LE(d(wait) / 1e6, ms(rx_last + T, s0) + 1) << "wait longer than the limiter's";
      }
      // Clearly before the wait: dropped. (A test thread stalled past most of the wait
      // cannot judge this; such a round is redone.)
      const uint64_t early = send_at(c, s0 + wait / 2);
      ++sent[c.cls];
      usleep(30'000);
      const bool stalled = early + 20 * kMs > s0 + wait;
      if (stalled) {
        report(tag + "_stalled_ms", ms(early, s0 + wait / 2));
        // Start the next round from an empty bucket again: send until one is dropped.
        for (int k = 0; k < static_cast<int>(c.burst) + 3; ++k) {
          const uint64_t t = send_at(c, now_ns());
          ++sent[c.cls];
          usleep(30'000);
          if (c.rx.count(c.src) == expect) break;
          expect = c.rx.count(c.src);
          last_pass = t;
        }
        continue;
      }
      EXPECT_EQ(c.rx.count(c.src), expect)
          << "a packet sent " << ms(s0 + wait, early) << " ms before the reported wait passed";
      // Just after it: passes.
      const uint64_t late = send_at(c, s1 + wait + 5 * kMs);
      ++sent[c.cls];
      report(tag + "_early_before_wait_ms", ms(s0 + wait, early));
      report(tag + "_late_after_wait_ms", ms(late, s1 + wait));
      ++expect;
      EXPECT_TRUE(wait_count(c.rx, c.src, expect, 300))
          << "a packet sent " << ms(late, s1 + wait) << " ms after the reported wait was dropped; " << c.rx.summary();
      expect = c.rx.count(c.src);
      last_pass = late;
      ++judged;
    }
    EXPECT_EQ(judged, kRounds) << "too many rounds lost to a stalled test thread";
  }
  // levee's class counters: what the receivers got passed, the rest was dropped.
  const auto s = sb().stats();
  for (const auto& [cls, rx, src] :
       {std::tuple{"tight", &rx1, Addrs::src4()[0]}, std::tuple{"tight3", &rx3, Addrs::src4()[1]}}) {
    EXPECT_EQ(s.at("classes").at(cls).at("passed_packets"), rx->count(src)) << cls;
    EXPECT_EQ(s.at("classes").at(cls).at("dropped_packets"), sent[cls] - rx->count(src)) << cls;
  }
}

// top ranks by drops, packets or bytes; the flooding source first, with its counters
// and the limiter's view; --watch gives rates.
TEST_F(Top, ListsTheFloodingSourceFirst) {
  attach({"--rate", "100", "--burst", "10"});
  const std::string flooder = Addrs::src4()[0], client = Addrs::src4()[1], quiet = Addrs::src4()[2];
  Sender a({.ns = sb().tx_ns(), .src = flooder, .dst = Addrs::rx4, .pps = 2000, .seconds = 1.0}, start_soon());
  Sender b({.ns = sb().tx_ns(), .src = client, .dst = Addrs::rx4, .pps = 80, .seconds = 1.0}, start_soon());
  Sender c({.ns = sb().tx_ns(), .src = quiet, .dst = Addrs::rx4, .pps = 10, .seconds = 1.0}, start_soon());
  const SendLog la = a.join();
  b.join();
  c.join();

  const json t = sb().levee_json({"top", sb().rx_if(), "--json", "-n", "2"});
  ASSERT_EQ(t.at("rows").size(), 2u) << t.dump();
  EXPECT_EQ(t.at("by"), "drops");
  EXPECT_GE(ju(t, "sources"), 3u);
  const json& first = t.at("rows")[0];
  EXPECT_EQ(first.at("address"), flooder) << t.dump();
  EXPECT_EQ(first.at("class"), "default");
  EXPECT_GT(ju(first, "dropped_packets"), la.sent / 2) << t.dump();
  EXPECT_LE(ju(first, "passed_packets"), 10 + 100 * 1.1 + 5) << t.dump();
  EXPECT_EQ(first.at("dropped_bytes").get<uint64_t>() % ju(first, "dropped_packets"), 0u) << "equal-sized frames";
  EXPECT_EQ(t.at("rows")[1].at("dropped_packets"), 0) << "the others never went over" << t.dump();

  // By packets the client (80 pps, all passed) comes before the quiet one.
  const json byp = sb().levee_json({"top", sb().rx_if(), "--json", "--by", "packets", "-n", "3"});
  ASSERT_EQ(byp.at("rows").size(), 3u);
  EXPECT_EQ(byp.at("rows")[0].at("address"), flooder);
  EXPECT_EQ(byp.at("rows")[1].at("address"), client);
  EXPECT_EQ(byp.at("rows")[2].at("address"), quiet);

  // --watch: the second refresh ranks by what happened between the two.
  Sender again({.ns = sb().tx_ns(), .src = client, .dst = Addrs::rx4, .pps = 400, .seconds = 1.5}, start_soon(0));
  RunResult w = sb().levee({"top", sb().rx_if(), "--json", "--watch", "--interval", "0.5", "--count", "2", "-n", "1"});
  again.join();
  ASSERT_EQ(w.code, 0) << w.describe();
  const auto frames = json_lines(w.out);
  ASSERT_EQ(frames.size(), 2u) << w.out;
  EXPECT_TRUE(frames[0].at("interval_s").is_null());
  ASSERT_FALSE(frames[1].at("interval_s").is_null());
  const json& now_first = frames[1].at("rows")[0];
  EXPECT_EQ(now_first.at("address"), client) << "the flooder is quiet now: " << w.out;
  EXPECT_GT(now_first.at("rates").at("dropped_pps").get<double>(), 100) << w.out;

  RunResult text = sb().levee({"top", sb().rx_if()});
  ASSERT_EQ(text.code, 0) << text.describe();
  EXPECT_NE(text.out.find(flooder), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("32-bit and wrap"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace lvt
