// prune_test.cpp - the operations on a running interface, against real traffic: prune
// removes idle sources and keeps active and banned ones, and gives a refusing map its
// room back; top ranks the flooding source first; events reports a source's first drop,
// its ban and the ban's end.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <sstream>

#include "e2e.hpp"

#ifndef LEVEE_FLOOD_BIN
#error "LEVEE_FLOOD_BIN must name the levee-flood binary"
#endif

namespace lvt {
namespace {

using nlohmann::json;

// A paced UDP flow from one source to the receiver, waited for.
SendLog send(Sandbox& sb, const std::string& src, double pps, double seconds) {
  Sender s({.ns = sb.tx_ns(), .src = src, .dst = Addrs::rx4, .pps = pps, .seconds = seconds}, start_soon(50));
  return s.join();
}

json levee_json(Sandbox& sb, const std::vector<std::string>& args) {
  RunResult r = sb.levee(args);
  if (r.code != 0) throw std::runtime_error(r.describe());
  return json::parse(r.out);
}

uint64_t realtime_now_ms() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000 + static_cast<uint64_t>(t.tv_nsec) / 1'000'000;
}

// "2026-01-01T00:00:00.250Z" as Unix ms; -1 if it is not that.
int64_t parse_rfc3339_ms(const std::string& s) {
  struct tm tm {};
  int ms = 0;
  if (sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
             &tm.tm_sec, &ms) != 7)
    return -1;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

bool has_state(Sandbox& sb, const std::string& address) {
  const json c = show_class(sb.show(address), "default");
  return !c.is_null() && c.at("has_state").get<bool>();
}

// Idle sources go, one that keeps sending and one that is banned stay, and the one kept
// keeps its counters (its state was not recreated).
TEST_F(E2e, PruneRemovesIdleSourcesAndKeepsActiveAndBannedOnes) {
  TempDir dir;
  // tau = 4 * 10 ms: a source quiet for --idle 1s plus 40 ms is idle.
  attach({"--config", dir.write("levee.toml", "[default]\nrate = 100\nburst = 5\nban = \"30s\"\n")});
  const std::string idle1 = Addrs::src4()[0], idle2 = Addrs::src4()[1], active = Addrs::src4()[2],
                    banned = Addrs::src4()[3];
  send(sb(), idle1, 20, 0.2);
  send(sb(), idle2, 20, 0.2);
  send(sb(), banned, 2000, 0.2);  // over the limit: banned for 30 s
  ASSERT_TRUE(has_state(sb(), idle1) && has_state(sb(), idle2) && has_state(sb(), banned));
  ASSERT_TRUE(show_class(sb().show(banned), "default").at("banned").get<bool>());

  // The active source sends at half its rate from now until after the prune.
  Sender keep({.ns = sb().tx_ns(), .src = active, .dst = Addrs::rx4, .pps = 50, .seconds = 3.0}, start_soon(0));
  usleep(1'800'000);  // the others have been quiet for 1.5 s or more
  const uint64_t before = ju(show_class(sb().show(active), "default"), "passed_packets");
  const json p = levee_json(sb(), {"prune", sb().rx_if(), "--idle", "1s", "--json"});
  report("prune_seconds", p.at("seconds").get<double>());
  // Our four, and whatever else the sandbox sent (IPv6 neighbour discovery, ...).
  EXPECT_GE(ju(p, "sources_removed"), 2u) << p.dump();
  EXPECT_GE(ju(p, "sources_kept"), 2u) << p.dump();
  EXPECT_EQ(ju(p, "bans_kept"), 1u) << p.dump();
  EXPECT_EQ(ju(p, "bans_active"), 1u) << p.dump();
  EXPECT_EQ(ju(p, "filter_sources"), ju(p, "sources_kept")) << p.dump();
  EXPECT_TRUE(p.at("source_count").is_null()) << "the map evicts: nothing is counted";

  EXPECT_FALSE(has_state(sb(), idle1));
  EXPECT_FALSE(has_state(sb(), idle2));
  EXPECT_TRUE(has_state(sb(), banned));
  EXPECT_TRUE(show_class(sb().show(banned), "default").at("banned").get<bool>()) << "the ban went with the prune";
  ASSERT_TRUE(has_state(sb(), active));
  keep.join();
  const uint64_t after = ju(show_class(sb().show(active), "default"), "passed_packets");
  EXPECT_GT(after, before) << "the active source's state was recreated";

  // A long --idle removes nothing that was just active.
  const json none = levee_json(sb(), {"prune", sb().rx_if(), "--json"});
  EXPECT_EQ(ju(none, "sources_removed"), 0u) << none.dump();
  // The text output says what it did.
  RunResult t = sb().levee({"prune", sb().rx_if(), "--idle", "1h"});
  ASSERT_EQ(t.code, 0) << t.describe();
  EXPECT_NE(t.out.find("sources      0 removed, "), std::string::npos) << t.out;
}

// With when_full = "refuse" a full map admits no new source until prune removes idle
// ones: then a new source is admitted again and the count is back near zero.
TEST_F(E2e, PruneGivesARefusingMapItsRoomBack) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml",
                                "[interface]\nmax_sources = 1024\nwhen_full = \"refuse\"\n"
                                "[default]\nrate = 1000\nburst = 2\n")});
  const json st = sb().status();
  const uint64_t full_at = ju(st, "full_at");
  ASSERT_GT(full_at, 100u);
  ASSERT_LT(full_at, 1024u);
  // Round-robin sources past full_at, a few packets each.
  const uint64_t n = full_at + 200;
  RunResult f = run({LEVEE_FLOOD_BIN, "--netns", sb().tx_ns(), "--dev", sb().tx_if(), "--dst", Addrs::rx4, "--sources",
                     std::to_string(n), "--src-base", "198.19.0.0", "--count", std::to_string(4 * n), "--method",
                     "packet", "--rate", "20000", "--json"},
                    RunOptions{.timeout = std::chrono::seconds(30)});
  ASSERT_EQ(f.code, 0) << f.describe();
  const json s0 = sb().stats();
  EXPECT_GT(ju(s0, "dropped", "map_full"), 0u) << s0.dump();
  EXPECT_GE(ju(sb().status(), "sources"), full_at - 10);

  // A new source now: refused.
  const std::string fresh = Addrs::src4()[0];
  {
    UdpReceiver rx0(sb().rx_ns(), AF_INET);
    send(sb(), fresh, 100, 0.2);
    rx0.finish();
    EXPECT_EQ(rx0.count(fresh), 0u) << "admitted into a full map";
    EXPECT_FALSE(has_state(sb(), fresh));
  }

  usleep(1'200'000);
  const json p = levee_json(sb(), {"prune", sb().rx_if(), "--idle", "1s", "--json"});
  report("refuse_prune_seconds", p.at("seconds").get<double>());
  EXPECT_GE(ju(p, "sources_removed"), full_at - 10) << p.dump();
  EXPECT_EQ(ju(p, "sources_kept"), 0u) << p.dump();
  ASSERT_FALSE(p.at("source_count").is_null()) << p.dump();
  EXPECT_EQ(ju(p, "source_count"), 0u) << "the count should be what the map holds" << p.dump();
  EXPECT_EQ(ju(sb().status(), "sources"), 0u);

  UdpReceiver rx1(sb().rx_ns(), AF_INET);
  const SendLog l = send(sb(), fresh, 100, 0.2);
  rx1.finish();
  EXPECT_GT(rx1.count(fresh), 0u) << "still refused after prune: " << rx1.summary();
  EXPECT_LE(rx1.count(fresh), l.sent);
  EXPECT_TRUE(has_state(sb(), fresh));
}

