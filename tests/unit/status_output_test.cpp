// status_output_test.cpp - what `levee status` prints, text and JSON: each class with
// its match, limits and the limits beyond a source's rate (admission, network, total,
// bans), the modes, the map's fill and when-full policy, and an interface that cannot be
// read beside the others.
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
  EXPECT_EQ(j["monitor"], "mixed");
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
