// metrics_test.cpp - the Prometheus exposition (export/metrics.hpp) and `levee run`'s
// listen address.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/reasons.hpp"
#include "daemon/daemon.hpp"
#include "export/metrics.hpp"
#include "policy/config.hpp"

namespace levee {
namespace {

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
  ClassCounters dns{"dns \"quoted\"\\x\n", 1, {}, false};
  dns.counters.passed = {60, 3840};
  dns.counters.dropped = {30, 1920};
  ClassCounters def{"default", 0, {}, true};
  def.counters.passed = {40, 2560};
  s.classes = {dns, def};
  s.walk = WalkCounts{250, 10, 3, 4, 1'700'000'000'500'000'000ull, 0.25};
  DaemonHealth d;
  d.start_unix_ns = 1'700'000'000'000'000'000ull;
  d.reloads_ok = 2;
  d.reloads_failed = 1;
  d.last_reload_ok = false;
  d.last_success_unix_ns = 1'700'000'100'000'000'000ull;
  d.events = {{"banned", 4}, {"limited", 6}};
  d.events_suppressed = 1234;
  s.daemon = d;
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

}  // namespace
}  // namespace levee