// Under a spoofed flood past a class's new-source budget, packets of unknown sources
// are refused on the known-source filter. prune refills the filter's other half from
// the sources it keeps and flips to it: a known client must still be found there (a
// refill that missed it would refuse it as a new source over the budget).
TEST_F(E2e, PruneRefillsTheKnownSourceFilter) {
  TempDir dir;
  attach({"--config",
          dir.write("levee.toml", "[default]\nrate = 1000\nburst = 100\nnew_sources = 10\nnew_sources_burst = 1\n")});
  const std::string client = Addrs::src4()[0];
  {
    UdpReceiver rx(sb().rx_ns(), AF_INET);
    send(sb(), client, 20, 0.3);
    rx.finish();
    ASSERT_GT(rx.count(client), 0u) << "the client was not admitted before the flood";
  }
  Child flood({LEVEE_FLOOD_BIN, "--netns", sb().tx_ns(), "--dev", sb().tx_if(), "--dst", Addrs::rx4, "--random",
               "198.19.128.0/17", "--method", "packet", "--rate", "50000", "--duration", "6"},
              RunOptions{.die_with_parent = true, .timeout = std::chrono::seconds(30)});
  usleep(500'000);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    const json p = levee_json(sb(), {"prune", sb().rx_if(), "--json"});
    EXPECT_GE(ju(p, "filter_sources"), 1u) << p.dump();
    UdpReceiver rx(sb().rx_ns(), AF_INET);
    const SendLog l = send(sb(), client, 50, 1.0);
    rx.finish();
    EXPECT_GE(rx.count(client), l.sent * 95 / 100) << "the client was refused after the filter's flip";
  }
  RunResult f = flood.wait();
  ASSERT_EQ(f.code, 0) << f.describe();
  EXPECT_GT(ju(sb().stats(), "dropped", "admission"), 10'000u) << "the flood was not refused by the budget";
}

// top ranks by drops, packets or bytes; the flooding source first, with its counters
// and the limiter's view; --watch gives rates.
TEST_F(E2e, TopListsTheFloodingSourceFirst) {
  attach({"--rate", "100", "--burst", "10"});
  const std::string flooder = Addrs::src4()[0], client = Addrs::src4()[1], quiet = Addrs::src4()[2];
  Sender a({.ns = sb().tx_ns(), .src = flooder, .dst = Addrs::rx4, .pps = 2000, .seconds = 1.0}, start_soon());
  Sender b({.ns = sb().tx_ns(), .src = client, .dst = Addrs::rx4, .pps = 80, .seconds = 1.0}, start_soon());
  Sender c({.ns = sb().tx_ns(), .src = quiet, .dst = Addrs::rx4, .pps = 10, .seconds = 1.0}, start_soon());
  const SendLog la = a.join();
  b.join();
  c.join();

  const json t = levee_json(sb(), {"top", sb().rx_if(), "--json", "-n", "2"});
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
  const json byp = levee_json(sb(), {"top", sb().rx_if(), "--json", "--by", "packets", "-n", "3"});
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

// events: a source over its limit is reported once (limited), its ban (banned, with its
// length and offences) and the ban's end (ban_ended), as JSON lines; SIGTERM ends it.
TEST_F(E2e, EventsReportLimitedBannedAndBanEnded) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", "[default]\nrate = 100\nburst = 10\nban = \"1s\"\n")});
  Child ev = sb().levee_start({"events", sb().rx_if(), "--json", "--duration", "15"});
  usleep(500'000);
  const std::string src = Addrs::src4()[0];
  const uint64_t t0 = realtime_now_ms();
  send(sb(), src, 2000, 0.5);
  send(sb(), Addrs::src4()[1], 20, 0.2);  // within its limit: no event
  usleep(3'000'000);                      // the ban ends 1 s after the flood's last packet; polled every second
  RunResult r = ev.stop();
  EXPECT_EQ(r.code, 0) << "SIGTERM should end it cleanly: " << r.describe();
  const auto lines = json_lines(r.out);
  const json* limited = nullptr;
  const json* banned = nullptr;
  const json* ended = nullptr;
  for (const json& l : lines) {
    EXPECT_EQ(l.at("iface"), sb().rx_if());
    EXPECT_NE(l.at("address"), Addrs::src4()[1]) << "an event for a source within its limit";
    if (l.at("address") != src) continue;
    if (l.at("type") == "limited" && !limited) limited = &l;
    if (l.at("type") == "banned" && !banned) banned = &l;
    if (l.at("type") == "ban_ended" && !ended) ended = &l;
  }
  ASSERT_NE(limited, nullptr) << r.out;
  EXPECT_EQ(limited->at("class"), "default");
  EXPECT_EQ(limited->at("reason"), "rate");
  // The time is the wall clock's, within a second of when we sent.
  const std::string time = limited->at("time");
  ASSERT_EQ(time.size(), 24u) << time;  // 2026-01-01T00:00:00.000Z
  EXPECT_EQ(time.back(), 'Z');
  const int64_t at = parse_rfc3339_ms(time);
  EXPECT_GE(at, static_cast<int64_t>(t0) - 1000) << time;
  EXPECT_LE(at, static_cast<int64_t>(t0) + 2000) << time;
  ASSERT_NE(banned, nullptr) << r.out;
  EXPECT_EQ(banned->at("duration_ms"), 1000);
  EXPECT_EQ(banned->at("offences"), 1);
  EXPECT_EQ(banned->at("reason"), "rate");
  ASSERT_NE(ended, nullptr) << r.out;
  EXPECT_EQ(ended->at("duration_ms"), 1000);
  EXPECT_EQ(ended->at("lifted"), false);
  EXPECT_GT(parse_rfc3339_ms(ended->at("time")), parse_rfc3339_ms(banned->at("time")) + 900) << r.out;

  // --count ends it after that many events; text lines name the type and address.
  Child one = sb().levee_start({"events", sb().rx_if(), "--count", "1", "--duration", "10"});
  usleep(300'000);
  send(sb(), Addrs::src4()[2], 2000, 0.3);
  RunResult o = one.wait();
  ASSERT_EQ(o.code, 0) << o.describe();
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << o.out;
  // Its first offence: the ban is sent before the drop it causes.
  EXPECT_NE(o.out.find(" banned " + Addrs::src4()[2] + " class default reason rate: banned for 1s, 1 offence"),
            std::string::npos)
      << o.out;
}

}  // namespace
}  // namespace lvt
