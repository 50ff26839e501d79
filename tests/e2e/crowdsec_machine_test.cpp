// crowdsec_machine_test.cpp - `levee run` as a CrowdSec machine against Debian's real
// Local API (lapi.hpp): a ban levee imposes on one host is pushed as an alert and enforced
// by a second levee on another host before the source ever reached it; a ban imposed
// while the Local API is down (killed for 30 s) is published once it is back, and once
// only, as is one published before.
//
// Two hosts are two sandboxes (each a sender namespace and a receiver namespace joined by
// a veth pair, levee on the receiver's end), and a link of the test's own joins the two
// receivers: 198.19.255.1/30 (host A, where the Local API listens) to 198.19.255.2/30
// (host B). Nothing listens or sends outside the namespaces the test made; they go, with
// every link in them, when the sandboxes do, whether the test passed or not.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "e2e.hpp"
#include "lapi.hpp"
#include "levee_run.hpp"

namespace lvt {
namespace {

using nlohmann::json;
using Steady = std::chrono::steady_clock;

constexpr const char* kLapiA = "198.19.255.1";
constexpr const char* kLapiB = "198.19.255.2";
constexpr const char* kKeyB = "levee0e2e0bouncer0key0host0b0000";

double since(Steady::time_point t0) { return std::chrono::duration<double>(Steady::now() - t0).count(); }

// "1m58.5s" or "58.5s", as LAPI lists a decision's time left: seconds; -1 if not that.
double go_seconds(const std::string& d) {
  double minutes = 0;
  size_t at = 0;
  if (const auto m = d.find('m'); m != std::string::npos) minutes = std::stod(d.substr(0, m)), at = m + 1;
  if (d.empty() || d.back() != 's' || at >= d.size()) return -1;
  return minutes * 60 + std::stod(d.substr(at, d.size() - 1 - at));
}

// What the Local API holds for `value`: alerts and decisions, through cscli (the server).
struct Held {
  int alerts = 0, decisions = 0;
  json decision;  // the last decision seen
};
Held held_for(const Lapi& lapi, const std::string& value) {
  Held h;
  const json alerts = json::parse(lapi.cscli({"alerts", "list", "-o", "json", "--limit", "0"}));
  for (const json& a : alerts.is_array() ? alerts : json::array()) {
    if (a.value("/source/value"_json_pointer, std::string()) != value) continue;
    ++h.alerts;
    for (const json& d : a.value("decisions", json::array()))
      if (d.value("value", "") == value) ++h.decisions, h.decision = d;
  }
  return h;
}

class CrowdsecMachine : public E2e {
 protected:
  void SetUp() override {
    E2e::SetUp();
    if (IsSkipped()) return;
    if (access((crowdsec_dir() + "/usr/bin/crowdsec").c_str(), X_OK) != 0)
      GTEST_SKIP() << "needs CrowdSec's binaries in " << crowdsec_dir()
                   << " (scripts/test.sh unpacks them: ensure_crowdsec in scripts/lib/common.sh)";
  }
  void TearDown() override {
    lapi_.reset();
    sb_b_.reset();
    E2e::TearDown();
  }

  // A banning class (a source over 100/s is banned for 2 minutes), [crowdsec] as bouncer
  // and machine `machine`.
  std::string config(const std::string& name, const std::string& url, const std::string& key,
                     const std::string& machine) {
    const std::string key_file = dir_.write(name + ".key", key + "\n");
    chmod(key_file.c_str(), 0600);
    const std::string pw_file = dir_.write(name + ".password", "pw-" + machine + "\n");
    chmod(pw_file.c_str(), 0600);
    return dir_.write(name + ".toml", "[default]\nrate = 100\nburst = 20\nban = \"2m\"\n\n[crowdsec]\nurl = \"" + url +
                                          "\"\napi_key_file = \"" + key_file + "\"\npublish = true\nmachine_id = \"" +
                                          machine + "\"\nmachine_password_file = \"" + pw_file +
                                          "\"\npublish_min_ban = \"60s\"\n");
  }
  void add_machine(const std::string& machine) { lapi_->add_machine(machine, "pw-" + machine); }

  // `pps` packets a second from `src` for `seconds` from the sandbox's sender: how many sent.
  static uint64_t flood(Sandbox& sb, const std::string& src, double pps, double seconds) {
    Sender s({.ns = sb.tx_ns(), .src = src, .dst = Addrs::rx_for(src), .pps = pps, .seconds = seconds}, start_soon(5));
    return s.join().sent;
  }

