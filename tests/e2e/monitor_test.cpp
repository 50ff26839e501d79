// monitor_test.cpp - monitor mode end to end: it drops nothing for limits, bans or
// admission, and what it would drop of a replayed flood is what enforce mode drops of it,
// reason by reason; a denied source in monitor mode is counted or dropped as
// deny_in_monitor says.
#include <unistd.h>

#include "e2e.hpp"
#include "flood_harness.hpp"

namespace lvt {
namespace {

using Monitor = E2e;

constexpr const char* kMonitorBase = R"(# limits, bans and admission, replayed in both modes
[default]
rate = 100
burst = 20
new_sources = 200
new_sources_burst = 50
ban = "1s"
)";

struct Replay {
  FloodResult heavy, crowd;  // one source over its limit; 1,000 new sources
  uint64_t received = 0;
  nlohmann::json s0, s1;
};

// The same flood every time: one source at 2,000 pps (20x its limit: rate, then ban),
// and 300 ms later 1,000 sources round robin at 10,000 pps (10 pps each, under their
// limit, but new: admission), paced, 3 s; to the UDP receiver.
Replay replay(Sandbox& sb) {
  Replay r;
  UdpReceiver rx(sb.rx_ns(), AF_INET);
  usleep(50'000);
  r.s0 = sb.stats();
  Flood heavy({.ns = sb.tx_ns(),
               .dev = sb.tx_if(),
               .dst = Addrs::rx4,
               .src = "198.18.10.1",
               .dport = kPort,
               .rate = 2000,
               .seconds = 3.3});
  usleep(300'000);
  Flood crowd({.ns = sb.tx_ns(),
               .dev = sb.tx_if(),
               .dst = Addrs::rx4,
               .sources = 1000,
               .src_base = "198.18.6.1",
               .dport = kPort,
               .rate = 10000,
               .seconds = 3.0});
  r.heavy = heavy.wait();
  r.crowd = crowd.wait();
  rx.finish();
  r.received = rx.total();
  r.s1 = sb.stats();
  return r;
}

// In monitor mode nothing is dropped for limits, bans or admission; `would_drop` of a
// replayed flood matches, reason by reason, what enforce mode dropped of the same flood
// (+-2%). Monitor mode comes from the file (mode = "monitor"), from
// `levee set IFACE --mode monitor` on an enforcing interface, and from `attach --monitor`.
TEST_F(Monitor, DropsNothingAndWouldDropMatchesEnforce) {
  TempDir dir;
  const std::string enforce_cfg = dir.write("enforce.toml", kMonitorBase);
  const std::string monitor_cfg = dir.write("monitor.toml", std::string(kMonitorBase) + "mode = \"monitor\"\n");
  const char* kReasons[] = {"rate",     "ban",       "admission", "network",  "class_limit",
                            "map_full", "contended", "bytes",     "newcomer", "escalated"};

  attach({"--config", enforce_cfg});
  const Replay e = replay(sb());
  ASSERT_TRUE(e.heavy.ok && e.crowd.ok) << e.heavy.describe() << "\n" << e.crowd.describe();
  detach();

  struct Run {
    std::string name;
    Replay m;
  };
  std::vector<Run> runs;
  attach({"--config", monitor_cfg});
  runs.push_back({"monitor_file", replay(sb())});
  detach();
  attach({"--config", enforce_cfg});
  RunResult r = sb().levee({"set", sb().rx_if(), "--mode", "monitor"});
  ASSERT_EQ(r.code, 0) << "levee set --mode monitor: " << r.describe();
  runs.push_back({"monitor_set", replay(sb())});
  detach();
  attach({"--config", enforce_cfg, "--monitor"});
  runs.push_back({"monitor_attach", replay(sb())});

  const double e_sent = d(e.heavy.packets + e.crowd.packets);
  report("enforce_sent", e_sent);
  report("enforce_received", d(e.received));
  double e_total = 0;
  for (const char* reason : kReasons) {
    const int64_t v = stat_reason_delta(e.s0, e.s1, "dropped", reason);
    report(std::string("enforce_dropped_") + reason, d(v));
    if (v > 0) e_total += d(v);
  }
  // The flood exercised what it should in enforce mode.
  EXPECT_GT(stat_reason_delta(e.s0, e.s1, "dropped", "admission"), 0)
      << "enforce: no admission drops: " << stat_reasons_text(e.s1, "dropped");
  EXPECT_GT(stat_reason_delta(e.s0, e.s1, "dropped", "ban"), 0)
      << "enforce: no ban drops: " << stat_reasons_text(e.s1, "dropped");
  EXPECT_NEAR(d(e.received), e_sent - e_total, 0.01 * e_sent + 10) << "enforce: received vs sent - dropped";

  for (const auto& [name, m] : runs) {
    ASSERT_TRUE(m.heavy.ok && m.crowd.ok) << name << ": " << m.heavy.describe() << "\n" << m.crowd.describe();
    const double sent = d(m.heavy.packets + m.crowd.packets);
    report(name + "_sent", sent);
    report(name + "_received", d(m.received));
    // Nothing dropped: the receiver got every datagram; levee dropped nothing for these reasons.
    EXPECT_EQ(d(m.received), sent) << name << ": sent " << num(sent) << ", the receiver got " << m.received << "; "
                                   << stat_reasons_text(m.s1, "dropped");
    double would_total = 0;
    for (const char* reason : kReasons) {
      const int64_t dropped = stat_reason_delta(m.s0, m.s1, "dropped", reason);
      EXPECT_LE(dropped, 0) << name << ": " << dropped << " packets dropped for " << reason << " in monitor mode";
      const int64_t would = stat_reason_delta(m.s0, m.s1, "would_drop", reason);
      const int64_t enforced = stat_reason_delta(e.s0, e.s1, "dropped", reason);
      report(name + "_would_drop_" + reason, d(would));
      if (would > 0) would_total += d(would);
      if (enforced > 0 || would > 0) {
        // Scaled by what each run sent (the paced generator sends the same within a few
        // packets), then +-2% of what enforce dropped for that reason.
        const double scaled = d(enforced) * sent / e_sent;
        EXPECT_NEAR(d(would), scaled, 0.02 * scaled + 3)
            << name << ": would_drop." << reason << " = " << would << ", enforce mode dropped " << enforced
            << " of the same flood (scaled to what was sent: " << num(scaled) << "); "
            << stat_reasons_text(m.s1, "would_drop");
      }
    }
    report(name + "_would_drop_total", would_total);
    EXPECT_NEAR(would_total, e_total * sent / e_sent, 0.02 * e_total + 3)
        << name << ": would_drop in all " << num(would_total) << ", enforce dropped " << num(e_total);
    const int64_t monitored = stat_reason_delta(m.s0, m.s1, "passed", "monitored");
    report(name + "_passed_monitored", d(monitored));
    EXPECT_NEAR(d(monitored), would_total, 0.01 * would_total + 3)
        << name << ": passed.monitored " << monitored << " vs would_drop " << num(would_total);
  }
}

// [lists] deny_in_monitor: in monitor mode a denied source passes and is counted as
// would_drop.deny ("count", the default), or is dropped as deny ("drop").
TEST_F(Monitor, DenyInMonitorCountsOrDrops) {
  TempDir dir;
  const std::string src = Addrs::src4()[0];
  for (const std::string how : {"count", "drop"}) {
    SCOPED_TRACE("deny_in_monitor = " + how);
    attach({"--config", dir.write("levee.toml",
                                  "[default]\nrate = 100\nburst = 20\nmode = \"monitor\"\n[lists]\n"
                                  "deny = [\"" +
                                      src + "\"]\ndeny_in_monitor = \"" + how + "\"\n")});
    UdpReceiver rx(sb().rx_ns(), AF_INET);
    usleep(50'000);
    const auto s0 = sb().stats();
    Sender s({.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .pps = 500, .seconds = 1.5}, start_soon());
    const SendLog& l = s.join();
    rx.finish();
    const auto s1 = sb().stats();
    const int64_t deny = stat_reason_delta(s0, s1, "dropped", "deny");
    const int64_t would = stat_reason_delta(s0, s1, "would_drop", "deny");
    report("deny_in_monitor_" + how + "_sent", d(l.sent));
    report("deny_in_monitor_" + how + "_received", d(rx.count(src)));
    report("deny_in_monitor_" + how + "_dropped_deny", d(deny));
    report("deny_in_monitor_" + how + "_would_drop_deny", d(would));
    if (how == "count") {
      EXPECT_EQ(rx.count(src), l.sent) << "a denied source in monitor mode with deny_in_monitor = \"count\"";
      EXPECT_EQ(would, static_cast<int64_t>(l.sent)) << stat_reasons_text(s1, "would_drop");
      EXPECT_LE(deny, 0);
    } else {
      EXPECT_EQ(rx.count(src), 0u) << "a denied source in monitor mode with deny_in_monitor = \"drop\"";
      EXPECT_EQ(deny, static_cast<int64_t>(l.sent)) << stat_reasons_text(s1, "dropped");
    }
    detach();
  }
}

}  // namespace
}  // namespace lvt
