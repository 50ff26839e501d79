// metrics_test.cpp - the Prometheus exposition (export/metrics.hpp) and `levee run`'s
// listen address.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/reasons.hpp"
#include "daemon/daemon.hpp"
#include "daemon/health.hpp"
#include "daemon/metrics_server.hpp"
#include "export/metrics.hpp"
#include "policy/compile.hpp"
#include "policy/config.hpp"

namespace levee {
namespace {

constexpr uint64_t kSecNs = 1'000'000'000;
constexpr uint64_t kNowMono = 5'000 * kSecNs;
const char* const kDnsName = "dns \"quoted\"\\x\n";

// The policy's classes as the status reads them: dns with the autopilot (admission and
// escalation), engaged; default with neither.
void autopilot_classes(IfaceStatus& st) {
  ClassSpec dns;
  dns.name = kDnsName;
  dns.packets = {100, 10};
  ClassSpec def;
  def.name = "default";
  def.packets = {1000, 100};
  def.admission = Admission::Off;
  def.escalate = false;
  st.classes = {compile_class(dns, 4'000'000, 2), compile_class(def, 4'000'000, 2)};
  st.class_ids = {1, 0};
  st.now_ns = kNowMono;
  lv_guard g{};
  g.engaged_ns = kNowMono - 5 * kSecNs;
  g.last_over_ns = kNowMono - kSecNs;  // within release (30 s): not calm
  g.cost = 250'000;                    // 4,000 new sources/s, over the floor's 1,000
  g.baseline = (1000u << LV_GUARD_FP) + 8;
  g.engagements = 3;
  g.arrivals = 12'345;
  g.probation = 67;
  g.promoted = 60;
  g.good_admitted = 9;
  g.escalations = 2;
  lv_guard quiet{};
  quiet.arrivals = 99;  // a class without the autopilot: nothing of it is exported
  st.guards = {g, quiet};
}

// A snapshot with every part present: two classes, a walk, a daemon.
MetricsSnapshot full_snapshot() {
  MetricsSnapshot s;
  s.iface = "eth0";
  s.version = "9.9.9";
  s.status.mode = "native";
  s.status.prog_id = 42;
  s.status.generation = 7;
  s.status.max_sources = 1000;
  s.status.max_bans = 100;
  s.status.policy_flags = LV_POL_MONITOR;
  s.status.admitted = {5, 0};
  s.counters.by_reason[LV_R_CONFORMING] = {100, 6400};
  s.counters.by_reason[LV_R_RATE] = {30, 1920};
  s.counters.would[LV_R_RATE] = {3, 192};
  ClassCounters dns{kDnsName, 1, {}, false};
  dns.counters.passed = {60, 3840};
  dns.counters.dropped = {30, 1920};
  ClassCounters def{"default", 0, {}, true};
  def.counters.passed = {40, 2560};
  s.classes = {dns, def};
  autopilot_classes(s.status);
  WalkCounts w;  // by name: the order of its fields is not the point
  w.sources = 250;
  w.networks = 10;
  w.bans_active = 3;
  w.ban_records = 4;
  w.probation = 7;
  w.watched = 12;
  w.escalated = 2;
  w.marked = 5;
  w.at_unix_ns = 1'700'000'000'500'000'000ull;
  w.seconds = 0.25;
  s.walk = w;
  DaemonHealth d;
  d.start_unix_ns = 1'700'000'000'000'000'000ull;
  d.reloads_ok = 2;
  d.reloads_failed = 1;
  d.last_reload_ok = false;
  d.last_success_unix_ns = 1'700'000'100'000'000'000ull;
  d.events = {{"banned", 4}, {"limited", 6}};
  d.events_suppressed = 1234;
  d.known_good_marked = 42;
  d.known_good_capped = 3;
  d.tc_restores = 1;
  d.good = GoodFilterHealth{.fill = 0.25, .false_positive = 0.004, .ageings = 5, .early_ageings = 2};
  s.daemon = d;
  s.counters.marks_capped = 11;
  IfaceStatus::SynAuth syn;
  syn.proxying = true;
  syn.tc = {0x1ee, 1};
  syn.tc_present = true;
  syn.tcp_off = LV_TCP_OFF_TS;
  s.status.syn = syn;
  BouncerHealth b;
  b.held[0][0] = 100;
  b.held[1][1] = 2;
  b.up = true;
  b.last_pull_unix_ns = 1'700'000'200'000'000'000ull;
  b.pulls = 9;
  b.pull_errors = 1;
  b.applied = 103;
  b.removed = 1;
  s.bouncer = b;
  PublisherHealth pub;
  pub.up = true;
  pub.published = 7;
  pub.errors = 2;
  pub.queued = 3;
  pub.dropped_full = 1;
  pub.dropped_expired = 4;
  pub.last_publish_unix_ns = 1'700'000'300'000'000'000ull;
  s.publisher = pub;
  return s;
}

struct Family {
  std::string type;
  std::set<std::string> labels;  // label names, iface included
  std::vector<std::string> samples;
};

// Parses the exposition enough to check its structure: every sample's family was
// announced by # TYPE just before, once.
std::map<std::string, Family> families(const std::string& text) {
  std::map<std::string, Family> out;
  std::stringstream ss(text);
  std::string line, current;
  while (std::getline(ss, line)) {
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::stringstream t(line.substr(7));
      std::string name, type;
      t >> name >> type;
      EXPECT_EQ(out.count(name), 0u) << name << " announced twice";
      out[name].type = type;
      current = name;
      continue;
    }
    const auto brace = line.find('{');
    EXPECT_NE(brace, std::string::npos) << line;
    EXPECT_EQ(line.substr(0, brace), current) << "a sample outside its family: " << line;
    Family& f = out[current];
    f.samples.push_back(line);
    // Label names: what precedes each =" outside quoted values.
    bool quoted = false;
    std::string name;
    for (size_t i = brace + 1; i < line.size() && (quoted || line[i] != '}'); ++i) {
      const char c = line[i];
      if (quoted) {
        if (c == '\\')
          ++i;
        else if (c == '"')
          quoted = false;
      } else if (c == '=') {
        f.labels.insert(name);
        name.clear();
      } else if (c == '"') {
        quoted = true;
      } else if (c != ',') {
        name += c;
      }
    }
  }
  return out;
}

TEST(Metrics, EveryFamilyOnceWithTheNamesTypesAndLabelsThePackagingListsAndNoOther) {
  const auto fams = families(render_metrics(full_snapshot()));
  // tests/install/metrics.txt: the list the Grafana dashboard is checked against.
  std::ifstream in(std::string(LEVEE_SOURCE_DIR) + "/tests/install/metrics.txt");
  ASSERT_TRUE(in) << "tests/install/metrics.txt";
  std::set<std::string> listed;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream ls(line);
    std::string name, type, label;
    ls >> name >> type;
    std::set<std::string> labels{"iface"};
    while (ls >> label) labels.insert(label);
    listed.insert(name);
    auto it = fams.find(name);
    ASSERT_NE(it, fams.end()) << name << " is listed but not served";
    EXPECT_EQ(it->second.type, type) << name;
    EXPECT_EQ(it->second.labels, labels) << name;
    EXPECT_FALSE(it->second.samples.empty()) << name;
    // Conventions: counters end in _total, nothing else does.
    EXPECT_EQ(type == "counter", name.size() > 6 && name.substr(name.size() - 6) == "_total") << name;
  }
  for (const auto& [name, f] : fams) EXPECT_TRUE(listed.count(name)) << name << " is served but not listed";
}

