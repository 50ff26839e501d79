// daemon_test.cpp - `levee run` against real traffic: Debian's Prometheus
// server scrapes it and reads back the drop rate a flood caused; a daemon killed with
// -9 leaves the filter dropping and a new one adopts its bans and counters; the event
// stream stays within its rate under a random-source flood and says what it suppressed.
//
// The daemon, Prometheus and every HTTP request run inside the sandbox's receiver
// namespace, on its loopback: nothing listens or sends outside it.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "e2e.hpp"
#include "flood_harness.hpp"
#include "levee_run.hpp"

namespace lvt {
namespace {

using nlohmann::json;

constexpr int kPromPort = 19090;

// Debian's Prometheus server in a namespace, scraping levee run every second; its
// storage in a TempDir.
class Prometheus {
 public:
  Prometheus(const std::string& ns, const TempDir& dir) : ns_(ns) {
    const std::string cfg = dir.write("prometheus.yml",
                                      "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                      "scrape_configs:\n  - job_name: levee\n    static_configs:\n"
                                      "      - targets: ['127.0.0.1:" +
                                          std::to_string(kMetricsPort) + "']\n");
    RunOptions o;
    o.netns = ns;
    o.die_with_parent = true;
    o.timeout = std::chrono::milliseconds(300'000);
    child_.emplace(
        std::vector<std::string>{"prometheus", "--config.file=" + cfg, "--storage.tsdb.path=" + dir.path() + "/tsdb",
                                 "--web.listen-address=127.0.0.1:" + std::to_string(kPromPort), "--log.level=warn"},
        o);
  }
  bool ready() {
    return eventually([&] { return http_get(ns_, kPromPort, "/-/ready").status == 200; }, 20'000);
  }
  // An instant query's single value; nullopt if the result is empty.
  std::optional<double> query(const std::string& expr) {
    Http h = http_get(ns_, kPromPort, "/api/v1/query", {{"query", expr}});
    if (h.status != 200)
      throw std::runtime_error("prometheus query " + expr + ": " + std::to_string(h.status) + " " + h.body);
    const json j = json::parse(h.body);
    const auto& res = j.at("data").at("result");
    if (res.empty()) return std::nullopt;
    return std::stod(res.at(0).at("value").at(1).get<std::string>());
  }
  std::string stop() { return child_ ? child_->stop().describe() : ""; }

 private:
  std::string ns_;
  std::optional<Child> child_;
};

using Daemon = E2e;

TEST_F(Daemon, PrometheusReadsBackTheDropRateOfAFlood) {
  // Only this test needs the server: the others run, and are counted, without it.
  if (access("/usr/bin/prometheus", X_OK) != 0 || access("/usr/bin/promtool", X_OK) != 0)
    GTEST_SKIP() << "needs Debian's prometheus package (scripts/test.sh installs it)";
  TempDir dir;
  const std::string cfg = dir.write("levee.toml", "[default]\nrate = 1000\nburst = 100\n");
  LeveeRun d(sb(), {"--config", cfg, "--prune-every", "1s"});
  d.wait_ready();
  if (HasFatalFailure()) return;

  // The exposition passes Prometheus's own linter.
  const Http m = d.scrape();
  const std::string file = dir.write("metrics.txt", m.body);
  RunResult lint = run({"sh", "-c", "promtool check metrics < " + file});
  EXPECT_EQ(lint.code, 0) << lint.describe();
  EXPECT_EQ(lint.out + lint.err, "") << "promtool found problems";
  EXPECT_EQ(metric(m.body, "levee_info", {{"xdp_mode", "native"}}), 1) << m.body;

  Prometheus prom(sb().rx_ns(), dir);
  ASSERT_TRUE(prom.ready()) << prom.stop();
  const std::string dropped = "sum(levee_packets_total{job=\"levee\",verdict=\"dropped\"})";
  std::optional<double> d0;
  ASSERT_TRUE(eventually([&] { return (d0 = prom.query(dropped)).has_value(); }, 15'000)) << prom.stop();

  UdpReceiver rx(sb().rx_ns(), AF_INET, kPort);
  FloodSpec fs;
  fs.ns = sb().tx_ns();
  fs.dev = sb().tx_if();
  fs.dst = Addrs::rx4;
  fs.src = Addrs::tx4;
  fs.dport = kPort;
  fs.rate = 40'000;
  fs.seconds = 6;
  Flood flood(fs);
  FloodResult f = flood.wait();
  ASSERT_TRUE(f.run.code == 0) << f.describe();
  rx.finish();
  usleep(3'000'000);  // two scrapes after the last packet
  const std::optional<double> d1 = prom.query(dropped);
  ASSERT_TRUE(d1.has_value());

  const double sent = static_cast<double>(f.packets);
  const double received = static_cast<double>(rx.total());
  const double want = (sent - received) / f.seconds;  // drops per second, by the traffic
  const double got = (*d1 - *d0) / f.seconds;         // by Prometheus
  report("flood_sent_pps", sent / f.seconds);
  report("receiver_pps", received / f.seconds);
  report("drop_rate_traffic_pps", want);
  report("drop_rate_prometheus_pps", got);
  ASSERT_GT(want, 20'000) << "the flood should mostly be dropped: " << f.describe();
  EXPECT_NEAR(got, want, 0.05 * want);

  // The daemon's gauges reach Prometheus too: the flooding source is tracked, the
  // start's config load counted as a success.
  EXPECT_GE(prom.query("levee_sources").value_or(-1), 1);
  EXPECT_EQ(prom.query("levee_config_last_reload_success").value_or(-1), 1);
  RunResult r = d.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  prom.stop();
}

// Class default of `levee show --json` for `addr`: its ban fields are "banned",
// "ban_remaining_ms", "offences" (null object if it has no state there).
json ban_of(Sandbox& sb, const std::string& addr) {
  const json c = show_class(sb.show(addr), "default");
  return c.is_null() ? json::object() : c;
}

TEST_F(Daemon, Kill9KeepsTheFilterDroppingAndANewDaemonAdoptsBansAndCounters) {
  TempDir dir;
  const std::string cfg = dir.write("levee.toml", "[default]\nrate = 100\nburst = 10\nban = \"1m\"\n");
  const std::string banned = Addrs::src4()[0], other = Addrs::src4()[1];
  LeveeRun a(sb(), {"--config", cfg, "--prune-every", "1s"});
  a.wait_ready();
  if (HasFatalFailure()) return;

  // A source over its limit is banned for a minute.
  Sender({.ns = sb().tx_ns(), .src = banned, .dst = Addrs::rx4, .pps = 2000, .seconds = 0.3}, start_soon(50)).join();
  ASSERT_EQ(ban_of(sb(), banned).value("banned", false), true) << sb().show(banned).dump();
  const double dropped_a = metric(a.scrape().body, "levee_packets_total", {{"verdict", "dropped"}});
  ASSERT_GT(dropped_a, 0);

  // kill -9 in the middle of another source's flood: the filter keeps limiting it.
  UdpReceiver rx(sb().rx_ns(), AF_INET, kPort);
  const json s0 = sb().stats();
  Sender flood({.ns = sb().tx_ns(), .src = other, .dst = Addrs::rx4, .pps = 2000, .seconds = 4}, start_soon(50));
  usleep(1'000'000);
  RunResult killed = a.kill9();
  EXPECT_EQ(killed.code, 128 + SIGKILL) << killed.describe();
  const SendLog& log = flood.join();
  rx.finish();
  const json s1 = sb().stats();
  EXPECT_TRUE(xdp_query(sb().rx_ns(), sb().rx_if()).any()) << "the filter went with the daemon";
  // It went over at once and is banned too: its burst passed, nothing after it.
  report("kill9_flood_sent", static_cast<double>(log.sent));
  report("kill9_flood_received", static_cast<double>(rx.count(other)));
  EXPECT_LE(rx.count(other), 10u + 2u) << rx.summary();
  EXPECT_GE(ju(s1, "dropped_packets") - ju(s0, "dropped_packets"), log.sent - rx.count(other) - 20);
  EXPECT_GT(stat_reason_delta(s0, s1, "dropped", "ban"), static_cast<int64_t>(log.sent / 2));

  // A second daemon while none runs adopts: the ban is still there, counters go on.
  LeveeRun b(sb(), {"--config", cfg, "--prune-every", "1s"});
  b.wait_ready();
  if (HasFatalFailure()) return;
  const json ban = ban_of(sb(), banned);
  EXPECT_EQ(ban.value("banned", false), true) << ban.dump();
  EXPECT_GT(ban.value("ban_remaining_ms", 0), 40'000) << ban.dump();
  UdpReceiver rx2(sb().rx_ns(), AF_INET, kPort + 1);
  Sender({.ns = sb().tx_ns(), .src = banned, .dst = Addrs::rx4, .port = kPort + 1, .pps = 50, .seconds = 0.4},
         start_soon(50))
      .join();
  rx2.finish();
  EXPECT_EQ(rx2.count(banned), 0u) << "a banned source got through after the restart: " << rx2.summary();
  const Http mb = b.scrape();
  const double dropped_b = metric(mb.body, "levee_packets_total", {{"verdict", "dropped"}});
  EXPECT_GE(dropped_b, static_cast<double>(ju(s1, "dropped_packets"))) << "counters restarted";
  EXPECT_GT(dropped_b, dropped_a);
  EXPECT_TRUE(eventually([&] { return metric(b.scrape().body, "levee_bans_active") >= 1; }, 5000));

  // One daemon per interface.
  RunResult second = sb().levee({"run", sb().rx_if(), "--config", cfg});
  expect_error(second, 1, "already has a levee run");

  RunResult r = b.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_NE(r.err.find("adopted the running filter"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stays attached"), std::string::npos) << r.err;
  EXPECT_TRUE(xdp_query(sb().rx_ns(), sb().rx_if()).any()) << "SIGTERM detached the filter";
}

TEST_F(Daemon, EventStreamKeepsItsRateUnderARandomFloodAndCountsWhatItSuppressed) {
  TempDir dir;
  // A random flood over a /17: 32,768 sources, each at ~150 pps over its 20, so each
  // asks for a limited and a banned event in the flood's first second, and a ban_ended
  // a second after the flood: about 100,000 events against a rate of 50 a second. (The
  // autopilot off: it would refuse most of them their state, and its escalation of the
  // flood's /16 would drop their packets before any went over its own limit.)
  constexpr double kRate = 50;
  const std::string cfg = dir.write("levee.toml",
                                    "[interface]\nevents_per_second = 50\n"
                                    "[default]\nrate = 20\nburst = 5\nban = \"1s\"\nnew_sources = \"off\"\n"
                                    "escalate = \"off\"\n");
  const std::string events = dir.path() + "/events.jsonl";
  const uint64_t t_start = now_ns();
  LeveeRun d(sb(), {"--config", cfg, "--events", events, "--prune-every", "1s"});
  d.wait_ready();
  if (HasFatalFailure()) return;

  FloodSpec fs;
  fs.ns = sb().tx_ns();
  fs.dev = sb().tx_if();
  fs.dst = Addrs::rx4;
  fs.random = "198.18.128.0/17";
  fs.dport = kPort;
  fs.seconds = 5;
  fs.cpu = 0;
  Flood flood(fs);
  FloodResult f = flood.wait();
  ASSERT_TRUE(f.ok) << f.describe();
  usleep(1'500'000);
  const Http m = d.scrape();
  RunResult r = d.stop();
  const double life = secs(now_ns() - t_start);
  ASSERT_EQ(r.code, 0) << r.describe();

  std::ifstream in(events);
  const std::vector<json> lines = json_lines(std::string(std::istreambuf_iterator<char>(in), {}));
  std::map<std::string, uint64_t> by_type;
  uint64_t suppressed = 0;
  for (const json& l : lines) {
    ++by_type[l.at("type").get<std::string>()];
    suppressed += l.at("suppressed").get<uint64_t>();
  }
  // Over the daemon's life at most burst + rate * t events (the burst is a second's
  // worth: policy.hpp, events_rate), the datapath's and the ban ends together.
  report("flood_mpps", f.pps / 1e6);
  report("events_written", static_cast<double>(lines.size()));
  report("events_suppressed", static_cast<double>(suppressed));
  report("events_per_second_over_the_flood", static_cast<double>(lines.size()) / (f.seconds + 1.5));
  for (const auto& [t, n] : by_type) report("events_" + t, static_cast<double>(n));
  report("daemon_life_s", life);
  EXPECT_LE(static_cast<double>(lines.size()), kRate + kRate * life) << "the event stream went over its rate";
  // Most of what the flood asks for comes in its first second (each source's first drop
  // and ban; a ban then lasts as long as its source keeps going over): at least the
  // burst's worth is written.
  EXPECT_GE(static_cast<double>(lines.size()), kRate) << "the flood should use the budget";
  EXPECT_GT(suppressed, 10 * lines.size()) << "a random flood asks for far more events than the rate lets out";
  EXPECT_GT(by_type["banned"], 0u);
  EXPECT_GT(by_type["ban_ended"], 0u);
  // The daemon's metrics count the same.
  EXPECT_EQ(metric(m.body, "levee_events_suppressed_total"), static_cast<double>(suppressed)) << m.body;
  EXPECT_EQ(metric(m.body, "levee_events_total"), static_cast<double>(lines.size()));
}

// SIGHUP reloads the file atomically; a bad file changes nothing and says so.
TEST_F(Daemon, SighupReloadsTheConfigAndABadFileChangesNothing) {
  TempDir dir;
  const std::string cfg = dir.write("levee.toml", "[default]\nrate = 100\nburst = 10\n");
  LeveeRun d(sb(), {"--config", cfg});
  d.wait_ready();
  if (HasFatalFailure()) return;
  auto rate = [&] { return sb().status().at("classes").at(0).at("rate").get<uint64_t>(); };
  ASSERT_EQ(rate(), 100u);
  const uint64_t gen = sb().status().at("policy_generation").get<uint64_t>();

  dir.write("levee.toml", "[default]\nrate = 250\nburst = 10\n");
  d.signal(SIGHUP);
  EXPECT_TRUE(eventually([&] { return rate() == 250; }, 5000)) << sb().status().dump();
  EXPECT_EQ(sb().status().at("policy_generation").get<uint64_t>(), gen + 1);
  EXPECT_TRUE(eventually(
      [&] {
        return metric(d.scrape().body, "levee_reloads_total", {{"result", "success"}}) == 2;
      },
      3000));

  dir.write("levee.toml", "[default]\nrate = 250\nburst = 10\ntypo = 1\n");
  d.signal(SIGHUP);
  EXPECT_TRUE(eventually([&] { return metric(d.scrape().body, "levee_config_last_reload_success") == 0; }, 5000));
  EXPECT_EQ(metric(d.scrape().body, "levee_reloads_total", {{"result", "failure"}}), 1);
  EXPECT_EQ(rate(), 250u);
  EXPECT_EQ(sb().status().at("policy_generation").get<uint64_t>(), gen + 1);
  RunResult r = d.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_NE(r.err.find("reload failed, the running policy is unchanged: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("typo"), std::string::npos) << r.err;
}

// Connections that hold the metrics port without finishing a request, as a hostile local
// user would: `slow` ones send a request line and then one header every 3 s, idle ones
// connect and send nothing. One that the server closes is opened again at once, so that
// `n` stay open; closed() counts those the server ended.
class HeldConnections {
 public:
  HeldConnections(const std::string& ns, int port, int n, bool slow) : ns_(ns), port_(port), slow_(slow), fds_(n) {
    for (auto& c : fds_) open(c);
    thread_ = std::thread([this] { hold(); });
  }
  ~HeldConnections() {
    stop_ = true;
    thread_.join();
  }
  HeldConnections(const HeldConnections&) = delete;
  HeldConnections& operator=(const HeldConnections&) = delete;
  unsigned closed() const { return closed_.load(); }

 private:
  struct Conn {
    levee::Fd fd;
    std::chrono::steady_clock::time_point next_header;
  };
  void open(Conn& c) {
    c.fd = socket_in(ns_, AF_INET, SOCK_STREAM, 0);
    socklen_t len = 0;
    const sockaddr_storage a = sockaddr_of("127.0.0.1", static_cast<uint16_t>(port_), len);
    if (connect(c.fd.get(), reinterpret_cast<const sockaddr*>(&a), len) != 0) return;
    if (slow_) send_text(c, "GET /metrics HTTP/1.1\r\n");
    c.next_header = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  }
  static bool send_text(Conn& c, const std::string& t) {
    return send(c.fd.get(), t.data(), t.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(t.size());
  }
  // The server ended it: end of stream or an error (a reset, a refused connect).
  static bool ended(Conn& c) {
    char b[512];
    const ssize_t n = recv(c.fd.get(), b, sizeof b, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }
  void hold() {
    while (!stop_) {
      for (Conn& c : fds_) {
        bool gone = ended(c);
        if (!gone && slow_ && std::chrono::steady_clock::now() >= c.next_header) {
          gone = !send_text(c, "X-Slow: 1\r\n");
          c.next_header += std::chrono::seconds(3);
        }
        if (gone) {
          ++closed_;
          open(c);
        }
      }
      usleep(50'000);
    }
  }

  std::string ns_;
  int port_;
  bool slow_;
  std::vector<Conn> fds_;
  std::atomic<bool> stop_{false};
  std::atomic<unsigned> closed_{0};
  std::thread thread_;
};

// Scrapes for `seconds`, one every 200 ms: each must be answered, within 2 s (a functional
// bound: a blocked endpoint answers after tens of seconds or never). The slowest, in ms.
double scrapes_answer(LeveeRun& d, double seconds) {
  double slowest = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    const auto t0 = std::chrono::steady_clock::now();
    const Http h = d.scrape();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    slowest = std::max(slowest, ms);
    EXPECT_EQ(h.status, 200) << "a scrape was not answered (" << num(ms) << " ms)";
    EXPECT_LT(ms, 2000) << "a scrape waited behind the held connections";
    if (h.status != 200 || ms >= 2000) break;
    usleep(200'000);
  }
  return slowest;
}

// 64 slow connections, then 64 idle ones, do not take the metrics endpoint from its
// scrapers, and the server ends each of them within its timeouts.
TEST_F(Daemon, ScrapesAreAnsweredWhileSlowAndIdleConnectionsHoldTheMetricsPort) {
  TempDir dir;
  const std::string cfg = dir.write("levee.toml", "[default]\nrate = 100\nburst = 10\n");
  LeveeRun d(sb(), {"--config", cfg});
  d.wait_ready();
  if (HasFatalFailure()) return;
  for (const bool slow : {true, false}) {
    const std::string kind = slow ? "slow" : "idle";
    HeldConnections held(sb().rx_ns(), kMetricsPort, 64, slow);
    usleep(500'000);
    report("slowest_scrape_ms_with_64_" + kind + "_connections", scrapes_answer(d, 10));
    // Neither a header every 3 s nor silence keeps a connection past the server's timeouts.
    report(kind + "_connections_ended_by_the_server", held.closed());
    EXPECT_GE(held.closed(), 64u) << kind << " connections were kept for 10 s";
    if (HasFailure()) return;
  }
  RunResult r = d.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
}

// The events of a JSON-lines file whose "address" is `addr`.
size_t events_of(const std::string& path, const std::string& addr) {
  std::ifstream in(path);
  size_t n = 0;
  for (const json& l : json_lines(std::string(std::istreambuf_iterator<char>(in), {})))
    n += l.value("address", "") == addr;
  return n;
}

// logrotate moves the events file away and sends SIGHUP: the daemon writes a new file at
// the path even when the config it finds then is bad, which it refuses, keeping its policy.
TEST_F(Daemon, SighupReopensTheEventsFileEvenWhenTheConfigIsBad) {
  TempDir dir;
  const std::string cfg = dir.write("levee.toml", "[default]\nrate = 100\nburst = 10\n");
  const std::string events = dir.path() + "/events.jsonl", rotated = events + ".1";
  const std::string first = Addrs::src4()[0], second = Addrs::src4()[1];
  LeveeRun d(sb(), {"--config", cfg, "--events", events});
  d.wait_ready();
  if (HasFatalFailure()) return;
  // A source over its limit is an event ("limited").
  send_udp(sb(), first, 2000, 0.3);
  ASSERT_TRUE(eventually([&] { return events_of(events, first) > 0; }, 5000)) << "no event for " << first;

  ASSERT_EQ(rename(events.c_str(), rotated.c_str()), 0);
  dir.write("levee.toml", "[default]\nrate = 250\nburst = 10\ntypo = 1\n");
  d.signal(SIGHUP);
  EXPECT_TRUE(eventually([&] { return metric(d.scrape().body, "levee_config_last_reload_success") == 0; }, 5000));
  send_udp(sb(), second, 2000, 0.3);
  EXPECT_TRUE(eventually([&] { return events_of(events, second) > 0; }, 5000))
      << "the event after the SIGHUP did not reach a new " << events;
  EXPECT_EQ(events_of(rotated, second), 0u) << "the event went to the rotated file";
  EXPECT_EQ(sb().status().at("classes").at(0).at("rate").get<uint64_t>(), 100u);
  RunResult r = d.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_NE(r.err.find("reload failed, the running policy is unchanged: "), std::string::npos) << r.err;
}

using DaemonStart = E2e;

// Whatever stops a start stops it before the kernel is touched: one line, the exit code,
// and nothing attached or pinned.
TEST_F(DaemonStart, RefusesABadStartWithOneLineAndLeavesNothing) {
  TempDir dir;
  const std::string good = dir.write("good.toml", "[default]\nrate = 100\nburst = 10\n");
  const std::string& ifname = sb().rx_if();

  expect_error(sb().levee({"run", "--config", good}), 2, "names no interface");
  expect_error(sb().levee({"run", ifname, "--config", dir.write("bad.toml", "[default]\nrate = 0\nburst = 10\n")}), 2,
               "bad.toml");
  expect_error(sb().levee({"run", ifname, "--config",
                           dir.write("other.toml",
                                     "[interface]\nname = \"eth7\"\n"
                                     "[default]\nrate = 100\nburst = 10\n")}),
               2, "not of " + ifname);
  expect_error(sb().levee({"run", ifname, "--config", good, "--metrics", "99999"}), 2, "no valid port");
  expect_error(sb().levee({"run", ifname, "--config", good, "--idle", "soon"}), 2, "--idle");
  expect_error(sb().levee({"run", ifname, "--config", good, "--events", "/nonexistent/dir/events"}), 1,
               "open the events file");
  // A FIFO nothing reads: refused at once, where open(2) used to wait for a reader.
  const std::string fifo = dir.path() + "/events.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  RunOptions quick;
  quick.timeout = std::chrono::milliseconds(10'000);
  expect_error(sb().levee({"run", ifname, "--config", good, "--events", fifo}, quick), 1,
               "the events file " + fifo + " is a FIFO that nothing reads; start its reader first");
  // The metrics port is taken (here by a listener of our own in the namespace).
  {
    const levee::Fd fd = socket_in(sb().rx_ns(), AF_INET, SOCK_STREAM, 0);
    socklen_t len = 0;
    const sockaddr_storage a = sockaddr_of("127.0.0.1", kMetricsPort, len);
    ASSERT_EQ(bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), len), 0);
    ASSERT_EQ(listen(fd.get(), 1), 0);
    expect_error(sb().levee({"run", ifname, "--config", good, "--metrics", std::to_string(kMetricsPort)}), 1,
                 "cannot serve metrics on 127.0.0.1:" + std::to_string(kMetricsPort));
  }
  expect_nothing_left(sb(), sb().rx_ns(), ifname);

  // The config's [interface] name stands for the command line's interface.
  const std::string named =
      dir.write("named.toml", "[interface]\nname = \"" + ifname + "\"\n[default]\nrate = 100\nburst = 10\n");
  RunOptions o;
  o.die_with_parent = true;
  Child c = sb().levee_start({"run", "--config", named, "--detach-on-exit"}, o);
  EXPECT_TRUE(eventually([&] { return sb().pinned(ifname); }, 10'000));
  RunResult r = c.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_NE(r.err.find("detached (--detach-on-exit)"), std::string::npos) << r.err;
  expect_nothing_left(sb(), sb().rx_ns(), ifname);
}

// --metrics on an IPv6 address: the line levee run prints is a URL with the host in
// brackets, and a client given that URL, as printed, scrapes the metrics there.
TEST_F(DaemonStart, PrintsAnIpv6MetricsAddressAsAUrlThatAnswers) {
  TempDir dir;
  const std::string config = dir.write("levee.toml", "[default]\nrate = 100\nburst = 10\n");
  const std::string port = std::to_string(kMetricsPort);
  RunOptions o;
  o.die_with_parent = true;
  Child c = sb().levee_start({"run", sb().rx_if(), "--config", config, "--metrics", "[::1]:" + port}, o);
  const std::string url = "http://[::1]:" + port;
  int status = -1;
  EXPECT_TRUE(eventually(
      [&] {
        in_netns(sb().rx_ns(), [&] {
          httplib::Client client(url);
          client.set_connection_timeout(2);
          if (auto res = client.Get("/metrics")) status = res->status;
        });
        return status == 200 || !c.running();
      },
      10'000));
  EXPECT_EQ(status, 200) << "nothing answered at " << url << "/metrics";
  RunResult r = c.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_NE(r.err.find("metrics on " + url + "/metrics\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("http://::1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lvt
