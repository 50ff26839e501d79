// prune_test.cpp - `levee prune` against real traffic: it removes idle sources and keeps
// active and banned ones, gives a map that refuses when full its room back, and refills
// the known-source filter without losing a known client.
#include <unistd.h>

#include "e2e.hpp"

#ifndef LEVEE_FLOOD_BIN
#error "LEVEE_FLOOD_BIN must name the levee-flood binary"
#endif

namespace lvt {
namespace {

using nlohmann::json;
using Prune = E2e;

bool has_state(Sandbox& sb, const std::string& address) {
  const json c = show_class(sb.show(address), "default");
  return !c.is_null() && c.at("has_state").get<bool>();
}

// Idle sources go, one that keeps sending and one that is banned stay, and the one kept
// keeps its counters (its state was not recreated).
TEST_F(Prune, RemovesIdleSourcesAndKeepsActiveAndBannedOnes) {
  TempDir dir;
  // tau = 4 * 10 ms: a source quiet for --idle 1s plus 40 ms is idle.
  attach({"--config", dir.write("levee.toml", "[default]\nrate = 100\nburst = 5\nban = \"30s\"\n")});
  const std::string idle1 = Addrs::src4()[0], idle2 = Addrs::src4()[1], active = Addrs::src4()[2],
                    banned = Addrs::src4()[3];
  send_udp(sb(), idle1, 20, 0.2);
  send_udp(sb(), idle2, 20, 0.2);
  send_udp(sb(), banned, 2000, 0.2);  // over the limit: banned for 30 s
  ASSERT_TRUE(has_state(sb(), idle1) && has_state(sb(), idle2) && has_state(sb(), banned));
  ASSERT_TRUE(show_class(sb().show(banned), "default").at("banned").get<bool>());

  // The active source sends at half its rate from now until after the prune.
  Sender keep({.ns = sb().tx_ns(), .src = active, .dst = Addrs::rx4, .pps = 50, .seconds = 3.0}, start_soon(0));
  usleep(1'800'000);  // the others have been quiet for 1.5 s or more
  const uint64_t before = ju(show_class(sb().show(active), "default"), "passed_packets");
  const json p = sb().levee_json({"prune", sb().rx_if(), "--idle", "1s", "--json"});
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
  const json none = sb().levee_json({"prune", sb().rx_if(), "--json"});
  EXPECT_EQ(ju(none, "sources_removed"), 0u) << none.dump();
  // The text output says what it did.
  RunResult t = sb().levee({"prune", sb().rx_if(), "--idle", "1h"});
  ASSERT_EQ(t.code, 0) << t.describe();
  EXPECT_NE(t.out.find("sources      0 removed, "), std::string::npos) << t.out;
}

// With when_full = "refuse" a full map admits no new source until prune removes idle
// ones: then a new source is admitted again and the count is back near zero. Without the
// autopilot's admission: the fill engages it, and the new source would be on probation.
TEST_F(Prune, GivesARefusingMapItsRoomBack) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml",
                                "[interface]\nmax_sources = 1024\nwhen_full = \"refuse\"\n"
                                "[default]\nrate = 1000\nburst = 2\nnew_sources = \"off\"\n")});
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
    send_udp(sb(), fresh, 100, 0.2);
    rx0.finish();
    EXPECT_EQ(rx0.count(fresh), 0u) << "admitted into a full map";
    EXPECT_FALSE(has_state(sb(), fresh));
  }

  usleep(1'200'000);
  const json p = sb().levee_json({"prune", sb().rx_if(), "--idle", "1s", "--json"});
  report("refuse_prune_seconds", p.at("seconds").get<double>());
  EXPECT_GE(ju(p, "sources_removed"), full_at - 10) << p.dump();
  EXPECT_EQ(ju(p, "sources_kept"), 0u) << p.dump();
  ASSERT_FALSE(p.at("source_count").is_null()) << p.dump();
  EXPECT_EQ(ju(p, "source_count"), 0u) << "the count should be what the map holds" << p.dump();
  EXPECT_EQ(ju(sb().status(), "sources"), 0u);

  UdpReceiver rx1(sb().rx_ns(), AF_INET);
  const SendLog l = send_udp(sb(), fresh, 100, 0.2);
  rx1.finish();
  EXPECT_GT(rx1.count(fresh), 0u) << "still refused after prune: " << rx1.summary();
  EXPECT_LE(rx1.count(fresh), l.sent);
  EXPECT_TRUE(has_state(sb(), fresh));
}

// Under a spoofed flood past a class's new-source budget, packets of unknown sources
// are refused on the known-source filter. prune refills the filter's other half from
// the sources it keeps and flips to it: a known client must still be found there (a
// refill that missed it would refuse it as a new source over the budget).
TEST_F(Prune, RefillsTheKnownSourceFilter) {
  TempDir dir;
  attach({"--config",
          dir.write("levee.toml", "[default]\nrate = 1000\nburst = 100\nnew_sources = 10\nnew_sources_burst = 1\n")});
  const std::string client = Addrs::src4()[0];
  {
    UdpReceiver rx(sb().rx_ns(), AF_INET);
    send_udp(sb(), client, 20, 0.3);
    rx.finish();
    ASSERT_GT(rx.count(client), 0u) << "the client was not admitted before the flood";
  }
  Child flood({LEVEE_FLOOD_BIN, "--netns", sb().tx_ns(), "--dev", sb().tx_if(), "--dst", Addrs::rx4, "--random",
               "198.19.128.0/17", "--method", "packet", "--rate", "50000", "--duration", "6"},
              RunOptions{.die_with_parent = true, .timeout = std::chrono::seconds(30)});
  usleep(500'000);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    const json p = sb().levee_json({"prune", sb().rx_if(), "--json"});
    EXPECT_GE(ju(p, "filter_sources"), 1u) << p.dump();
    UdpReceiver rx(sb().rx_ns(), AF_INET);
    const SendLog l = send_udp(sb(), client, 50, 1.0);
    rx.finish();
    EXPECT_GE(rx.count(client), l.sent * 95 / 100) << "the client was refused after the filter's flip";
  }
  RunResult f = flood.wait();
  ASSERT_EQ(f.code, 0) << f.describe();
  EXPECT_GT(ju(sb().stats(), "dropped", "admission"), 10'000u) << "the flood was not refused by the budget";
}

}  // namespace
}  // namespace lvt