// SYN authentication's proxy and the known-good filter: the tc filter's presence, the
// options offered, the marks left out by who proved them, the filter's fill, its
// estimated false positives and its ageings by kind.
TEST(Metrics, TheSynProxyAndTheKnownGoodFilterAreSeries) {
  MetricsSnapshot s = full_snapshot();
  std::string text = render_metrics(s);
  auto has = [&](const std::string& line) { return text.find(line + "\n") != std::string::npos; };
  EXPECT_TRUE(has("levee_syn_proxying{iface=\"eth0\"} 1")) << text;
  EXPECT_TRUE(has("levee_syn_tc_filter_present{iface=\"eth0\"} 1"));
  EXPECT_TRUE(has("levee_syn_tcp_option_offered{iface=\"eth0\",option=\"timestamps\"} 0"));
  EXPECT_TRUE(has("levee_syn_tcp_option_offered{iface=\"eth0\",option=\"sack\"} 1"));
  EXPECT_TRUE(has("levee_known_good_marks_capped_total{iface=\"eth0\",by=\"syn_auth\"} 11"));
  EXPECT_TRUE(has("levee_known_good_marks_capped_total{iface=\"eth0\",by=\"walk\"} 3"));
  EXPECT_TRUE(has("levee_known_good_fill{iface=\"eth0\"} 0.25"));
  EXPECT_TRUE(has("levee_known_good_false_positive_ratio{iface=\"eth0\"} 0.004"));
  EXPECT_TRUE(has("levee_known_good_ageings_total{iface=\"eth0\",kind=\"scheduled\"} 3"));
  EXPECT_TRUE(has("levee_known_good_ageings_total{iface=\"eth0\",kind=\"early\"} 2"));
  EXPECT_TRUE(has("levee_filter_recoveries_total{iface=\"eth0\",action=\"tc_filter\"} 1"));
  s.status.syn->tc_present = false;
  s.status.syn->proxying = false;
  text = render_metrics(s);
  EXPECT_TRUE(has("levee_syn_tc_filter_present{iface=\"eth0\"} 0")) << "the filter removed";
  EXPECT_TRUE(has("levee_syn_proxying{iface=\"eth0\"} 0"));
  s.status.syn.reset();
  text = render_metrics(s);
  EXPECT_EQ(text.find("levee_syn_proxying"), std::string::npos) << "no class with syn_auth";
}