  TempDir dir_;
  std::unique_ptr<Sandbox> sb_b_;
  std::optional<Lapi> lapi_;
};

TEST_F(CrowdsecMachine, TwoHostsShareABanBeforeTheSourceReachesTheSecond) {
  Sandbox& a = sb();
  sb_b_ = std::make_unique<Sandbox>();
  Sandbox& b = *sb_b_;
  // The link between the hosts, end to end inside the test's namespaces.
  const std::string link_a = a.ifname("m"), link_b = b.ifname("m");
  must({"ip", "link", "add", link_a, "netns", a.rx_ns(), "type", "veth", "peer", "name", link_b, "netns", b.rx_ns()});
  a.ip_rx({"addr", "add", std::string(kLapiA) + "/30", "dev", link_a});
  b.ip_rx({"addr", "add", std::string(kLapiB) + "/30", "dev", link_b});
  a.ip_rx({"link", "set", link_a, "up"});
  b.ip_rx({"link", "set", link_b, "up"});

  lapi_.emplace(a.rx_ns(), dir_, "0.0.0.0");
  lapi_->cscli({"bouncers", "add", "levee-b", "-k", kKeyB});
  add_machine("levee-a");
  add_machine("levee-b");
  lapi_->start();
  if (HasFatalFailure()) return;
  LeveeRun host_a(a, {"--config", config("a", lapi_->url(), kKey, "levee-a")});
  LeveeRun host_b(b, {"--config", config("b", lapi_->url(kLapiA), kKeyB, "levee-b")});
  host_a.wait_ready();
  host_b.wait_ready();
  if (HasFatalFailure()) return;
  for (LeveeRun* d : {&host_a, &host_b})
    ASSERT_TRUE(eventually(
        [&] { return d->sample("levee_crowdsec_up") == 1 && d->sample("levee_crowdsec_publish_up") == 1; }, 10'000))
        << d->stop().err;

  const std::string src = Addrs::src4()[0];
  const json b0 = b.stats();
  // The flood on host A; meanwhile, when A published its ban and when B holds it (its
  // metrics and maps: no packet of the source goes to B).
  const auto t0 = Steady::now();
  Sender flood_a({.ns = a.tx_ns(), .src = src, .dst = Addrs::rx4, .pps = 2000, .seconds = 0.5}, start_soon(5));
  double published_s = -1, held_b_s = -1;
  while (since(t0) < 10 && (published_s < 0 || held_b_s < 0)) {
    if (published_s < 0 && host_a.sample("levee_crowdsec_alerts_published_total") >= 1) published_s = since(t0);
    if (held_b_s < 0 && host_b.sample("levee_crowdsec_decisions", {{"family", "ipv4"}, {"scope", "ip"}}) >= 1)
      held_b_s = since(t0);
    usleep(20'000);
  }
  const SendLog& sent_a = flood_a.join();
  const json a1 = a.stats();
  report("machine_flood_start_to_published_s", published_s);
  report("machine_flood_start_to_held_on_b_s", held_b_s);
  EXPECT_GE(published_s, 0) << host_a.scrape().body;
  EXPECT_GE(held_b_s, 0) << host_b.scrape().body;
  EXPECT_LE(held_b_s, 2.0) << "a ban on A is enforced on B within 2 s";
  const int64_t banned_a = stat_reason(a1, "dropped", "ban") + stat_reason(a1, "dropped", "rate");
  std::printf("host A: %llu packets of %s, %lld dropped (rate, ban); published after %.3f s\n",
              static_cast<unsigned long long>(sent_a.sent), src.c_str(), static_cast<long long>(banned_a), published_s);
  EXPECT_GT(stat_reason(a1, "dropped", "ban"), 0) << "A banned the source";

  // Host B before the source's first packet to it: nothing from it, the decision held.
  const json b1 = b.stats();
  EXPECT_EQ(stat_reason_delta(b0, b1, "dropped", "crowdsec"), 0);
  // Now the source turns to host B: every packet dropped as crowdsec, none passed.
  const uint64_t sent_b = flood(b, src, 1000, 0.2);
  const json b2 = b.stats();
  const int64_t fleet_b = stat_reason_delta(b1, b2, "dropped", "crowdsec");
  std::printf(
      "host B: held the decision %.3f s after the flood on A began; then %llu packets of %s, %lld dropped "
      "as crowdsec, %lld passed\n",
      held_b_s, static_cast<unsigned long long>(sent_b), src.c_str(), static_cast<long long>(fleet_b),
      static_cast<long long>(stat_reason_delta(b1, b2, "passed", "conforming")));
  report("machine_host_b_sent", static_cast<double>(sent_b));
  report("machine_host_b_dropped_crowdsec", static_cast<double>(fleet_b));
  EXPECT_GT(sent_b, 100u);
  EXPECT_EQ(fleet_b, static_cast<int64_t>(sent_b)) << "every packet of the source dropped on B";
  EXPECT_EQ(stat_reason_delta(b1, b2, "passed", "conforming"), 0);

  // No loops: B dropped it for the fleet's decision, imposed no ban and published nothing;
  // the Local API holds the one alert A sent.
  usleep(1'500'000);  // a poll of each, and a publish if there were one
  EXPECT_EQ(host_b.sample("levee_crowdsec_alerts_published_total"), 0);
  EXPECT_EQ(stat_reason_delta(b1, b.stats(), "dropped", "ban"), 0);
  EXPECT_EQ(host_a.sample("levee_crowdsec_alerts_published_total"), 1);
  const Held h = held_for(*lapi_, src);
  EXPECT_EQ(h.alerts, 1);
  EXPECT_EQ(h.decisions, 1);
  EXPECT_EQ(h.decision.value("scenario", ""), "levee/default");
  EXPECT_EQ(h.decision.value("origin", ""), "crowdsec");
  EXPECT_EQ(h.decision.value("type", ""), "ban");
  EXPECT_EQ(h.decision.value("scope", ""), "Ip");
  const double left = go_seconds(h.decision.value("duration", ""));
  EXPECT_GT(left, 100) << "the ban's remaining time, 2 minutes less what has passed: " << h.decision.dump();
  EXPECT_LE(left, 120) << h.decision.dump();
  host_b.stop();
  host_a.stop();
}

TEST_F(CrowdsecMachine, ABanImposedWhileTheLocalApiIsDownIsPublishedOnceItIsBack) {
  lapi_.emplace(sb().rx_ns(), dir_);
  add_machine("levee-a");
  lapi_->start();
  if (HasFatalFailure()) return;
  LeveeRun d(sb(), {"--config", config("a", lapi_->url(), kKey, "levee-a")});
  d.wait_ready();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(eventually([&] { return d.sample("levee_crowdsec_publish_up") == 1; }, 10'000)) << d.stop().err;
  // One ban published before the outage: it must not go again after.
  const std::string before = Addrs::src4()[2];
  flood(sb(), before, 2000, 0.2);
  ASSERT_TRUE(eventually([&] { return d.sample("levee_crowdsec_alerts_published_total") == 1; }, 5'000));

  // Killed for 30 s; two bans meanwhile, IPv4 and IPv6.
  const auto down = Steady::now();
  lapi_->kill();
  const std::string v4 = Addrs::src4()[1], v6 = Addrs::src6()[1];
  flood(sb(), v4, 2000, 0.2);
  flood(sb(), v6, 2000, 0.2);
  ASSERT_TRUE(eventually([&] { return d.sample("levee_crowdsec_publish_queue") == 2; }, 5'000)) << d.scrape().body;
  usleep(3'000'000);  // retries meet a closed port
  EXPECT_GE(d.sample("levee_crowdsec_publish_errors_total"), 1);
  EXPECT_EQ(d.sample("levee_crowdsec_publish_up"), 0);
  EXPECT_EQ(d.sample("levee_crowdsec_alerts_published_total"), 1);
  EXPECT_EQ(d.sample("levee_crowdsec_publish_queue"), 2) << "kept while the Local API is away";
  RunResult st = sb().levee({"status"});
  EXPECT_NE(st.out.find("publish  machine levee-a: 1 ban published, 2 queued, 0 dropped"), std::string::npos)
      << st.describe();
  while (since(down) < 30) usleep(100'000);

  const auto back = Steady::now();
  lapi_->start();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(eventually([&] { return d.sample("levee_crowdsec_alerts_published_total") == 3; }, 15'000))
      << d.scrape().body;
  const double after = since(back);
  report("machine_publish_errors_during_30s_outage", d.sample("levee_crowdsec_publish_errors_total"));
  report("machine_published_after_reconnect_s", after);
  EXPECT_LE(after, 12.0) << "within the backoff's cap (10 s) and a request";
  EXPECT_EQ(d.sample("levee_crowdsec_publish_queue"), 0);
  EXPECT_EQ(d.sample("levee_crowdsec_publish_dropped_total"), 0);

  usleep(3'000'000);  // more turns of the publisher: nothing goes twice
  EXPECT_EQ(d.sample("levee_crowdsec_alerts_published_total"), 3);
  // The IPv6 source's class keys sources by /64 (the default prefix): its ban, and so its
  // decision, is the network's.
  for (const auto& [v, scope] :
       {std::pair{before, "Ip"}, std::pair{v4, "Ip"}, std::pair{std::string("2001:db8:2::/64"), "Range"}}) {
    const Held h = held_for(*lapi_, v);
    EXPECT_EQ(h.alerts, 1) << v;
    EXPECT_EQ(h.decisions, 1) << v;
    EXPECT_EQ(h.decision.value("scope", ""), scope) << v;
  }
  d.stop();
}

}  // namespace
}  // namespace lvt
