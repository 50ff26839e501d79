// status_output_test.cpp - what `levee status` prints, text and JSON: each class with
// its match, limits and the limits beyond a source's rate (admission, network, total,
// bans), its autopilot (admission's state and counts, escalation and the networks
// escalated), the modes, the map's fill and when-full policy, and an interface that
// cannot be read beside the others.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "export/render_policy.hpp"
#include "export/render_status.hpp"
#include "export/render_units.hpp"
#include "policy/compile.hpp"
#include "policy/policy.hpp"
#include "unit.hpp"

namespace levee::cli {
namespace {

TEST(StatusOutput, ClassesAndOverrides) {
  IfaceStatus s;
  s.iface = "eth0";
  s.mode = "native";
  s.prog_id = 42;
  s.source = "/etc/levee/levee.toml";
  s.classes.push_back(compile_class(ClassSpec{"dns", {}, {500, 100}, {}, 32, 64, {}}, 1));
  s.classes.push_back(compile_class(ClassSpec{"default", {}, {1000, 200}, {}, 24, 48, {}}, 1));
  lv_override o{};
  o.pkt = compile_packet_limit({10'000, 1'000});
  o.classes = 1;
  std::snprintf(o.name, sizeof o.name, "partner");
  s.overrides.push_back(o);
  s.allow = 2;
  s.deny = 1;
  s.max_sources = 1'000'000;
  const std::string t = status_text({s});
  EXPECT_NE(t.find("eth0: native mode, program 42, policy from /etc/levee/levee.toml"), std::string::npos) << t;
  EXPECT_NE(t.find("  class dns            500 pps, burst 100"), std::string::npos) << t;
  EXPECT_NE(t.find("  class default        1k pps, burst 200; per source /24 (IPv4), /48 (IPv6)"), std::string::npos)
      << t;
  EXPECT_NE(t.find("  override partner     10k pps, burst 1k; classes dns"), std::string::npos) << t;
  EXPECT_NE(t.find("  lists    2 allow, 1 deny, 0 override entries"), std::string::npos) << t;
  auto j = status_json({s});
  EXPECT_EQ(j["interfaces"][0]["classes"].size(), 2u);
  EXPECT_EQ(j["interfaces"][0]["rate"], 1000);  // the default class, for the shorthand's readers
  EXPECT_EQ(j["interfaces"][0]["overrides"][0]["name"], "partner");
}

IfaceStatus status_of(std::vector<ClassSpec> specs) {
  IfaceStatus s;
  s.iface = "eth0";
  s.mode = "native";
  s.prog_id = 42;
  s.source = "/etc/levee/levee.toml";
  for (const ClassSpec& c : specs) {
    s.classes.push_back(compile_class(c, 4'000'000, 2));
    s.admitted.push_back(0);
  }
  s.max_sources = 1'000'000;
  s.max_bans = 65'536;
  return s;
}

ClassSpec named(const char* name) {
  ClassSpec c;
  c.name = name;
  c.packets = {100, 10};
  return c;
}

TEST(StatusOutput, CrowdsecDecisionsHeldInTheMaps) {
  IfaceStatus s = status_of({named("default")});
  s.crowdsec = 100'001;
  s.crowdsec_in_force = 100'000;
  const std::string t = status_text({s});
  EXPECT_NE(t.find("  crowdsec 100,001 decisions held, 100,000 in force (levee run's bouncer: see its metrics)\n"),
            std::string::npos)
      << t;
  auto j = status_json({s})["interfaces"][0];
  EXPECT_EQ(j["crowdsec"]["held"], 100'001);
  EXPECT_EQ(j["crowdsec"]["in_force"], 100'000);
}

// levee run's bouncer, as its state file says: working, or failing since when and why.
TEST(StatusOutput, CrowdsecBouncerAsLeveeRunReportsIt) {
  IfaceStatus s = status_of({named("default")});
  EXPECT_TRUE(status_json({s})["interfaces"][0]["crowdsec"]["bouncer"].is_null());
  s.bouncer = IfaceStatus::Bouncer{true, 125 * kSec, 0, 0, ""};
  EXPECT_NE(status_text({s}).find("  crowdsec 0 decisions held, 0 in force; pulls working for 2m 5s\n"),
            std::string::npos)
      << status_text({s});
  const std::string error = "http://127.0.0.1:8080/v1/decisions/stream: no whole reply within 30s ([crowdsec] timeout)";
  s.crowdsec = s.crowdsec_in_force = 3;
  s.bouncer = IfaceStatus::Bouncer{false, 42'100 * kMs, 7, 6, error};
  const std::string t = status_text({s});
  EXPECT_NE(
      t.find("  crowdsec 3 decisions held, 3 in force; pulls failing for 42.1 s (7 failed, 6 at their deadline): " +
             error + "\n"),
      std::string::npos)
      << t;
  auto j = status_json({s})["interfaces"][0]["crowdsec"]["bouncer"];
  EXPECT_EQ(j["up"], false);
  EXPECT_DOUBLE_EQ(j["for_s"].get<double>(), 42.1);
  EXPECT_EQ(j["pull_errors"], 7);
  EXPECT_EQ(j["pull_timeouts"], 6);
  EXPECT_EQ(j["last_error"], error);
}

TEST(StatusOutput, CrowdsecPublisherAsLeveeRunReportsIt) {
  IfaceStatus s = status_of({named("default")});
  EXPECT_EQ(status_text({s}).find("publish"), std::string::npos) << "no line without levee run's publisher";
  EXPECT_TRUE(status_json({s})["interfaces"][0]["crowdsec_publish"].is_null());
  s.publish = IfaceStatus::Publish{"edge-1", false, 12'345, 3, 2, 1};
  const std::string t = status_text({s});
  EXPECT_NE(t.find("  publish  machine edge-1: 12,345 bans published, 2 queued, 1 dropped, 3 errors; Local API down\n"),
            std::string::npos)
      << t;
  auto j = status_json({s})["interfaces"][0]["crowdsec_publish"];
  EXPECT_EQ(j["machine"], "edge-1");
  EXPECT_EQ(j["up"], false);
  EXPECT_EQ(j["published"], 12'345);
  EXPECT_EQ(j["errors"], 3);
  EXPECT_EQ(j["queued"], 2);
  EXPECT_EQ(j["dropped"], 1);
}

// SYN authentication: the mode its SYN-ACKs are in and why, levee's tc filter (and when
// someone removed it), the options left out with the sysctls that say so, the marks per
// network; the known-good filter's fill.
TEST(StatusOutput, SynAuthProxyTcFilterOptionsAndKnownGoodFill) {
  IfaceStatus s = status_of({named("default")});
  EXPECT_EQ(status_text({s}).find("syn auth"), std::string::npos) << "no class with syn_auth: no line";
  EXPECT_TRUE(status_json({s})["interfaces"][0]["syn_auth"].is_null());
  IfaceStatus::SynAuth y;
  y.proxying = true;
  y.tc = {0x1ef, 1};
  y.tc_present = true;
  y.own_hook = true;
  y.tcp_off = LV_TCP_OFF_TS;
  y.marks_per_network = 256;
  y.prefix4 = 24;
  y.prefix6 = 48;
  y.sysctls = {0, 1, 1, 1};
  s.syn = y;
  s.known_good = GoodFill{0.0123, 0.00004};
  s.good_epoch = 3;
  std::string t = status_text({s});
  EXPECT_NE(t.find("  syn auth proxy: levee's tc filter at ingress priority 1, handle 0x1ef\n"
                   "           SYN-ACKs leave out: timestamps (here net.ipv4.tcp_timestamps 0, tcp_sack 1, "
                   "tcp_window_scaling 1, tcp_syncookies 1)\n"
                   "           known-good marks per /24 or /48: 256\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  known-good 1.23 % of the filter's bits set, 0.004 % false positives (estimated), 3 ageings\n"),
            std::string::npos)
      << t;
  auto j = status_json({s})["interfaces"][0];
  EXPECT_EQ(j["syn_auth"]["mode"], "proxy");
  EXPECT_EQ(j["syn_auth"]["tc_filter"]["handle"], 0x1ef);
  EXPECT_EQ(j["syn_auth"]["tc_filter"]["priority"], 1);
  EXPECT_EQ(j["syn_auth"]["tc_filter"]["present"], true);
  EXPECT_EQ(j["syn_auth"]["tc_filter"]["own_hook"], true);
  EXPECT_EQ(j["syn_auth"]["tcp_options_off"], nlohmann::json::array({"timestamps"}));
  EXPECT_EQ(j["syn_auth"]["sysctls"]["tcp_timestamps"], 0);
  EXPECT_EQ(j["syn_auth"]["known_good_per_network"], 256);
  EXPECT_EQ(j["known_good"]["fill"], 0.0123);
  EXPECT_EQ(j["known_good"]["ageings"], 3);

  s.syn->proxying = false;
  s.syn->tc_present = false;
  t = status_text({s});
  EXPECT_NE(t.find("  syn auth reset: levee's tc filter (priority 1, handle 0x1ef) is missing from the ingress hook: "
                   "levee run puts it back\n"),
            std::string::npos)
      << t;
  j = status_json({s})["interfaces"][0];
  EXPECT_EQ(j["syn_auth"]["mode"], "reset");
  EXPECT_EQ(j["syn_auth"]["tc_filter"]["present"], false);
  s.syn->tc_present = true;
  s.syn->sysctls.syncookies = 0;
  EXPECT_NE(status_text({s}).find("  syn auth reset: net.ipv4.tcp_syncookies is 0 here"), std::string::npos);
  s.syn->tc = {};
  EXPECT_NE(status_text({s}).find("  syn auth reset: levee's tc program is not on the interface"), std::string::npos);
  EXPECT_TRUE(status_json({s})["interfaces"][0]["syn_auth"]["tc_filter"].is_null());
}

TEST(StatusOutput, ModeWhenFullSourcesNetworksBansAdmitted) {
  ClassSpec syn = named("web-syn");
  syn.new_sources = {500, 50};
  syn.ban.ban_ns = 2 * kSec;
  ClassSpec dns = named("dns");
  dns.monitor = true;
  dns.network.packets = {1000, 100};
  ClassSpec def = named("default");
  def.total.packets = {50'000, 5'000};
  IfaceStatus s = status_of({syn, dns, def});
  s.admitted = {1'234, 0, 0};
  s.sources = 1'027;
  s.networks = 12;
  s.bans_active = 3;
  s.ban_records = 5;
  s.policy_flags = LV_POL_REFUSE_FULL;
  s.full_at = 999'488;
  const std::string t = status_text({s});
  EXPECT_NE(t.find("  mode     mixed: 1 class monitors; the deny list counts\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  sources  1,027 tracked of 1,000,000, 12 networks; when full: refuse new sources (at 999,488)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  bans     3 active, 5 records of 65,536"), std::string::npos) << t;
  EXPECT_NE(t.find("new sources 500/s, burst 50; ban 2s, doubling up to 1h, forgotten after 1h; 1,234 admitted"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("per network /24, /48: 1k pps, burst 100; monitor mode"), std::string::npos) << t;
  EXPECT_NE(t.find("class total 50k pps, burst 5k"), std::string::npos) << t;

  auto j = status_json({s})["interfaces"][0];
  EXPECT_EQ(j["mode"], "mixed");
  EXPECT_EQ(j["monitor_classes"], 1);
  EXPECT_EQ(j["monitor_switch"], false);
  EXPECT_EQ(j["when_full"], "refuse");
  EXPECT_EQ(j["full_at"], 999'488);
  EXPECT_EQ(j["deny_in_monitor"], "count");
  EXPECT_EQ(j["sources"], 1'027);
  EXPECT_EQ(j["networks"], 12);
  EXPECT_EQ(j["bans"], 3);
  EXPECT_EQ(j["ban_records"], 5);
  EXPECT_EQ(j["max_bans"], 65'536);
  EXPECT_EQ(j["crowdsec"]["held"], 0);
  EXPECT_EQ(t.find("crowdsec"), std::string::npos) << "no line without decisions held";
  const auto& cls = j["classes"];
  EXPECT_EQ(cls[0]["admitted"], 1'234);
  EXPECT_EQ(cls[0]["new_sources"], 500);
  EXPECT_EQ(cls[0]["new_sources_burst"], 50);
  EXPECT_EQ(cls[0]["ban"]["ban_ms"], 2000);
  EXPECT_EQ(cls[0]["ban"]["ban_max_ms"], 3'600'000);
  EXPECT_EQ(cls[0]["ban"]["scope"], "class");
  EXPECT_TRUE(cls[0]["network"].is_null());
  EXPECT_EQ(cls[1]["monitor"], true);
  EXPECT_EQ(cls[1]["network"]["prefix4"], 24);
  EXPECT_EQ(cls[1]["network"]["rate"], 1000);
  EXPECT_EQ(cls[2]["total"]["rate"], 50'000);
  EXPECT_EQ(cls[2]["total"]["lease_ns"], 1'000'000);
  EXPECT_TRUE(cls[2]["ban"].is_null());
}

TEST(StatusOutput, Modes) {
  IfaceStatus s = status_of({named("a"), named("default")});
  EXPECT_EQ(monitor_mode(s), "enforce");
  s.classes[0].flags |= LV_CLASS_MONITOR;
  s.classes[1].flags |= LV_CLASS_MONITOR;
  EXPECT_EQ(monitor_mode(s), "monitor") << "every class by its own mode";
  s.classes[1].flags &= ~uint32_t{LV_CLASS_MONITOR};
  EXPECT_EQ(monitor_mode(s), "mixed: 1 class monitors");
  EXPECT_EQ(monitor_mode(s, true), "mixed");
  s.policy_flags = LV_POL_MONITOR | LV_POL_MONITOR_DENY;
  EXPECT_EQ(monitor_mode(s), "monitor");
  const std::string t = status_text({s});
  EXPECT_NE(t.find("  mode     monitor (the interface's switch: levee set --mode enforce); the deny list drops"),
            std::string::npos)
      << t;
  EXPECT_EQ(status_json({s})["interfaces"][0]["when_full"], "evict");
  EXPECT_TRUE(status_json({s})["interfaces"][0]["full_at"].is_null());
}

TEST(StatusOutput, AnUnreadableInterfaceDoesNotHideTheOthers) {
  IfaceStatus bad;
  bad.iface = "eth1";
  bad.problem = "/sys/fs/bpf/levee/eth1 is incompletely pinned";
  const std::string t = status_text({status_of({named("default")}), bad});
  EXPECT_NE(t.find("eth0: native mode"), std::string::npos) << t;
  EXPECT_NE(t.find("eth1: cannot be read: /sys/fs/bpf/levee/eth1 is incompletely pinned"), std::string::npos) << t;
  auto j = status_json({bad});
  EXPECT_EQ(j["interfaces"][0]["interface"], "eth1");
  EXPECT_EQ(j["interfaces"][0]["problem"], bad.problem);
}

constexpr uint64_t kStatusNow = 5'000 * kSec;

// One class with the autopilot (admission and escalation) as status reads it at kStatusNow.
IfaceStatus autopilot_status(const lv_guard& g) {
  IfaceStatus s = status_of({named("web")});
  s.now_ns = kStatusNow;
  s.guards = {g};
  return s;
}

lv_guard learnt() {
  lv_guard g{};
  g.cost = 250'000;                        // 4,000 new sources/s
  g.baseline = (812u << LV_GUARD_FP) + 8;  // 812.5/s
  g.engagements = 3;
  g.arrivals = 1'234'567;
  g.probation = 2'345;
  g.promoted = 1'200;
  g.good_admitted = 87;
  g.escalations = 1;
  return g;
}

TEST(StatusOutput, AutopilotCalmAbnormalEngagedReleasePending) {
  lv_guard g = learnt();
  std::string t = status_text({autopilot_status(g)});
  EXPECT_NE(t.find("    admission   auto, calm: threshold 4,000 new sources/s (baseline 812.5/s, floor 1,000/s)\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("                3 engagements; 1,234,567 arrivals while calm, 2,345 admitted on probation, 1,200 "
                   "promoted, 87 "
                   "known-good let in\n"),
            std::string::npos)
      << t;
  auto a = status_json({autopilot_status(g)})["interfaces"][0]["classes"][0]["autopilot"];
  EXPECT_EQ(a["admission"], "auto");
  EXPECT_EQ(a["state"], "calm");
  EXPECT_TRUE(a["engaged_since_ms"].is_null());
  EXPECT_EQ(a["threshold"], 4000);
  EXPECT_EQ(a["baseline"], 812.5);
  EXPECT_EQ(a["floor"], 1000);
  EXPECT_EQ(a["margin"], 4);
  EXPECT_EQ(a["release_ms"], 30'000);
  EXPECT_EQ(a["engagements"], 3);
  EXPECT_EQ(a["arrivals"], 1'234'567);
  EXPECT_EQ(a["probation"], 2'345);
  EXPECT_EQ(a["promoted"], 1'200);
  EXPECT_EQ(a["known_good_admitted"], 87);
  EXPECT_EQ(a["monitor"], false);

  g.last_over_ns = kStatusNow - kSec;  // an abnormal arrival a second ago (release: 30 s)
  t = status_text({autopilot_status(g)});
  EXPECT_NE(t.find("    admission   auto, abnormal (new sources admitted on probation): threshold"), std::string::npos)
      << t;
  EXPECT_EQ(status_json({autopilot_status(g)})["interfaces"][0]["classes"][0]["autopilot"]["state"], "abnormal");

  g.engaged_ns = kStatusNow - 12'300 * kMs;
  t = status_text({autopilot_status(g)});
  EXPECT_NE(
      t.find("    admission   auto, engaged since 12.3 s ago, challenging new TCP sources' SYNs: threshold 4,000"),
      std::string::npos)
      << t;
  a = status_json({autopilot_status(g)})["interfaces"][0]["classes"][0]["autopilot"];
  EXPECT_EQ(a["state"], "engaged");
  EXPECT_EQ(a["engaged_since_ms"], 12'300);

  IfaceStatus monitor = autopilot_status(g);
  monitor.classes[0].flags |= LV_CLASS_MONITOR;
  t = status_text({monitor});
  EXPECT_NE(t.find("    admission   auto, would be engaged (monitor) since 12.3 s ago"), std::string::npos) << t;
  a = status_json({monitor})["interfaces"][0]["classes"][0]["autopilot"];
  EXPECT_EQ(a["state"], "engaged");
  EXPECT_EQ(a["monitor"], true);

  g.last_over_ns = kStatusNow - 31 * kSec;  // calm again; the datapath has not released yet
  t = status_text({autopilot_status(g)});
  EXPECT_NE(t.find("    admission   auto, calm (release pending): threshold"), std::string::npos) << t;
  a = status_json({autopilot_status(g)})["interfaces"][0]["classes"][0]["autopilot"];
  EXPECT_EQ(a["state"], "release_pending");
  EXPECT_TRUE(a["engaged_since_ms"].is_null());

  g.cost = 0;                                // nothing learnt yet: the floor
  g.baseline = (2'012u << LV_GUARD_FP) + 7;  // 2,012.4375/s
  t = status_text({autopilot_status(g)});
  EXPECT_NE(t.find("threshold 1,000 new sources/s (baseline 2,012.4/s, floor 1,000/s)"), std::string::npos) << t;
}

TEST(StatusOutput, AdmissionOffOrABudgetAndEscalationOff) {
  ClassSpec off = named("off");
  off.admission = Admission::Off;
  off.escalate = false;
  ClassSpec budget = named("budget");
  budget.new_sources = {500, 50};
  ClassSpec bytes_only;  // escalation wanted, but no packet limit to scale
  bytes_only.name = "bulk";
  bytes_only.bytes = {1'000'000, 100'000};
  const IfaceStatus s = status_of({off, budget, bytes_only});
  const std::string t = status_text({s});
  EXPECT_NE(t.find("  class off            100 pps, burst 10; per source /32 (IPv4), /64 (IPv6)\n"
                   "    admission   off: every new source gets state\n"
                   "    escalation  off\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("    admission   budget: 500 new sources/s, burst 50\n"), std::string::npos) << t;
  EXPECT_NE(t.find("    escalation  off: no per-source packet limit to scale (network_rate in [auto] gives one)\n"),
            std::string::npos)
      << t;
  auto j = status_json({s})["interfaces"][0]["classes"];
  EXPECT_EQ(j[0]["autopilot"]["admission"], "off");
  EXPECT_TRUE(j[0]["autopilot"]["state"].is_null());
  EXPECT_TRUE(j[0]["autopilot"]["threshold"].is_null());
  EXPECT_EQ(j[0]["autopilot"]["escalate"], false);
  EXPECT_TRUE(j[0]["autopilot"]["network_rate"].is_null());
  EXPECT_EQ(j[1]["autopilot"]["admission"], "budget");
  EXPECT_EQ(j[1]["autopilot"]["escalate"], true);
  EXPECT_EQ(j[2]["autopilot"]["admission"], "auto");
  EXPECT_EQ(j[2]["autopilot"]["escalate"], false);
}

// A network escalated in class `id`: 2001:db8:n::/48, escalated `ago` before kStatusNow.
IfaceStatus::Escalation escalated_net(unsigned id, unsigned n, uint64_t ago, uint32_t dropped) {
  IfaceStatus::Escalation e{};
  e.key.addr[0] = htonl(0x20010db8);
  e.key.addr[1] = htonl(n << 16);
  e.key.family = LV_AF_INET6 | LV_KEY_WATCH;
  e.key.class_id = static_cast<uint16_t>(id);
  e.watch.escalated_ns = kStatusNow - ago;
  e.watch.last_over_ns = kStatusNow - kMs;
  e.watch.dropped = (uint64_t{dropped} * 64 << 32) | dropped;
  return e;
}

TEST(StatusOutput, EscalatedNetworksListedUpToTwenty) {
  IfaceStatus s = status_of({named("web"), named("default")});
  s.now_ns = kStatusNow;
  lv_guard g = learnt();
  g.escalations = 26;
  s.guards = {g, lv_guard{}};
  for (unsigned n = 0; n < 25; ++n) s.escalated.push_back(escalated_net(0, n, 4'100 * kMs, 1'234 + n));
  s.escalated.push_back(escalated_net(1, 99, 60 * kSec, 1));
  s.probation = 7;
  s.watched = 30;
  const std::string t = status_text({s});
  EXPECT_NE(t.find("    escalation  per /16 (IPv4), /48 (IPv6) over 6.4k pps, burst 640: 26 escalations, 25 escalated "
                   "now\n                2001:db8::/48      since 4.1 s ago, 1,234 packets dropped\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("2001:db8:13::/48   since 4.1 s ago, 1,253 packets dropped\n                and 5 more\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("2001:db8:14::/48"), std::string::npos) << t;
  EXPECT_NE(
      t.find("0 escalations, 1 escalated now\n                2001:db8:63::/48   since 1m ago, 1 packet dropped\n"),
      std::string::npos)
      << t;
  EXPECT_NE(t.find("  auto     7 sources on probation, 30 networks watched, 26 escalated\n"), std::string::npos) << t;

  auto j = status_json({s})["interfaces"][0];
  EXPECT_EQ(j["probation"], 7);
  EXPECT_EQ(j["watched"], 30);
  EXPECT_EQ(j["escalated"], 26);
  const auto& a = j["classes"][0]["autopilot"];
  EXPECT_EQ(a["escalate"], true);
  EXPECT_EQ(a["network_prefix4"], 16);
  EXPECT_EQ(a["network_prefix6"], 48);
  EXPECT_EQ(a["network_rate"], 6'400);
  EXPECT_EQ(a["network_burst"], 640);
  EXPECT_EQ(a["escalations"], 26);
  ASSERT_EQ(a["escalated"].size(), 25u) << "JSON lists every one";
  EXPECT_EQ(a["escalated"][0]["network"], "2001:db8::/48");
  EXPECT_EQ(a["escalated"][0]["since_ms"], 4'100);
  EXPECT_EQ(a["escalated"][0]["dropped_packets"], 1'234);
  EXPECT_EQ(j["classes"][1]["autopilot"]["escalated"].size(), 1u);

  // No autopilot anywhere, nothing watched: no autopilot line for the interface.
  ClassSpec plain = named("default");
  plain.admission = Admission::Off;
  plain.escalate = false;
  EXPECT_EQ(status_text({status_of({plain})}).find("  auto     "), std::string::npos);
}

TEST(StatusOutput, DescribesExtrasAndRemaining) {
  ClassSpec c = named("c");
  EXPECT_EQ(describe_extras(c), "");
  c.ban = {90 * kSec, 0, 600 * kSec, true, {}, {}};
  EXPECT_EQ(describe_extras(c), "ban 1m30s, doubling up to 1h, forgotten after 10m, in every class");
  c.ban = {};
  c.total.bytes = {1'000'000, 100'000};
  EXPECT_EQ(describe_extras(c), "class total 1M B/s, burst 100k B");
  ClassSpec only_total;
  only_total.name = "t";
  only_total.total.packets = {10, 10};
  EXPECT_EQ(describe_limits(only_total).rfind("no limit per source; per source /32 (IPv4), /64 (IPv6); class total", 0),
            0u)
      << describe_limits(only_total);
  EXPECT_EQ(format_remaining(1'234'000'000), "1.2 s");
  EXPECT_EQ(format_remaining(600 * kSec), "10m");
  EXPECT_EQ(format_remaining(3900 * kSec), "1h 5m");
}

TEST(StatusOutput, DescribesAMatch) {
  Match m;
  EXPECT_EQ(describe_match(m), "any");
  m.protos = {Proto::Udp};
  m.ports = {{53, 53}};
  EXPECT_EQ(describe_match(m), "udp port 53");
  m = Match{{Proto::Tcp}, {{80, 80}, {443, 443}, {8000, 8999}}, true};
  EXPECT_EQ(describe_match(m), "tcp syn ports 80,443,8000-8999");
  m = Match{{}, {{53, 53}}, false};
  EXPECT_EQ(describe_match(m), "tcp,udp port 53");
  m = Match{{Proto::Icmp, Proto::Icmp6}, {}, false};
  EXPECT_EQ(describe_match(m), "icmp,icmpv6");
}

}  // namespace
}  // namespace levee::cli