TEST(Metrics, ReasonsAreCountedUnderTheirVerdictAndZerosArePresent) {
  const std::string text = render_metrics(full_snapshot());
  EXPECT_NE(text.find("levee_packets_total{iface=\"eth0\",verdict=\"passed\",reason=\"conforming\"} 100\n"),
            std::string::npos);
  EXPECT_NE(text.find("levee_packets_total{iface=\"eth0\",verdict=\"dropped\",reason=\"rate\"} 30\n"),
            std::string::npos);
  EXPECT_NE(text.find("levee_bytes_total{iface=\"eth0\",verdict=\"dropped\",reason=\"rate\"} 1920\n"),
            std::string::npos);
  // A reason with nothing counted yet is a series at 0, under the verdict it gives.
  EXPECT_NE(text.find("levee_packets_total{iface=\"eth0\",verdict=\"dropped\",reason=\"admission\"} 0\n"),
            std::string::npos);
  const auto fams = families(text);
  EXPECT_EQ(fams.at("levee_packets_total").samples.size(), kReasons.size());
  EXPECT_NE(text.find("levee_would_drop_packets_total{iface=\"eth0\",reason=\"rate\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("levee_monitor{iface=\"eth0\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("levee_info{iface=\"eth0\",version=\"9.9.9\",xdp_mode=\"native\",program_id=\"42\"} 1\n"),
            std::string::npos);
}

TEST(Metrics, ClassNamesAreEscapedAndGaugesComeFromTheWalkAndTheDaemon) {
  const std::string text = render_metrics(full_snapshot());
  EXPECT_NE(
      text.find(
          "levee_class_packets_total{iface=\"eth0\",class=\"dns \\\"quoted\\\"\\\\x\\n\",verdict=\"dropped\"} 30\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("levee_class_admitted_sources_total{iface=\"eth0\",class=\"default\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("levee_sources{iface=\"eth0\"} 250\n"), std::string::npos);
  EXPECT_NE(text.find("levee_state_fill_ratio{iface=\"eth0\"} 0.26\n"), std::string::npos);
  EXPECT_NE(text.find("levee_bans_active{iface=\"eth0\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("levee_reloads_total{iface=\"eth0\",result=\"failure\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("levee_config_last_reload_success{iface=\"eth0\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("levee_config_last_reload_success_timestamp_seconds{iface=\"eth0\"} 1700000100\n"),
            std::string::npos);
  EXPECT_NE(text.find("levee_events_total{iface=\"eth0\",type=\"map_full\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("levee_events_total{iface=\"eth0\",type=\"limited\"} 6\n"), std::string::npos);
  EXPECT_NE(text.find("levee_events_suppressed_total{iface=\"eth0\"} 1234\n"), std::string::npos);
}

TEST(Metrics, WithoutAWalkOrADaemonTheirFamiliesAreLeftOut) {
  MetricsSnapshot s = full_snapshot();
  s.walk.reset();
  s.daemon.reset();
  const auto fams = families(render_metrics(s));
  EXPECT_EQ(fams.count("levee_sources"), 0u);
  EXPECT_EQ(fams.count("levee_reloads_total"), 0u);
  EXPECT_EQ(fams.count("levee_packets_total"), 1u);
  EXPECT_EQ(fams.count("levee_sources_max"), 1u);
}

TEST(Metrics, TheAutopilotOfEachClassThatHasIt) {
  const std::string text = render_metrics(full_snapshot());
  const std::string dns = "{iface=\"eth0\",class=\"dns \\\"quoted\\\"\\\\x\\n\"} ";
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"levee_autopilot_engaged", "1"},
                                                        {"levee_autopilot_threshold_sources_per_second", "4000"},
                                                        {"levee_autopilot_baseline_sources_per_second", "1000.5"},
                                                        {"levee_autopilot_engagements_total", "3"},
                                                        {"levee_autopilot_arrivals_total", "12345"},
                                                        {"levee_autopilot_probation_total", "67"},
                                                        {"levee_autopilot_promoted_total", "60"},
                                                        {"levee_autopilot_known_good_admitted_total", "9"},
                                                        {"levee_autopilot_escalations_total", "2"}}) {
    EXPECT_NE(text.find(name + dns + value + "\n"), std::string::npos) << name << "\n" << text;
    // The class without the autopilot has none of its series.
    EXPECT_EQ(text.find(name + "{iface=\"eth0\",class=\"default\"}"), std::string::npos) << name;
  }
  const auto fams = families(text);
  EXPECT_EQ(fams.at("levee_autopilot_engaged").type, "gauge");
  EXPECT_EQ(fams.at("levee_autopilot_threshold_sources_per_second").type, "gauge");
  EXPECT_EQ(fams.at("levee_autopilot_baseline_sources_per_second").type, "gauge");
  EXPECT_EQ(fams.at("levee_autopilot_arrivals_total").type, "counter");
  EXPECT_EQ(fams.at("levee_autopilot_engaged").samples.size(), 1u);
  // From the walk and the daemon.
  EXPECT_NE(text.find("levee_sources_on_probation{iface=\"eth0\"} 7\n"), std::string::npos);
  EXPECT_NE(text.find("levee_watched_networks{iface=\"eth0\"} 12\n"), std::string::npos);
  EXPECT_NE(text.find("levee_escalated_networks{iface=\"eth0\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("levee_known_good_marked_total{iface=\"eth0\"} 42\n"), std::string::npos);
  EXPECT_EQ(fams.at("levee_sources_on_probation").type, "gauge");
  EXPECT_EQ(fams.at("levee_known_good_marked_total").type, "counter");
  // The autopilot's events are counted by type, at 0 before the first.
  EXPECT_NE(text.find("levee_events_total{iface=\"eth0\",type=\"engaged\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("levee_events_total{iface=\"eth0\",type=\"deescalated\"} 0\n"), std::string::npos);
}

TEST(Metrics, TheAutopilotEngagedGaugeFollowsGuardH) {
  MetricsSnapshot s = full_snapshot();
  const std::string dns = "{iface=\"eth0\",class=\"dns \\\"quoted\\\"\\\\x\\n\"} ";
  // Calm for release (30 s) since the last abnormal arrival: released, whatever
  // engaged_ns still says.
  s.status.guards[0].last_over_ns = kNowMono - 31 * kSecNs;
  std::string text = render_metrics(s);
  EXPECT_NE(text.find("levee_autopilot_engaged" + dns + "0\n"), std::string::npos) << text;
  // Abnormal, not engaged.
  s.status.guards[0].last_over_ns = kNowMono - kSecNs;
  s.status.guards[0].engaged_ns = 0;
  text = render_metrics(s);
  EXPECT_NE(text.find("levee_autopilot_engaged" + dns + "0\n"), std::string::npos) << text;
  // No learnt threshold yet: the floor's.
  s.status.guards[0].cost = 0;
  text = render_metrics(s);
  EXPECT_NE(text.find("levee_autopilot_threshold_sources_per_second" + dns + "1000\n"), std::string::npos) << text;
}

TEST(Metrics, WithoutAClassWithTheAutopilotItsFamiliesAreLeftOut) {
  MetricsSnapshot s = full_snapshot();
  for (lv_class& k : s.status.classes) k.flags &= ~uint32_t{LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE};
  const auto fams = families(render_metrics(s));
  for (const auto& [name, f] : fams) EXPECT_NE(name.rfind("levee_autopilot_", 0), 0u) << name;
  EXPECT_EQ(fams.count("levee_sources_on_probation"), 1u) << "the walk's counts stay";
}

TEST(Metrics, KnownGoodMarksAreSummedOverWalks) {
  daemon::Health h;
  WalkCounts w;
  w.marked = 3;
  h.walked(w);
  w.marked = 4;
  h.walked(w);
  MetricsSnapshot s;
  h.read(s);
  ASSERT_TRUE(s.daemon && s.walk);
  EXPECT_EQ(s.daemon->known_good_marked, 7u);
  EXPECT_EQ(s.walk->marked, 4u) << "the walk's own count is the last walk's";
}

TEST(ListenAddress, PortAloneIsLoopbackAndHostsMayBeGiven) {
  using P = std::pair<std::string, uint16_t>;
  EXPECT_EQ(parse_listen_address("9740").value(), P("127.0.0.1", 9740));
  EXPECT_EQ(parse_listen_address(":9740").value(), P("127.0.0.1", 9740));
  EXPECT_EQ(parse_listen_address("0.0.0.0:80").value(), P("0.0.0.0", 80));
  EXPECT_EQ(parse_listen_address("[::1]:9740").value(), P("::1", 9740));
  EXPECT_EQ(parse_listen_address("localhost:65535").value(), P("localhost", 65535));
  for (const char* bad : {"", "0", "65536", "abc", "::1:9740", "[::1]9740", "1.2.3.4:", "1.2.3.4:-1", "999999"}) {
    auto r = parse_listen_address(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_TRUE(r.error().usage) << bad;
  }
}

// What levee run prints for --metrics, and what its error names: an IPv6 host in
// brackets, as a URL must have it.
TEST(ListenAddress, UrlsAndAddressesPutAnIpv6HostInBrackets) {
  using daemon::listen_address_text;
  using daemon::metrics_url;
  EXPECT_EQ(metrics_url("::1", 9740), "http://[::1]:9740/metrics");
  EXPECT_EQ(metrics_url("2001:db8::7", 80), "http://[2001:db8::7]:80/metrics");
  EXPECT_EQ(metrics_url("127.0.0.1", 9740), "http://127.0.0.1:9740/metrics");
  EXPECT_EQ(metrics_url("localhost", 9740), "http://localhost:9740/metrics");
  EXPECT_EQ(listen_address_text("::1", 9740), "[::1]:9740");
  // What is printed parses back to the same host and port.
  for (const char* host : {"::1", "2001:db8::7", "0.0.0.0"}) {
    auto back = parse_listen_address(listen_address_text(host, 9740));
    ASSERT_TRUE(back) << host;
    EXPECT_EQ(back->first, host);
    EXPECT_EQ(back->second, 9740);
  }
}

}  // namespace
}  // namespace levee
