// config_test.cpp - userspace/policy/config: the TOML config file into a validated
// Policy: the shipped example, every key's effect (the limits per source, new-source
// admission and the autopilot's [auto], network and class totals, bans, modes,
// [defaults], [interface]), and every way to get a file wrong.
#include "policy/config.hpp"
#include "policy/compile.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>
#include <chrono>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "export/render_policy.hpp"
#include "rules.h"
#include "unit.hpp"

namespace levee {
namespace {

const std::string kFile = "t.toml";

Result<Policy> parse(const std::string& text) { return parse_config(text, kFile, kConfigNow); }

size_t class_index(const Policy& p, const std::string& name) {
  for (size_t i = 0; i < p.classes.size(); ++i)
    if (p.classes[i].name == name) return i;
  ADD_FAILURE() << "no class " << name;
  return 0;
}

const ClassSpec& named(const Policy& p, const std::string& name) { return p.classes[class_index(p, name)]; }

// ---- the shipped example ----------------------------------------------------------

TEST(ConfigExample, ParsesValidatesAndCompiles) {
  auto r = load_config(LEVEE_SOURCE_DIR "/examples/levee.toml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  const Policy& p = *r;
  EXPECT_EQ(p.source, LEVEE_SOURCE_DIR "/examples/levee.toml");
  ASSERT_EQ(p.classes.size(), 9u);
  EXPECT_EQ(p.classes.back().name, "default");
  EXPECT_EQ(p.classes[class_index(p, "reflection")].match.sports.size(), 6u);
  EXPECT_EQ(p.classes[class_index(p, "smtp")].syn_auth, SynAuth::Cookie);
  EXPECT_EQ(p.classes[class_index(p, "web")].syn_auth_in_force(), SynAuth::Auto) << "unset: auto where it fits";
  EXPECT_EQ(p.iface.mode, LV_MODE_AUTO);
  EXPECT_EQ(p.iface.max_sources, 1'000'000u);

  const size_t ssh = class_index(p, "ssh-syn");
  EXPECT_EQ(p.classes[ssh].prefix4, 24u);
  EXPECT_EQ(p.classes[ssh].prefix6, 48u);
  EXPECT_EQ(p.classes[class_index(p, "dns")].prefix4, 32u) << "from [defaults]";
  EXPECT_EQ(p.classes[class_index(p, "dns")].bytes, (Rate{256'000, 64'000}));
  EXPECT_EQ(p.classes[class_index(p, "web")].packets, (Rate{20'000, 2'000}));
  // The limits beyond a source's rate, one example of each.
  EXPECT_EQ(p.iface.max_bans, 64'000u);
  EXPECT_FALSE(p.iface.refuse_full);
  EXPECT_FALSE(p.deny_in_monitor);
  const ClassSpec& syn = p.classes[class_index(p, "web-syn")];
  EXPECT_EQ(syn.new_sources, (Rate{1'000, 200}));
  EXPECT_EQ(syn.admission, Admission::Budget);
  // Every other class has the autopilot, with [auto]'s defaults (the file's [auto] is a
  // comment), and escalates.
  EXPECT_TRUE(p.autop == AutoSpec{});
  for (const ClassSpec& c : p.classes) {
    EXPECT_EQ(c.admission, &c == &syn ? Admission::Budget : Admission::Auto) << c.name;
    EXPECT_TRUE(c.escalate) << c.name;
    EXPECT_TRUE(c.autop == AutoSpec{}) << c.name;
  }
  EXPECT_EQ(syn.ban.ban_ns, 2 * kSec);
  EXPECT_EQ(syn.ban.max_ns, 600 * kSec);
  EXPECT_EQ(syn.ban.forget_ns, 3600 * kSec);
  EXPECT_FALSE(syn.ban.all_classes);
  const NetworkLimit& dns_net = p.classes[class_index(p, "dns")].network;
  EXPECT_EQ(dns_net.packets, (Rate{5'000, 500}));
  EXPECT_EQ(dns_net.prefix4, 24u);
  EXPECT_EQ(p.classes[class_index(p, "icmp")].total.packets, (Rate{2'000, 500}));
  for (const ClassSpec& c : p.classes) EXPECT_FALSE(c.monitor) << c.name;

  // Which class each kind of packet lands in.
  auto t = std::make_unique<lv_class_table>();
  compile_table(p.classes, *t);
  const size_t def = p.classes.size() - 1;
  EXPECT_EQ(t->by_port[LV_L4_UDP][53], class_index(p, "dns"));
  EXPECT_EQ(t->by_port[LV_L4_TCP][53], class_index(p, "dns-tcp"));
  EXPECT_EQ(t->by_port[LV_L4_TCP_SYN][53], class_index(p, "dns-tcp"));
  EXPECT_EQ(t->by_port[LV_L4_TCP_SYN][22], ssh);
  EXPECT_EQ(t->by_port[LV_L4_TCP][22], def) << "established SSH";
  EXPECT_EQ(t->by_port[LV_L4_TCP_SYN][443], class_index(p, "web-syn"));
  EXPECT_EQ(t->by_port[LV_L4_TCP][443], class_index(p, "web"));
  EXPECT_EQ(t->by_port[LV_L4_TCP][80], class_index(p, "web"));
  EXPECT_EQ(t->by_port[LV_L4_UDP][443], def);
  EXPECT_EQ(t->by_port[LV_L4_UDP][54], def);
  EXPECT_EQ(t->by_kind[LV_L4_ICMP], class_index(p, "icmp"));
  EXPECT_EQ(t->by_kind[LV_L4_ICMP6], class_index(p, "icmp"));
  EXPECT_EQ(t->by_kind[LV_L4_OTHER], def);
  EXPECT_EQ(t->by_sport[LV_L4_UDP][123], class_index(p, "reflection"));
  EXPECT_EQ(t->by_sport[LV_L4_UDP][124], LV_NO_SPORT_CLASS);
  EXPECT_EQ(t->by_sport[LV_L4_TCP][123], LV_NO_SPORT_CLASS);

  // Lists: 2 allow, 2 deny (one expiring in 7 days), 2 override networks.
  ASSERT_EQ(p.lists.size(), 6u);
  size_t expiring = 0;
  for (const ListEntry& e : p.lists) {
    EXPECT_EQ(e.origin, LV_ORIGIN_CONFIG);
    EXPECT_GT(e.where.line, 0u);
    if (e.expires_unix_ns) ++expiring;
  }
  EXPECT_EQ(expiring, 1u);
  ASSERT_EQ(p.overrides.size(), 1u);
  EXPECT_EQ(p.overrides[0].classes, (std::vector<std::string>{"web-syn", "web"}));

  const Clocks clk{4'000'000, kConfigNow, 1000 * kSec};
  auto c = std::make_unique<CompiledPolicy>(compile(p, clk));
  EXPECT_EQ(c->slot.nr_classes, 9u);
  EXPECT_TRUE(c->slot.classes[class_index(p, "smtp")].flags & LV_CLASS_SYN_AUTH);
  EXPECT_EQ(c->slot.nr_overrides, 1u);
  EXPECT_EQ(c->slot.nr_list4, 4u);
  EXPECT_EQ(c->slot.nr_list6, 2u);
  EXPECT_EQ(c->slot.overrides[0].classes,
            (uint64_t{1} << class_index(p, "web-syn")) | (uint64_t{1} << class_index(p, "web")));
  EXPECT_STREQ(c->slot.classes[ssh].name, "ssh-syn");
  EXPECT_EQ(c->slot.classes[ssh].pkt.rate, 2u);
}

TEST(ConfigExample, ItsCommentedAutoTableShowsTheDefaults) {
  std::ifstream in(LEVEE_SOURCE_DIR "/examples/levee.toml");
  std::string line, table;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == "# [auto]") inside = true;
    if (!inside) continue;
    if (line.rfind("# ", 0) != 0) break;
    table += line.substr(2) + "\n";
  }
  ASSERT_NE(table.find("known_good_for"), std::string::npos) << table;
  Policy p = parse_ok(table + kDefault);
  EXPECT_TRUE(p.autop == AutoSpec{}) << table;
  EXPECT_EQ(p.autop.where.line, 1u) << "read, not left out";
}

// ---- every key's effect -----------------------------------------------------------

TEST(Config, SmallestFileIsOneDefaultClass) {
  Policy p = parse_ok(kDefault);
  ASSERT_EQ(p.classes.size(), 1u);
  const ClassSpec& c = p.classes[0];
  EXPECT_EQ(c.name, "default");
  EXPECT_TRUE(c.match.empty());
  EXPECT_EQ(c.packets, (Rate{100, 10}));
  EXPECT_FALSE(c.bytes.set());
  EXPECT_EQ(c.prefix4, 32u);
  EXPECT_EQ(c.prefix6, 64u);
  EXPECT_EQ(c.where.line, 1u);
  EXPECT_EQ(c.where.key, "default");
  EXPECT_EQ(p.source, kFile);
  EXPECT_FALSE(p.iface.mode);
  EXPECT_FALSE(p.iface.max_sources);
  EXPECT_TRUE(p.lists.empty());
  EXPECT_TRUE(p.overrides.empty());
}

TEST(Config, Interface) {
  for (auto [text, mode] :
       {std::pair{"auto", LV_MODE_AUTO}, std::pair{"native", LV_MODE_NATIVE}, std::pair{"generic", LV_MODE_GENERIC}}) {
    Policy p = parse_ok(fmt::format("[interface]\nmode = \"{}\"\n", text) + kDefault);
    EXPECT_EQ(p.iface.mode, mode) << text;
  }
  EXPECT_EQ(parse_ok("[interface]\nmax_sources = \"2.5M\"\n" + kDefault).iface.max_sources, 2'500'000u);
  EXPECT_EQ(parse_ok("[interface]\nmax_sources = 4096\n" + kDefault).iface.max_sources, 4096u);
}

TEST(Config, CountsAreIntegersOrStringsWithSuffixes) {
  Policy p = parse_ok("[default]\nrate = \"1.5k\"\nburst = 7\nbytes_rate = \"2G\"\nbytes_burst = \"64k\"\n");
  EXPECT_EQ(p.classes[0].packets, (Rate{1500, 7}));
  EXPECT_EQ(p.classes[0].bytes, (Rate{2'000'000'000, 64'000}));
  // Bytes alone.
  p = parse_ok("[default]\nbytes_rate = \"1M\"\nbytes_burst = 1500\n");
  EXPECT_FALSE(p.classes[0].packets.set());
  EXPECT_EQ(p.classes[0].bytes, (Rate{1'000'000, 1500}));
}

TEST(Config, DefaultsAreInheritedUnlessAClassSetsItsOwn) {
  Policy p = parse_ok(R"(
[defaults]
prefix4 = 28
prefix6 = 56
[[class]]
name = "a"
match.proto = "udp"
rate = 1
burst = 1
[[class]]
name = "b"
match.proto = "tcp"
rate = 1
burst = 1
prefix4 = 24
prefix6 = 48
[default]
rate = 1
burst = 1
)");
  ASSERT_EQ(p.classes.size(), 3u);
  EXPECT_EQ(p.classes[0].prefix4, 28u);
  EXPECT_EQ(p.classes[0].prefix6, 56u);
  EXPECT_EQ(p.classes[1].prefix4, 24u);
  EXPECT_EQ(p.classes[1].prefix6, 48u);
  EXPECT_EQ(p.classes[2].prefix4, 28u) << "the default class inherits too";
  EXPECT_EQ(p.classes[2].prefix6, 56u);
  // Without [defaults], a class's own prefix still applies and the rest is /32, /64.
  p = parse_ok("[default]\nrate = 1\nburst = 1\nprefix6 = 128\n");
  EXPECT_EQ(p.classes[0].prefix4, 32u);
  EXPECT_EQ(p.classes[0].prefix6, 128u);
}

TEST(Config, ClassesInOrderThenTheDefault) {
  Policy p = parse_ok(R"(
[default]
name = "rest"
rate = 1
burst = 1

[[class]]
name = "first"
match.proto = "udp"
rate = 10
burst = 5

[[class]]
name = "second"
match.proto = ["tcp", "icmp", "icmpv6", "other", "tcp"]
rate = 20
burst = 6
)");
  ASSERT_EQ(p.classes.size(), 3u);
  EXPECT_EQ(p.classes[0].name, "first");
  EXPECT_EQ(p.classes[0].where.key, "class[0]");
  EXPECT_EQ(p.classes[0].where.line, 7u);
  EXPECT_EQ(p.classes[0].match.protos, std::vector<Proto>{Proto::Udp});
  EXPECT_EQ(p.classes[1].name, "second");
  EXPECT_EQ(p.classes[1].match.protos, (std::vector<Proto>{Proto::Tcp, Proto::Icmp, Proto::Icmp6, Proto::Other}))
      << "duplicates dropped";
  EXPECT_EQ(p.classes[2].name, "rest");
  EXPECT_EQ(p.classes[2].where.key, "default");
}

TEST(Config, MatchPortsAndSyn) {
  Policy p = parse_ok(R"(
[[class]]
name = "a"
match.port = [53, "1000-2000", "8080"]
rate = 1
burst = 1
[[class]]
name = "b"
match.syn = true
rate = 1
burst = 1
[[class]]
name = "c"
match = { proto = "tcp", port = "0-65535", syn = true }
rate = 1
burst = 1
[[class]]
name = "d"
rate = 1
burst = 1
[class.match]
proto = "udp"
port = 65535
)" + kDefault);
  ASSERT_EQ(p.classes.size(), 5u);
  EXPECT_EQ(p.classes[0].match.ports, (std::vector<PortRange>{{53, 53}, {1000, 2000}, {8080, 8080}}));
  EXPECT_TRUE(p.classes[0].match.protos.empty());
  EXPECT_FALSE(p.classes[0].match.syn);
  EXPECT_TRUE(p.classes[1].match.syn);
  EXPECT_TRUE(p.classes[1].match.ports.empty());
  EXPECT_EQ(p.classes[2].match.ports, (std::vector<PortRange>{{0, 65535}}));
  EXPECT_TRUE(p.classes[2].match.syn);
  EXPECT_EQ(p.classes[3].match.protos, std::vector<Proto>{Proto::Udp});
  EXPECT_EQ(p.classes[3].match.ports, (std::vector<PortRange>{{65535, 65535}}));

  auto t = std::make_unique<lv_class_table>();
  compile_table(p.classes, *t);
  EXPECT_EQ(t->by_port[LV_L4_UDP][1500], 0);
  EXPECT_EQ(t->by_port[LV_L4_TCP_SYN][22], 1);
  EXPECT_EQ(t->by_port[LV_L4_TCP][22], 4);
  EXPECT_EQ(t->by_port[LV_L4_UDP][65535], 3);
}

// Reflection: a class of source ports holds what UDP services send, whatever port it is
// sent to; a class placed before it keeps its own packets.
TEST(Config, MatchSourcePorts) {
  Policy p = parse_ok(R"(
[[class]]
name = "dns-server"
match = { proto = "udp", port = 53 }
rate = 1
burst = 1
[[class]]
name = "reflection"
match = { proto = "udp", sport = [19, 53, 123, 389, 1900, 11211] }
rate = 1
burst = 1
)" + kDefault);
  const ClassSpec& r = p.classes[1];
  EXPECT_TRUE(r.match.ports.empty());
  EXPECT_EQ(r.match.sports.size(), 6u);
  EXPECT_EQ(describe_match(r.match), "udp sports 19,53,123,389,1900,11211");
  auto c = std::make_unique<CompiledPolicy>(compile(p, Clocks{kTick, kConfigNow, 1000 * kSec}));
  const lv_policy& s = c->slot;
  EXPECT_TRUE(s.flags & LV_POL_SPORT);
  EXPECT_EQ(lv_class_of(&s.table, s.flags, LV_L4_UDP, 40000, 123), 1u) << "an NTP reply to any port";
  EXPECT_EQ(lv_class_of(&s.table, s.flags, LV_L4_UDP, 53, 123), 0u) << "the class before it keeps port 53";
  EXPECT_EQ(lv_class_of(&s.table, s.flags, LV_L4_UDP, 40000, 124), 2u);
  EXPECT_EQ(lv_class_of(&s.table, s.flags, LV_L4_TCP, 40000, 123), 2u) << "udp only";
  EXPECT_EQ(lv_class_of(&s.table, s.flags, LV_L4_UDP_FRAG, 0, 0), 2u) << "a later fragment has no ports";
}

TEST(Config, Lists) {
  Policy p = parse_ok(kDefault + R"(
[lists]
allow = ["198.51.100.0/24", "2001:db8:1::/48", { cidr = "198.51.100.7" }]
deny = [
  "203.0.113.0/24",
  { cidr = "192.0.2.7", expires = "1h30m" },
  { cidr = "192.0.2.8/32", expires = 2026-12-01T00:00:00Z },
  { cidr = "2001:db8:dead::1", expires = 2026-01-01T03:00:00+02:00 },
]
)");
  ASSERT_EQ(p.lists.size(), 7u);
  const ListEntry& a = p.lists[0];
  EXPECT_EQ(a.kind, LV_LIST_ALLOW);
  EXPECT_EQ(a.cidr.to_string(), "198.51.100.0/24");
  EXPECT_EQ(a.origin, LV_ORIGIN_CONFIG);
  EXPECT_EQ(a.expires_unix_ns, 0u);
  EXPECT_EQ(a.where.line, 6u);
  EXPECT_EQ(a.where.key, "lists.allow[0]");
  EXPECT_EQ(p.lists[1].cidr.to_string(), "2001:db8:1::/48");
  EXPECT_EQ(p.lists[2].cidr.to_string(), "198.51.100.7/32") << "a bare address is a host";
  EXPECT_EQ(p.lists[3].kind, LV_LIST_DENY);
  EXPECT_EQ(p.lists[3].expires_unix_ns, 0u);
  EXPECT_EQ(p.lists[4].cidr.to_string(), "192.0.2.7/32");
  EXPECT_EQ(p.lists[4].expires_unix_ns, kConfigNow + 5400 * kSec);
  EXPECT_EQ(p.lists[4].where.line, 9u);
  EXPECT_EQ(p.lists[4].where.key, "lists.deny[1]");
  EXPECT_EQ(p.lists[5].expires_unix_ns, 1'796'083'200 * kSec);  // 2026-12-01T00:00:00Z
  EXPECT_EQ(p.lists[6].cidr.to_string(), "2001:db8:dead::1/128");
  EXPECT_EQ(p.lists[6].expires_unix_ns, kConfigNow + 3600 * kSec) << "03:00 at +02:00 is 01:00Z";
}

TEST(Config, Ipv4MappedListEntriesAndOverrideNetworksAreIpv4) {
  Policy p = parse_ok(kDefault + R"(
[lists]
deny = ["::ffff:198.19.1.200", { cidr = "::ffff:198.19.2.0/120", expires = "1h" }]
allow = ["::ffff:198.51.100.0/120"]
[[override]]
name = "partner"
networks = ["::ffff:198.18.100.0/120"]
rate = 10
burst = 10
)");
  std::vector<std::string> got;
  for (const ListEntry& e : p.lists) got.push_back(e.cidr.to_string());
  EXPECT_EQ(got, (std::vector<std::string>{"198.51.100.0/24", "198.19.1.200/32", "198.19.2.0/24", "198.18.100.0/24"}));
  ASSERT_EQ(p.overrides.size(), 1u);
  ASSERT_EQ(p.overrides[0].cidrs.size(), 1u);
  EXPECT_EQ(p.overrides[0].cidrs[0].family, 4);
  // Compiled into the IPv4 tries, where IPv4 packets look.
  auto c = std::make_unique<CompiledPolicy>(compile(p, Clocks{kTick, kConfigNow, kSec}));
  EXPECT_EQ(c->list4.size(), 4u);
  EXPECT_TRUE(c->list6.empty());
}

TEST(Config, Durations) {
  for (auto [text, secs] :
       {std::pair{"90s", 90ull}, std::pair{"30m", 1800ull}, std::pair{"2h", 7200ull}, std::pair{"7d", 604800ull},
        std::pair{"1d2h3m4s", 93784ull}, std::pair{"36500d", 36500ull * 86400}}) {
    Policy p =
        parse_ok(kDefault + fmt::format("[lists]\ndeny = [{{ cidr = \"192.0.2.1\", expires = \"{}\" }}]\n", text));
    ASSERT_EQ(p.lists.size(), 1u);
    EXPECT_EQ(p.lists[0].expires_unix_ns, kConfigNow + uint64_t(secs) * kSec) << text;
  }
}

TEST(Config, Overrides) {
  Policy p = parse_ok(R"(
[[class]]
name = "web"
match.port = 443
rate = 10
burst = 10
[default]
rate = 1
burst = 1
[[override]]
name = "partner"
networks = ["198.18.100.0/24", "2001:db8:2::/48"]
rate = "100k"
burst = "10k"
classes = ["web"]
[[override]]
name = "backup"
networks = ["198.18.200.0/24"]
bytes_rate = "1G"
bytes_burst = "10M"
)");
  ASSERT_EQ(p.overrides.size(), 2u);
  const OverrideSpec& o = p.overrides[0];
  EXPECT_EQ(o.name, "partner");
  EXPECT_EQ(o.packets, (Rate{100'000, 10'000}));
  EXPECT_FALSE(o.bytes.set());
  EXPECT_EQ(o.classes, std::vector<std::string>{"web"});
  ASSERT_EQ(o.cidrs.size(), 2u);
  EXPECT_EQ(o.cidrs[1].to_string(), "2001:db8:2::/48");
  EXPECT_EQ(o.where.key, "override[0]");
  EXPECT_EQ(o.where.line, 10u);
  EXPECT_TRUE(p.overrides[1].classes.empty()) << "all classes";
  EXPECT_EQ(p.overrides[1].bytes, (Rate{1'000'000'000, 10'000'000}));

  ASSERT_EQ(p.lists.size(), 3u);
  for (const ListEntry& e : p.lists) EXPECT_EQ(e.kind, LV_LIST_OVERRIDE);
  EXPECT_EQ(p.lists[0].override_name, "partner");
  EXPECT_EQ(p.lists[0].where.key, "override[0].networks[0]");
  EXPECT_EQ(p.lists[0].where.line, 12u);
  EXPECT_EQ(p.lists[2].override_name, "backup");

  auto c = std::make_unique<CompiledPolicy>(compile(p, Clocks{4'000'000, kConfigNow, kSec}));
  EXPECT_EQ(c->slot.overrides[0].classes, 1u);
  EXPECT_EQ(c->slot.overrides[1].classes, 3u);
}

TEST(Config, SixtyThreeClassesAndTheDefaultFit) {
  std::string text;
  for (int i = 0; i < LV_MAX_CLASSES - 1; ++i)
    text += fmt::format("[[class]]\nname = \"c{}\"\nmatch.port = {}\nrate = 1\nburst = 1\n", i, 1000 + i);
  Policy p = parse_ok(text + kDefault);
  EXPECT_EQ(p.classes.size(), size_t{LV_MAX_CLASSES});
}

TEST(Config, NowDefaultsToTheClock) {
  // An hour from the wall clock's reading, taken between the two here.
  const auto wall = [] {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
  };
  const uint64_t before = wall();
  auto r = parse_config(kDefault + "[lists]\ndeny = [{ cidr = \"192.0.2.1\", expires = \"1h\" }]\n", kFile);
  const uint64_t after = wall();
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_GE(r->lists[0].expires_unix_ns, before + 3600 * kSec);
  EXPECT_LE(r->lists[0].expires_unix_ns, after + 3600 * kSec);
}

// ---- the limits beyond a source's rate, modes, the interface ------------------------

TEST(ConfigAdmission, NewSourcesWithTheirBurst) {
  Policy p = parse_ok("[default]\nrate = 10\nburst = 5\nnew_sources = \"1k\"\nnew_sources_burst = 300\n");
  EXPECT_EQ(p.classes[0].new_sources, (Rate{1000, 300}));
  // The burst defaults to a tenth of a second's worth, at least one.
  EXPECT_EQ(parse_ok("[default]\nrate = 10\nburst = 5\nnew_sources = 250\n").classes[0].new_sources, (Rate{250, 25}));
  EXPECT_EQ(parse_ok("[default]\nrate = 10\nburst = 5\nnew_sources = 5\n").classes[0].new_sources, (Rate{5, 1}));
  EXPECT_EQ(p.classes[0].admission, Admission::Budget);
  // Left out: no budget, the autopilot.
  EXPECT_FALSE(parse_ok(kDefault).classes[0].new_sources.set());
  EXPECT_EQ(parse_ok(kDefault).classes[0].admission, Admission::Auto);
}

// ---- the autopilot: [auto], new_sources, escalate ------------------------------------

TEST(ConfigAutopilot, OnByDefault) {
  Policy p = parse_ok(kDefault);
  const ClassSpec& c = p.classes[0];
  EXPECT_EQ(c.admission, Admission::Auto);
  EXPECT_TRUE(c.escalate);
  const AutoSpec d;
  EXPECT_TRUE(c.autop == d);
  EXPECT_TRUE(p.autop == d);
  EXPECT_EQ(d.floor, 1000u);
  EXPECT_EQ(d.margin, 4u);
  EXPECT_EQ(d.burst_ns, 100 * kMs);
  EXPECT_EQ(d.sustain_ns, 250 * kMs);
  EXPECT_EQ(d.release_ns, 30 * kSec);
  EXPECT_EQ(d.network_prefix4, 16u);
  EXPECT_EQ(d.network_prefix6, 48u);
  EXPECT_EQ(d.network_sources, 64u);
  EXPECT_FALSE(d.network_rate);
  EXPECT_EQ(d.known_good_after_ns, 60 * kSec);
  EXPECT_EQ(d.known_good_for_ns, 24 * 3600 * kSec);
  const lv_class k = compile_class(c, kTick, 2);  // 100 pps, burst 10
  EXPECT_EQ(k.flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE | LV_CLASS_ADMIT),
            uint32_t{LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE});
  EXPECT_EQ(k.autop.floor_cost, 1'000'000u);
  EXPECT_EQ(k.autop.watch.rate, 6'400u);
  EXPECT_EQ(k.autop.watch.burst, 640u);
}

TEST(ConfigAutopilot, NewSourcesAutoOffOrANumberAndEscalate) {
  Policy p = parse_ok(R"([defaults]
new_sources = "off"
escalate = "off"
[[class]]
name = "auto"
match.port = 53
rate = 1
burst = 1
new_sources = "auto"
escalate = "auto"
[[class]]
name = "budget"
match.port = 54
rate = 1
burst = 1
new_sources = "2k"
[[class]]
name = "inherits"
match.port = 55
rate = 1
burst = 1
[default]
rate = 1
burst = 1
new_sources = 100
escalate = "auto"
)");
  const ClassSpec& a = named(p, "auto");
  EXPECT_EQ(a.admission, Admission::Auto);
  EXPECT_FALSE(a.new_sources.set());
  EXPECT_TRUE(a.escalate);
  const ClassSpec& b = named(p, "budget");
  EXPECT_EQ(b.admission, Admission::Budget);
  EXPECT_EQ(b.new_sources, (Rate{2'000, 200}));
  EXPECT_FALSE(b.escalate) << "from [defaults]";
  const ClassSpec& i = named(p, "inherits");
  EXPECT_EQ(i.admission, Admission::Off);
  EXPECT_FALSE(i.escalate);
  const ClassSpec& d = named(p, "default");
  EXPECT_EQ(d.admission, Admission::Budget);
  EXPECT_EQ(d.new_sources, (Rate{100, 10}));
  EXPECT_TRUE(d.escalate);

  auto flags = [&](const char* name) {
    return compile_class(named(p, name), kTick, 2).flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ADMIT | LV_CLASS_ESCALATE);
  };
  EXPECT_EQ(flags("auto"), uint32_t{LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE});
  EXPECT_EQ(flags("budget"), uint32_t{LV_CLASS_ADMIT}) << "a number: no autopilot";
  EXPECT_EQ(flags("inherits"), 0u);
  EXPECT_EQ(flags("default"), uint32_t{LV_CLASS_ADMIT | LV_CLASS_ESCALATE}) << "a budget may still escalate";

  // "off" alone.
  Policy q = parse_ok("[default]\nrate = 1\nburst = 1\nnew_sources = \"off\"\n");
  EXPECT_EQ(q.classes[0].admission, Admission::Off);
  EXPECT_FALSE(compile_class(q.classes[0], kTick, 2).flags & LV_CLASS_AUTO_ADMIT);
}

TEST(ConfigAutopilot, TheAutoTableAppliesToEveryClass) {
  Policy p = parse_ok(R"([auto]
floor = "5k"
margin = 8
burst = "2s"
sustain = "0s"
release = "2m"
network_prefix4 = 20
network_prefix6 = 40
network_sources = 16
known_good_after = "5m"
known_good_for = "7d"
[[class]]
name = "dns"
match.port = 53
rate = 100
burst = 10
prefix4 = 24
[default]
rate = 1000
burst = 100
)");
  const AutoSpec& a = p.autop;
  EXPECT_EQ(a.floor, 5'000u);
  EXPECT_EQ(a.margin, 8u);
  EXPECT_EQ(a.burst_ns, 2 * kSec);
  EXPECT_EQ(a.sustain_ns, 0u) << "0s: engage at the first abnormal arrival";
  EXPECT_EQ(a.release_ns, 120 * kSec);
  EXPECT_EQ(a.network_prefix4, 20u);
  EXPECT_EQ(a.network_prefix6, 40u);
  EXPECT_EQ(a.network_sources, 16u);
  EXPECT_FALSE(a.network_rate);
  EXPECT_EQ(a.known_good_after_ns, 300 * kSec);
  EXPECT_EQ(a.known_good_for_ns, 7 * 24 * 3600 * kSec);
  EXPECT_EQ(a.where.key, "auto");
  EXPECT_EQ(a.where.line, 1u);
  for (const ClassSpec& c : p.classes) EXPECT_TRUE(c.autop == a) << c.name;

  auto c = std::make_unique<CompiledPolicy>(compile(p, Clocks{kTick, kConfigNow, 1000 * kSec}));
  const lv_auto& dns = c->slot.classes[0].autop;
  EXPECT_EQ(dns.floor_cost, 200'000u) << "1e9 / 5000";
  EXPECT_EQ(dns.margin, 8u);
  EXPECT_EQ(dns.burst_ns, 2 * kSec);
  EXPECT_EQ(dns.sustain_ns, 0u);
  EXPECT_EQ(dns.release_ns, 120 * kSec);
  EXPECT_EQ(dns.watch.rate, 1'600u) << "16 sources' worth";
  EXPECT_EQ(dns.watch.burst, 160u);
  EXPECT_EQ(dns.watch_prefix4, 20);
  EXPECT_EQ(dns.watch_prefix6, 40);
  const lv_auto& def = c->slot.classes[1].autop;
  EXPECT_EQ(def.watch.rate, 16'000u);
  EXPECT_EQ(def.floor_cost, 200'000u);

  // An explicit network limit instead.
  Policy q = parse_ok("[auto]\nnetwork_rate = \"50k\"\nnetwork_burst = \"5k\"\nnetwork_sources = 8\n" + kDefault);
  EXPECT_EQ(q.autop.network_rate, (Rate{50'000, 5'000}));
  const lv_class k = compile_class(q.classes[0], kTick, 2);
  EXPECT_EQ(k.autop.watch.rate, 50'000u);
  EXPECT_EQ(k.autop.watch.burst, 5'000u);
  EXPECT_EQ(k.autop.network_sources, 0u) << "network_sources does not apply";
  // ...which lets a class without a per-source packet limit escalate too.
  Policy t = parse_ok("[auto]\nnetwork_rate = 500\nnetwork_burst = 50\n[default]\ntotal = { rate = 10, burst = 10 }\n");
  EXPECT_TRUE(compile_class(t.classes[0], kTick, 2).flags & LV_CLASS_ESCALATE);
  Policy u = parse_ok("[default]\ntotal = { rate = 10, burst = 10 }\n");
  EXPECT_FALSE(compile_class(u.classes[0], kTick, 2).flags & LV_CLASS_ESCALATE)
      << "escalate = \"auto\" without a network's limit: not an error, no escalation";
}

TEST(ConfigAutopilot, ARuleBetweenTwoKeysNamesTheOneGiven) {
  auto msg = [](const std::string& text) {
    auto r = parse(text);
    return r.ok() ? "(accepted)" : r.error().message();
  };
  EXPECT_EQ(msg("[auto]\nsustain = \"2s\"\nrelease = \"1s\"\n" + kDefault),
            "t.toml:3: auto.release: 1s is shorter than sustain, 2s; give release at least as long as sustain");
  EXPECT_EQ(msg("[auto]\nsustain = \"1h\"\n" + kDefault),
            "t.toml:2: auto.sustain: 1h is longer than release, 30s; give release at least as long as sustain");
  EXPECT_EQ(msg("[auto]\nknown_good_after = \"2d\"\n" + kDefault),
            "t.toml:2: auto.known_good_after: 2d is longer than known_good_for, 1d; give known_good_for at least as "
            "long as known_good_after");
  EXPECT_EQ(msg("[auto]\nknown_good_for = \"30s\"\n" + kDefault),
            "t.toml:2: auto.known_good_for: 30s is shorter than known_good_after, 1m; give known_good_for at least "
            "as long as known_good_after");
  EXPECT_EQ(msg("[auto]\nrelease = \"250ms\"\n" + kDefault),
            "t.toml:2: auto.release: 250ms is out of range; give 1s to 1d");
  EXPECT_EQ(msg("[auto]\nsustain = \"1s\"\nrelease = \"1s\"\n" + kDefault), "(accepted)") << "equal is enough";
}

TEST(ConfigNetwork, InlineTableWithDefaultPrefixes) {
  Policy p = parse_ok(R"([[class]]
name = "dns"
match.port = 53
rate = 100
burst = 10
network = { rate = "10k", burst = "1k" }
)" + kDefault);
  const NetworkLimit& n = named(p, "dns").network;
  EXPECT_TRUE(n.set());
  EXPECT_EQ(n.packets, (Rate{10'000, 1'000}));
  EXPECT_FALSE(n.bytes.set());
  EXPECT_EQ(n.prefix4, 24u);
  EXPECT_EQ(n.prefix6, 48u);
  EXPECT_EQ(n.where.line, 6u);
  EXPECT_EQ(n.where.key, "class[0].network");
  EXPECT_FALSE(named(p, "default").network.set());
}

TEST(ConfigNetwork, SubTableWithPrefixesAndBytes) {
  Policy p = parse_ok(R"([[class]]
name = "web"
match.port = 443
rate = 100
burst = 10
prefix6 = 56

[class.network]
prefix4 = 16
prefix6 = 40
bytes_rate = "10M"
bytes_burst = "1M"
)" + kDefault);
  const NetworkLimit& n = named(p, "web").network;
  EXPECT_EQ(n.prefix4, 16u);
  EXPECT_EQ(n.prefix6, 40u);
  EXPECT_FALSE(n.packets.set());
  EXPECT_EQ(n.bytes, (Rate{10'000'000, 1'000'000}));
  // Equal to the source prefix is allowed: every source is its own network.
  EXPECT_EQ(parse_ok("[default]\nrate = 1\nburst = 1\nprefix4 = 24\nprefix6 = 48\n"
                     "network = { prefix4 = 24, prefix6 = 48, rate = 5, burst = 5 }\n")
                .classes[0]
                .network.prefix4,
            24u);
}

TEST(ConfigTotal, PacketsAndBytes) {
  Policy p = parse_ok(
      "[default]\nrate = 10\nburst = 5\ntotal = { rate = \"50k\", burst = \"5k\", bytes_rate = \"1G\", "
      "bytes_burst = \"10M\" }\n");
  EXPECT_EQ(p.classes[0].total.packets, (Rate{50'000, 5'000}));
  EXPECT_EQ(p.classes[0].total.bytes, (Rate{1'000'000'000, 10'000'000}));
  // A class may have no per-source limit when it has a total or network limit.
  Policy q = parse_ok("[default]\ntotal = { rate = 100, burst = 100 }\n");
  EXPECT_FALSE(q.classes[0].per_source_limited());
  EXPECT_TRUE(q.classes[0].total.set());
}

TEST(ConfigBans, DurationsAndDefaults) {
  Policy p = parse_ok("[default]\nrate = 10\nburst = 5\nban = \"2s\"\n");
  const BanSpec& b = p.classes[0].ban;
  EXPECT_EQ(b.ban_ns, 2 * kSec);
  EXPECT_EQ(b.max_or_default(), 3600 * kSec) << "max(ban, 1h)";
  EXPECT_EQ(b.forget_or_default(), 3600 * kSec);
  EXPECT_FALSE(b.all_classes);
  EXPECT_EQ(b.where.key, "default.ban");
  EXPECT_EQ(b.where.line, 4u);

  const BanSpec c = parse_ok(
                        "[default]\nrate = 10\nburst = 5\nban = \"500ms\"\nban_max = \"1m\"\nforget_after = \"10m\"\n"
                        "ban_scope = \"all\"\n")
                        .classes[0]
                        .ban;
  EXPECT_EQ(c.ban_ns, 500 * kMs);
  EXPECT_EQ(c.max_or_default(), 60 * kSec);
  EXPECT_EQ(c.forget_or_default(), 600 * kSec);
  EXPECT_TRUE(c.all_classes);
  // A first ban longer than an hour is its own maximum by default.
  EXPECT_EQ(parse_ok("[default]\nrate = 10\nburst = 5\nban = \"2h\"\n").classes[0].ban.max_or_default(), 7200 * kSec);
  // Bytes alone are a limit per source to be over.
  EXPECT_TRUE(parse_ok("[default]\nbytes_rate = \"1M\"\nbytes_burst = 1500\nban = \"1s\"\n").classes[0].ban.set());
}

TEST(ConfigModes, ClassModeDenyInMonitorWhenFullMaxBans) {
  Policy p = parse_ok(R"([interface]
when_full = "refuse"
max_bans = "100k"
[[class]]
name = "dns"
match.port = 53
rate = 1
burst = 1
mode = "monitor"
[default]
rate = 1
burst = 1
mode = "enforce"
[lists]
deny_in_monitor = "drop"
)");
  EXPECT_TRUE(named(p, "dns").monitor);
  EXPECT_FALSE(named(p, "default").monitor);
  EXPECT_TRUE(p.iface.refuse_full);
  EXPECT_EQ(p.iface.max_bans, 100'000u);
  EXPECT_TRUE(p.deny_in_monitor);
  EXPECT_FALSE(p.monitor) << "the interface switch is not in the file";

  Policy q = parse_ok("[interface]\nwhen_full = \"evict\"\n[lists]\ndeny_in_monitor = \"count\"\n" + kDefault);
  EXPECT_FALSE(q.iface.refuse_full);
  EXPECT_FALSE(q.deny_in_monitor);
  EXPECT_FALSE(q.iface.max_bans);
  EXPECT_FALSE(q.iface.attach_only()) << "when_full is applied by a reload";
  EXPECT_TRUE(parse_ok("[interface]\nmax_bans = 10\n" + kDefault).iface.attach_only());
}

TEST(ConfigDefaults, InheritedUnlessAClassSetsItsOwn) {
  Policy p = parse_ok(R"([defaults]
new_sources = 100
new_sources_burst = 50
ban = "2s"
ban_max = "10m"
forget_after = "30m"
ban_scope = "all"
mode = "monitor"
[[class]]
name = "own"
match.port = 53
rate = 1
burst = 1
new_sources = 1000
ban = "5s"
ban_scope = "class"
mode = "enforce"
[[class]]
name = "burst-only"
match.port = 54
rate = 1
burst = 1
new_sources_burst = 7
[default]
rate = 1
burst = 1
)");
  const ClassSpec& own = named(p, "own");
  EXPECT_EQ(own.new_sources, (Rate{1000, 100})) << "its own rate, so the burst of its own rate, not [defaults]'";
  EXPECT_EQ(own.ban.ban_ns, 5 * kSec);
  EXPECT_EQ(own.ban.max_ns, 600 * kSec) << "ban_max inherited";
  EXPECT_EQ(own.ban.forget_ns, 1800 * kSec);
  EXPECT_FALSE(own.ban.all_classes);
  EXPECT_FALSE(own.monitor);
  EXPECT_EQ(own.ban.where.key, "class[0].ban");

  EXPECT_EQ(named(p, "burst-only").new_sources, (Rate{100, 7}));

  const ClassSpec& def = named(p, "default");
  EXPECT_EQ(def.new_sources, (Rate{100, 50}));
  EXPECT_EQ(def.ban.ban_ns, 2 * kSec);
  EXPECT_TRUE(def.ban.all_classes);
  EXPECT_TRUE(def.monitor);
  EXPECT_EQ(def.ban.where.key, "defaults.ban");
  EXPECT_EQ(def.ban.scope_where.key, "defaults.ban_scope");
}

TEST(ConfigInterfaceName, NamesTheInterfaceAndOtherInterfacesAreRefused) {
  auto p = parse_config("[interface]\nname = \"eth1\"\n[default]\nrate = 10\nburst = 5\n", "t.toml");
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->iface.name, "eth1");
  EXPECT_TRUE(check_config_iface(*p, "eth1"));
  auto other = check_config_iface(*p, "eth2");
  ASSERT_FALSE(other);
  EXPECT_TRUE(other.error().usage);
  EXPECT_NE(other.error().message().find("not of eth2"), std::string::npos) << other.error().message();
  auto none = parse_config("[default]\nrate = 10\nburst = 5\n", "t.toml");
  ASSERT_TRUE(none);
  EXPECT_TRUE(check_config_iface(*none, "anything"));
  for (const char* bad : {"\"\"", "\"a/b\"", "\"0123456789abcdef\"", "3"}) {
    auto r = parse_config(std::string("[interface]\nname = ") + bad + "\n[default]\nrate = 10\nburst = 5\n", "t.toml");
    EXPECT_FALSE(r) << bad;
  }
}

// The names the kernel refuses (dev_valid_name): "." and ".." would name the pin
// directory's own entries, and a NUL cuts the path short.
TEST(ConfigInterfaceName, NamesTheKernelRefusesAreRefused) {
  for (const char* bad : {"\".\"", "\"..\"", "\"eth0\\u0000x\"", "\"eth\\n0\"", "\"eth\\r\"", "\"a:1\""}) {
    auto r = parse_config(std::string("[interface]\nname = ") + bad + "\n[default]\nrate = 10\nburst = 5\n", "t.toml");
    EXPECT_FALSE(r) << bad;
  }
  for (const char* good : {"\"eth0.100\"", "\"veth-a_b\"", "\"...\""}) {
    auto r = parse_config(std::string("[interface]\nname = ") + good + "\n[default]\nrate = 10\nburst = 5\n", "t.toml");
    EXPECT_TRUE(r) << good << ": " << r.error().message();
  }
}

// ---- broken files -------------------------------------------------------------------

// One broken file: the error names FILE:LINE and the key. The expected line is the one
// marked "#<" in the text, or `line` when nothing is.
struct Broken {
  const char* what;
  std::string text;
  std::string key;
  std::string says;  // also in the message
  unsigned line = 0;
};

unsigned marked_line(const std::string& text) {
  unsigned line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "#<") == 0) return line;
    if (text[i] == '\n') ++line;
  }
  return 0;
}

std::string many(const char* table, int n, const char* body) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += fmt::format("[[{}]]\nname = \"n{}\"\n", table, i) + fmt::format(fmt::runtime(body), i);
  return s;
}

const std::string kWeb = "[[class]]\nname = \"web\"\nmatch.port = 443\nrate = 1\nburst = 1\n";

std::vector<Broken> broken_files() {
  const std::string c = "[[class]]\nname = \"c\"\n";                    // a class's first two lines
  const std::string cls = c + "match.port = 1\nrate = 1\nburst = 1\n";  // a whole class, lines 1-5
  return {
      {"bad CIDR", kDefault + "[lists]\ndeny = [\"203.0.113.0/33\"] #<\n", "lists.deny[0]", "at most /32"},
      {"not an address", kDefault + "[lists]\ndeny = [\n  \"203.0.113.0/24\",\n  \"bogus\", #<\n]\n", "lists.deny[1]",
       "'bogus' is not an IPv4 or IPv6 address"},
      {"host bits set", kDefault + "[lists]\nallow = [\"198.51.100.1/24\"] #<\n", "lists.allow[0]",
       "did you mean 198.51.100.0/24?"},
      {"host bits set, IPv6", kDefault + "[lists]\nallow = [{ cidr = \"2001:db8::1/64\" }] #<\n", "lists.allow[0].cidr",
       "did you mean 2001:db8::/64?"},
      {"unknown key", kDefault + "ratelimit = 5 #<\n", "default.ratelimit",
       "unknown key; the keys here are name, rate, burst, bytes_rate, bytes_burst, prefix4, prefix6"},
      {"unknown top-level key", "ratelimit = 5 #<\n" + kDefault, "ratelimit",
       "unknown key; the keys here are interface, defaults, class, default, lists, override, auto"},
      {"unknown top-level table", kDefault + "[classes] #<\nname = \"x\"\n", "classes", "did you mean 'class'?"},
      {"unknown key inside a class", c + "match.port = 1\nrate = 1\nbursts = 10 #<\n" + kDefault, "class[0].bursts",
       "did you mean 'burst'?"},
      {"unknown key inside match", c + "match.dport = 53 #<\nrate = 1\nburst = 1\n" + kDefault, "class[0].match.dport",
       "unknown key"},
      {"negative rate", c + "match.port = 1\nrate = -5 #<\nburst = 1\n" + kDefault, "class[0].rate", "-5 is negative"},
      {"negative rate as a string", "[default]\nrate = \"-5\" #<\nburst = 1\n", "default.rate", "not a count"},
      {"rate 0", c + "match.port = 1\nrate = 0 #<\nburst = 1\n" + kDefault, "class[0].rate",
       "0 is out of range; give 1 to 10M (for no limit of this kind, leave out rate and burst)"},
      {"rate too high", "[default]\nrate = \"20M\" #<\nburst = 1\n", "default.rate", "give 1 to 10M"},
      {"burst 0", "[default]\nrate = 5\nburst = 0 #<\n", "default.burst", "out of range"},
      {"not a count", "[default]\nrate = \"10q\" #<\nburst = 1\n", "default.rate", "'10q' is not a count"},
      {"float count", "[default]\nrate = 1.5 #<\nburst = 1\n", "default.rate", "got a float"},
      {"port 70000", c + "match.port = 70000 #<\nrate = 1\nburst = 1\n" + kDefault, "class[0].match.port",
       "70000 is not a port"},
      {"port 70000 in a range", c + "match.port = \"1000-70000\" #<\nrate = 1\nburst = 1\n" + kDefault,
       "class[0].match.port", "70000 is not a port"},
      {"port 70000 in an array", c + "match.port = [\n  53,\n  70000, #<\n]\nrate = 1\nburst = 1\n" + kDefault,
       "class[0].match.port[1]", "70000 is not a port"},
      {"negative port", c + "match.port = -1 #<\nrate = 1\nburst = 1\n" + kDefault, "class[0].match.port",
       "-1 is not a port"},
      {"port range 90-80", c + "match.port = \"90-80\" #<\nrate = 1\nburst = 1\n" + kDefault, "class[0].match.port",
       "write the lower port first: \"80-90\""},
      {"port not a number", c + "match.port = \"http\" #<\nrate = 1\nburst = 1\n" + kDefault, "class[0].match.port",
       "not a port or a range"},
      {"empty port list", c + "match.port = [] #<\nrate = 1\nburst = 1\n" + kDefault, "class[0].match.port",
       "empty array"},
      {"duplicate class name", kWeb + "[[class]]\nname = \"web\" #<\nmatch.port = 80\nrate = 1\nburst = 1\n" + kDefault,
       "class[1].name", "class 'web' is defined twice (first at line 2)"},
      {"default named like a class",
       "[[class]]\nname = \"default\"\nmatch.port = 1\nrate = 1\nburst = 1\n"
       "[default] #<\nrate = 1\nburst = 1\n",
       "default.name", "defined twice"},
      {"missing [default]", kWeb, "default", "there is no [default] table", 1},
      {"[[default]]", "[[default]] #<\nrate = 1\nburst = 1\n", "default", "expected a table [default]"},
      {"match in [default]", "[default]\nmatch.proto = \"udp\" #<\nrate = 1\nburst = 1\n", "default.match",
       "the default class has no match"},
      {"syn with proto udp", c + "match.proto = \"udp\"\nmatch.syn = true #<\nrate = 1\nburst = 1\n" + kDefault,
       "class[0].match.syn", "syn matches TCP only"},
      {"syn not a boolean", c + "match.syn = \"yes\" #<\nrate = 1\nburst = 1\n" + kDefault, "class[0].match.syn",
       "expected true or false, got a string"},
      {"ports with icmp", c + "match.proto = [\"tcp\", \"icmp\"]\nmatch.port = 7 #<\nrate = 1\nburst = 1\n" + kDefault,
       "class[0].match.port", "protocol icmp has no ports"},
      {"source ports with icmp", c + "match.proto = \"icmp\"\nmatch.sport = 7 #<\nrate = 1\nburst = 1\n" + kDefault,
       "class[0].match.sport", "protocol icmp has no ports"},
      {"source and destination ports", c + "match.port = 53\nmatch.sport = 53 #<\nrate = 1\nburst = 1\n" + kDefault,
       "class[0].match.sport", "a class matches source ports or destination ports, not both"},
      {"source port out of range", c + "match.sport = [53, 70000] #<\nrate = 1\nburst = 1\n" + kDefault,
       "class[0].match.sport[1]", "70000 is not a port"},
      {"class without a limit", "[[class]] #<\nname = \"web\"\nmatch.port = 443\n" + kDefault, "class[0]",
       "class 'web' has no limit"},
      {"class matching everything", "[[class]] #<\nname = \"all\"\nrate = 1\nburst = 1\n" + kDefault, "class[0]",
       "matches everything"},
      {"bytes_rate without bytes_burst", "[default]\nbytes_rate = \"1M\" #<\n", "default.bytes_rate",
       "given without bytes_burst"},
      {"burst without rate", "[default]\nrate = 5\nburst = 5\nbytes_burst = 5 #<\n", "default.bytes_burst",
       "given without bytes_rate"},
      {"unknown proto", c + "match.proto = \"sctp\" #<\nrate = 1\nburst = 1\n" + kDefault, "class[0].match.proto",
       "'sctp' is not a protocol"},
      {"unknown proto in an array", c + "match.proto = [\"tcp\", 6] #<\nrate = 1\nburst = 1\n" + kDefault,
       "class[0].match.proto[1]", "expected a string, got an integer"},
      {"string for prefix4", c + "match.port = 1\nrate = 1\nburst = 1\nprefix4 = \"24\" #<\n" + kDefault,
       "class[0].prefix4", "expected an integer, got a string"},
      {"prefix4 33", "[default]\nrate = 1\nburst = 1\nprefix4 = 33 #<\n", "default.prefix4", "give 1 to 32"},
      {"prefix6 0 in [defaults]", "[defaults]\nprefix6 = 0 #<\n" + kDefault, "defaults.prefix6", "give 1 to 128"},
      {"match not a table", c + "match = \"udp\" #<\nrate = 1\nburst = 1\n" + kDefault, "class[0].match",
       "expected a table"},
      {"[class] instead of [[class]]", "[class] #<\nname = \"x\"\n" + kDefault, "class", "double brackets"},
      {"expires in the past",
       kDefault + "[lists]\ndeny = [{ cidr = \"192.0.2.7\", expires = 2025-12-31T23:59:59Z }] #<\n",
       "lists.deny[0].expires", "in the past"},
      {"bad duration", kDefault + "[lists]\ndeny = [{ cidr = \"192.0.2.7\", expires = \"2 hours\" }] #<\n",
       "lists.deny[0].expires", "'2 hours' is neither a duration nor an RFC 3339 time"},
      {"duration without a unit", kDefault + "[lists]\ndeny = [{ cidr = \"192.0.2.7\", expires = \"90\" }] #<\n",
       "lists.deny[0].expires", "neither a duration nor an RFC 3339 time"},
      {"duration of 0", kDefault + "[lists]\ndeny = [{ cidr = \"192.0.2.7\", expires = \"0s\" }] #<\n",
       "lists.deny[0].expires", "is no time at all"},
      {"expires in the year 9999",
       kDefault + "[lists]\ndeny = [{ cidr = \"192.0.2.7\", expires = 9999-12-31T23:59:59Z }] #<\n",
       "lists.deny[0].expires", "more than 100 years away"},
      {"expires before 1970",
       kDefault + "[lists]\ndeny = [{ cidr = \"192.0.2.7\", expires = 1969-12-31T23:59:59Z }] #<\n",
       "lists.deny[0].expires", "in the past"},
      {"date-time without a time zone",
       kDefault + "[lists]\ndeny = [{ cidr = \"192.0.2.7\", expires = 2026-12-01T00:00:00 }] #<\n",
       "lists.deny[0].expires", "no time zone"},
      {"expiry on an allow entry", kDefault + "[lists]\nallow = [{ cidr = \"192.0.2.7\", expires = \"2h\" }] #<\n",
       "lists.allow[0].expires", "only deny entries expire"},
      {"list entry without cidr", kDefault + "[lists]\ndeny = [{ expires = \"2h\" }] #<\n", "lists.deny[0].cidr",
       "missing"},
      {"unknown key in a list entry", kDefault + "[lists]\ndeny = [{ cidr = \"192.0.2.7\", expire = \"2h\" }] #<\n",
       "lists.deny[0].expire", "did you mean 'expires'?"},
      {"a network listed twice", kDefault + "[lists]\nallow = [\"192.0.2.0/24\"]\ndeny = [\"192.0.2.0/24\"] #<\n",
       "lists.deny[0]", "192.0.2.0/24 is listed twice (also at t.toml:5: lists.allow[0])"},
      {"override naming an unknown class",
       kWeb + kDefault +
           "[[override]]\nname = \"p\"\nnetworks = [\"198.18.0.0/24\"]\nrate = 1\nburst = 1\n"
           "classes = [\"web\", \"wbe\"] #<\n",
       "override[0].classes[1]", "there is no class 'wbe'; the classes are web, default"},
      {"override without networks", kDefault + "[[override]] #<\nname = \"p\"\nrate = 1\nburst = 1\n",
       "override[0].networks", "missing"},
      {"override with no network", kDefault + "[[override]]\nname = \"p\"\nnetworks = [] #<\nrate = 1\nburst = 1\n",
       "override[0].networks", "empty array"},
      {"override without a limit", kDefault + "[[override]] #<\nname = \"p\"\nnetworks = [\"198.18.0.0/24\"]\n",
       "override[0]", "override 'p' has no limit"},
      {"override without a name", kDefault + "[[override]] #<\nnetworks = [\"198.18.0.0/24\"]\nrate = 1\nburst = 1\n",
       "override[0].name", "missing"},
      {"duplicate override name",
       kDefault + "[[override]]\nname = \"p\"\nnetworks = [\"198.18.0.0/24\"]\nrate = 1\nburst = 1\n"
                  "[[override]]\nname = \"p\" #<\nnetworks = [\"198.18.1.0/24\"]\nrate = 1\nburst = 1\n",
       "override[1].name", "override 'p' is defined twice"},
      {"65 overrides",
       kDefault + many("override", 64, "networks = [\"198.18.0.{}/32\"]\nrate = 1\nburst = 1\n") +
           "[[override]] #<\nname = \"x\"\nnetworks = [\"198.18.1.0/32\"]\nrate = 1\nburst = 1\n",
       "override[64]", "more than 64 [[override]] tables"},
      {"65 classes",
       many("class", 63, "match.port = {}\nrate = 1\nburst = 1\n") +
           "[[class]] #<\nname = \"x\"\nmatch.port = 1\nrate = 1\nburst = 1\n" + kDefault,
       "class[63]", "more than 63 [[class]] tables; levee holds 64 classes, [default] included"},
      {"TOML syntax error", "[default]\nrate = #<\nburst = 1\n", "", "not valid TOML"},
      {"TOML duplicate key", "[default]\nrate = 1\nrate = 2 #<\nburst = 1\n", "", "not valid TOML"},
      {"empty file", "", "default", "there is no [default] table", 1},
      {"only comments", "# nothing here\n\n", "default", "there is no [default] table", 1},
      {"a name with spaces", "[[class]]\nname = \"my dns\" #<\nmatch.port = 53\nrate = 1\nburst = 1\n" + kDefault,
       "class[0].name", "'my dns' is not a valid name"},
      {"a name too long", "[default]\nname = \"abcdefghijklmnopqrstuvwxyz012345\" #<\nrate = 1\nburst = 1\n",
       "default.name", "not a valid name; use 1 to 31 letters"},
      {"a class without a name", "[[class]] #<\nmatch.port = 53\nrate = 1\nburst = 1\n" + kDefault, "class[0].name",
       "missing"},
      {"mode turbo", "[interface]\nmode = \"turbo\" #<\n" + kDefault, "interface.mode", "'turbo' is not a mode"},
      {"max_sources 0", "[interface]\nmax_sources = 0 #<\n" + kDefault, "interface.max_sources", "give 1 to 100M"},
      {"unknown key in [interface]", "[interface]\nmtu = 1500 #<\n" + kDefault, "interface.mtu", "the keys here are"},
      // The limits beyond a source's rate: admission, bans, networks, totals, modes.
      {"negative new_sources", "[default]\nrate = 1\nburst = 1\nnew_sources = -5\n", "default.new_sources",
       "-5 is negative", 4},
      {"zero new_sources", cls + "new_sources = 0\n" + kDefault, "class[0].new_sources",
       "0 is out of range; give 1 to 10M (for no admission control, give new_sources = \"off\")", 6},
      {"new_sources_burst 0", cls + "new_sources = 5\nnew_sources_burst = 0\n" + kDefault, "class[0].new_sources_burst",
       "out of range", 7},
      {"new_sources_burst alone", cls + "new_sources_burst = 10\n" + kDefault, "class[0].new_sources_burst",
       "given without new_sources", 6},
      {"new_sources_burst alone in [defaults]", "[defaults]\nnew_sources_burst = 10\n" + kDefault,
       "defaults.new_sources_burst", "given without new_sources", 2},
      {"bad duration", cls + "ban = \"2 hours\"\n" + kDefault, "class[0].ban", "'2 hours' is not a duration", 6},
      {"duration without a unit", "[default]\nrate = 1\nburst = 1\nban = \"90\"\n", "default.ban",
       "not a duration; write a duration like \"500ms\"", 4},
      {"negative duration", "[default]\nrate = 1\nburst = 1\nban = \"-1s\"\n", "default.ban", "not a duration", 4},
      {"zero ban", "[default]\nrate = 1\nburst = 1\nban = \"0s\"\n", "default.ban", "no time at all", 4},
      {"ban as a number", "[default]\nrate = 1\nburst = 1\nban = 2\n", "default.ban",
       "expected a duration string, got an integer", 4},
      {"zero forget_after", "[default]\nrate = 1\nburst = 1\nban = \"1s\"\nforget_after = \"0ms\"\n",
       "default.forget_after", "no time at all", 5},
      {"ban_max shorter than ban", "[default]\nrate = 1\nburst = 1\nban = \"10m\"\nban_max = \"5m\"\n",
       "default.ban_max", "5m is shorter than the first ban, 10m; give ban_max at least as long as ban", 5},
      {"ban_max from [defaults] shorter than a class's ban",
       "[defaults]\nban_max = \"1m\"\n" + cls + "ban = \"2m\"\n" + kDefault, "defaults.ban_max",
       "is shorter than the first ban", 2},
      {"ban_max without ban", "[default]\nrate = 1\nburst = 1\nban_max = \"5m\"\n", "default.ban_max",
       "given without ban", 4},
      {"ban_scope without ban", cls + "ban_scope = \"all\"\n" + kDefault, "class[0].ban_scope", "given without ban", 6},
      {"bad scope", "[default]\nrate = 1\nburst = 1\nban = \"1s\"\nban_scope = \"global\"\n", "default.ban_scope",
       "'global' is not a valid ban_scope; give \"class\" or \"all\"", 5},
      {"bad mode", cls + "mode = \"dry-run\"\n" + kDefault, "class[0].mode",
       "'dry-run' is not a valid mode; give \"enforce\" or \"monitor\"", 6},
      {"bad mode in [defaults]", "[defaults]\nmode = \"monitoring\"\n" + kDefault, "defaults.mode",
       "'monitoring' is not a valid mode", 2},
      {"ban without a limit per source", "[default]\ntotal = { rate = 5, burst = 5 }\nban = \"1s\"\n", "default.ban",
       "class 'default' bans sources (ban) but has no limit per source to be over", 3},
      {"ban from [defaults] in a class without a limit per source",
       "[defaults]\nban = \"1s\"\n[default] #<\ntotal = { rate = 5, burst = 5 }\n", "default",
       "bans sources (ban from [defaults])", 3},
      {"network prefix4 longer than the source prefix",
       cls + "prefix4 = 24\nnetwork = { prefix4 = 28, rate = 5, burst = 5 }\n" + kDefault, "class[0].network.prefix4",
       "/28 is narrower than one source of the class, /24; a network holds whole sources: give network.prefix4 = 24 "
       "or less",
       7},
      {"network prefix6 by default longer than the source prefix",
       cls + "prefix6 = 32\nnetwork = { rate = 5, burst = 5 }\n" + kDefault, "class[0].network.prefix6",
       "/48 is narrower than one source of the class, /32", 7},
      {"network prefix out of range", cls + "network = { prefix4 = 0, rate = 5, burst = 5 }\n" + kDefault,
       "class[0].network.prefix4", "give 1 to 32", 6},
      {"network without a limit", cls + "network = { prefix4 = 16 }\n" + kDefault, "class[0].network", "no limit", 6},
      {"network rate without burst", cls + "network = { rate = 5 }\n" + kDefault, "class[0].network.rate",
       "given without burst", 6},
      {"unknown key in network", cls + "network = { rate = 5, burst = 5, prefix = 24 }\n" + kDefault,
       "class[0].network.prefix", "unknown key; did you mean 'prefix4'?", 6},
      {"unknown key in a network sub-table", cls + "[class.network]\nrate = 5\nburst = 5\nbytes = 7\n" + kDefault,
       "class[0].network.bytes", "unknown key", 9},
      {"network not a table", cls + "network = 24\n" + kDefault, "class[0].network", "expected a table", 6},
      {"unknown key in total", cls + "total = { rate = 5, burst = 5, prefix4 = 24 }\n" + kDefault,
       "class[0].total.prefix4", "unknown key; the keys here are rate, burst, bytes_rate, bytes_burst", 6},
      {"empty total", cls + "total = {}\n" + kDefault, "class[0].total", "no limit", 6},
      {"total rate 0", cls + "total = { rate = 0, burst = 5 }\n" + kDefault, "class[0].total.rate", "out of range", 6},
      {"negative network rate", cls + "network = { rate = -1, burst = 5 }\n" + kDefault, "class[0].network.rate",
       "-1 is negative", 6},
      {"all-scope classes with different prefixes",
       "[[class]]\nname = \"a\"\nmatch.port = 1\nrate = 1\nburst = 1\nban = \"1s\"\nban_scope = \"all\"\nprefix4 = 24\n"
       "[default]\nrate = 1\nburst = 1\nban = \"1s\"\nban_scope = \"all\"\n",
       "default.ban_scope",
       "class 'default' bans in every class per /32 (IPv4), /64 (IPv6), and class 'a' per /24, /64; a source has one "
       "ban in every class",
       13},
      {"all-scope from [defaults] with different prefixes",
       "[defaults]\nban = \"1s\"\nban_scope = \"all\"\n"
       "[[class]]\nname = \"a\"\nmatch.port = 1\nrate = 1\nburst = 1\nprefix6 = 48\n" +
           kDefault,
       "defaults.ban_scope", "class 'default' bans in every class", 3},
      // The autopilot: [auto], new_sources, escalate.
      {"unknown key in [auto]", "[auto]\nfloors = 10 #<\n" + kDefault, "auto.floors", "did you mean 'floor'?"},
      {"[auto] not a table", "auto = 5 #<\n" + kDefault, "auto", "expected a table [auto]"},
      {"floor 0", "[auto]\nfloor = 0 #<\n" + kDefault, "auto.floor", "0 is out of range; give 1 to 10M"},
      {"floor too high", "[auto]\nfloor = \"20M\" #<\n" + kDefault, "auto.floor", "give 1 to 10M"},
      {"margin 0", "[auto]\nmargin = 0 #<\n" + kDefault, "auto.margin", "0 is out of range; give 1 to 1k"},
      {"margin 1001", "[auto]\nmargin = 1001 #<\n" + kDefault, "auto.margin", "give 1 to 1k"},
      {"margin as a float", "[auto]\nmargin = 2.5 #<\n" + kDefault, "auto.margin", "expected a count, got a float"},
      {"burst too short", "[auto]\nburst = \"5ms\" #<\n" + kDefault, "auto.burst",
       "5ms is out of range; give 10ms to 1h"},
      {"burst too long", "[auto]\nburst = \"2h\" #<\n" + kDefault, "auto.burst", "give 10ms to 1h"},
      {"burst as a number", "[auto]\nburst = 1 #<\n" + kDefault, "auto.burst",
       "expected a duration string, got an integer"},
      {"sustain too long", "[auto]\nsustain = \"61m\"\nrelease = \"2h\" #<\n" + kDefault, "auto.sustain",
       "1h1m is out of range; give 0s to 1h", 2},
      {"release 0", "[auto]\nrelease = \"0s\" #<\n" + kDefault, "auto.release", "no time at all"},
      {"release too long", "[auto]\nrelease = \"25h\" #<\n" + kDefault, "auto.release",
       "1d1h is out of range; give 1s to 1d"},
      {"release shorter than sustain", "[auto]\nsustain = \"10s\"\nrelease = \"5s\" #<\n" + kDefault, "auto.release",
       "5s is shorter than sustain, 10s"},
      {"network_prefix4 33", "[auto]\nnetwork_prefix4 = 33 #<\n" + kDefault, "auto.network_prefix4",
       "/33 is out of range; give 1 to 32"},
      {"network_prefix6 0", "[auto]\nnetwork_prefix6 = 0 #<\n" + kDefault, "auto.network_prefix6", "give 1 to 128"},
      {"network_sources 0", "[auto]\nnetwork_sources = 0 #<\n" + kDefault, "auto.network_sources",
       "0 is out of range; give 1 to 1M"},
      {"network_sources too many", "[auto]\nnetwork_sources = \"2M\" #<\n" + kDefault, "auto.network_sources",
       "give 1 to 1M"},
      {"network_rate without network_burst", "[auto]\nnetwork_rate = \"10k\" #<\n" + kDefault, "auto.network_rate",
       "given without network_burst"},
      {"network_burst without network_rate", "[auto]\nnetwork_burst = 100 #<\n" + kDefault, "auto.network_burst",
       "given without network_rate"},
      {"network_rate 0", "[auto]\nnetwork_rate = 0 #<\nnetwork_burst = 5\n" + kDefault, "auto.network_rate",
       "0 is out of range; give 1 to 10M"},
      {"known_good_after too long", "[auto]\nknown_good_after = \"31d\" #<\nknown_good_for = \"60d\"\n" + kDefault,
       "auto.known_good_after", "31d is out of range; give 1s to 30d"},
      {"known_good_for over a year", "[auto]\nknown_good_for = \"366d\" #<\n" + kDefault, "auto.known_good_for",
       "366d is out of range; give 1s to 365d"},
      {"known_good_for shorter than known_good_after",
       "[auto]\nknown_good_after = \"1h\"\nknown_good_for = \"10m\" #<\n" + kDefault, "auto.known_good_for",
       "10m is shorter than known_good_after, 1h"},
      {"new_sources neither auto, off nor a count", cls + "new_sources = \"sometimes\" #<\n" + kDefault,
       "class[0].new_sources",
       "'sometimes' is neither \"auto\", \"off\" nor a count; give \"auto\" (the autopilot), \"off\" or new sources "
       "per second"},
      {"new_sources a boolean", "[defaults]\nnew_sources = false #<\n" + kDefault, "defaults.new_sources",
       "expected \"auto\", \"off\" or a count, got a boolean"},
      {"new_sources_burst with new_sources auto",
       cls + "new_sources = \"auto\"\nnew_sources_burst = 10 #<\n" + kDefault, "class[0].new_sources_burst",
       "given with new_sources = \"auto\"; new_sources_burst is the burst of a number"},
      {"new_sources_burst with new_sources off from [defaults]",
       "[defaults]\nnew_sources = \"off\"\n" + cls + "new_sources_burst = 10 #<\n" + kDefault,
       "class[0].new_sources_burst", "given with new_sources = \"off\""},
      {"new_sources_burst with new_sources off in [defaults]",
       "[defaults]\nnew_sources = \"off\"\nnew_sources_burst = 10 #<\n" + kDefault, "defaults.new_sources_burst",
       "given with new_sources = \"off\""},
      {"bad escalate", cls + "escalate = \"on\" #<\n" + kDefault, "class[0].escalate",
       "'on' is not a valid escalate; give \"auto\" or \"off\""},
      {"escalate as a boolean", "[defaults]\nescalate = false #<\n" + kDefault, "defaults.escalate",
       "expected a string, got a boolean"},
      {"bad when_full", "[interface]\nwhen_full = \"drop\"\n" + kDefault, "interface.when_full",
       "give \"evict\" or \"refuse\"", 2},
      {"max_bans 0", "[interface]\nmax_bans = 0\n" + kDefault, "interface.max_bans", "give 1 to 100M", 2},
      {"bad deny_in_monitor", kDefault + "[lists]\ndeny_in_monitor = true\n", "lists.deny_in_monitor",
       "expected a string, got a boolean", 5},
      {"unknown deny_in_monitor", kDefault + "[lists]\ndeny_in_monitor = \"pass\"\n", "lists.deny_in_monitor",
       "give \"count\" or \"drop\"", 5},
  };
}

TEST(ConfigBroken, EachIsOneLineWithFileLineAndKey) {
  for (const Broken& b : broken_files()) {
    SCOPED_TRACE(b.what);
    auto r = parse(b.text);
    ASSERT_FALSE(r.ok()) << "accepted:\n" << b.text;
    const std::string m = r.error().message();
    EXPECT_TRUE(r.error().usage) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    const unsigned line = b.line ? b.line : marked_line(b.text);
    ASSERT_NE(line, 0u) << "the test marks no line";
    // FILE:LINE: KEY: what is wrong (a syntax error has no key: FILE:LINE:COLUMN).
    const std::string at =
        b.key.empty() ? fmt::format("{}:{}:", kFile, line) : fmt::format("{}:{}: {}: ", kFile, line, b.key);
    EXPECT_EQ(m.compare(0, at.size(), at), 0) << "want " << at << " in: " << m;
    EXPECT_NE(m.find(b.says), std::string::npos) << "want '" << b.says << "' in: " << m;
  }
}

TEST(ConfigBroken, AtLeastTwentyFive) { EXPECT_GE(broken_files().size(), 25u); }

TEST(ConfigBroken, SyntaxErrorsGiveTheColumn) {
  auto r = parse("[default]\nrate = \nburst = 1\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message().rfind("t.toml:2:8: not valid TOML: ", 0), 0u) << r.error().message();
}

TEST(ConfigBroken, ExactMessages) {
  auto msg = [](const std::string& text) {
    auto r = parse(text);
    return r.ok() ? "(accepted)" : r.error().message();
  };
  EXPECT_EQ(
      msg("[[class]]\nname = \"dns\"\nmatch.proto = \"udp\"\nmatch.port = 70000\nrate = 1\nburst = 1\n" + kDefault),
      "t.toml:4: class[0].match.port: 70000 is not a port; give 0 to 65535");
  EXPECT_EQ(msg(kDefault + "[lists]\ndeny = [\"192.0.2.1/24\"]\n"),
            "t.toml:5: lists.deny[0]: '192.0.2.1/24' has host bits set; did you mean 192.0.2.0/24?");
  EXPECT_EQ(msg("[default]\nrate = 10\nburts = 5\n"), "t.toml:3: default.burts: unknown key; did you mean 'burst'?");
}

// ---- load_config: files on disk ---------------------------------------------------

class ConfigFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/levee-config-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(ConfigFiles, AGoodFileLoads) {
  const std::string path = write("good.toml", kWeb + kDefault);
  auto r = load_config(path);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->source, path);
  EXPECT_EQ(r->classes.size(), 2u);
  EXPECT_EQ(r->classes[0].where.file, path);
}

TEST_F(ConfigFiles, MissingFileIsOneClearError) {
  auto r = load_config(dir_ + "/nosuch.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().usage);
  EXPECT_EQ(r.error().message(), dir_ +
                                     "/nosuch.toml: cannot open the config file: No such file or directory; "
                                     "give the path of a levee config file (see examples/levee.toml)");
}

TEST_F(ConfigFiles, ADirectoryIsNotAConfigFile) {
  auto r = load_config(dir_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find(": the config file is a directory, not a regular file; "), std::string::npos)
      << r.error().message();
}

TEST_F(ConfigFiles, BrokenFilesNameThePath) {
  int n = 0;
  for (const Broken& b : broken_files()) {
    if (n++ % 8) continue;  // a handful
    SCOPED_TRACE(b.what);
    const std::string path = write(fmt::format("broken{}.toml", n), b.text);
    auto r = load_config(path);
    ASSERT_FALSE(r.ok());
    const std::string at = fmt::format("{}:{}:", path, b.line ? b.line : marked_line(b.text));
    EXPECT_EQ(r.error().message().compare(0, at.size(), at), 0) << r.error().message();
  }
  EXPECT_GE(n, 40);
}

// ---- SYN authentication ------------------------------------------------------------------

TEST(ConfigSynAuth, ACookieClassCompilesItsFlagAndRoundTrips) {
  Policy p = parse_ok(R"([[class]]
name = "web"
match = { proto = "tcp", port = [80, 443] }
rate = 100
burst = 10
syn_auth = "cookie"
[[class]]
name = "ssh"
match = { proto = "tcp", port = 22 }
rate = 10
burst = 10
syn_auth = "off"
)" + kDefault);
  EXPECT_EQ(named(p, "web").syn_auth, SynAuth::Cookie);
  EXPECT_EQ(named(p, "ssh").syn_auth, SynAuth::Off);
  EXPECT_FALSE(named(p, "default").syn_auth_given);
  EXPECT_EQ(named(p, "default").syn_auth_in_force(), SynAuth::Auto) << "auto where it fits, unless asked";
  EXPECT_EQ(named(p, "ssh").syn_auth_in_force(), SynAuth::Off) << "off when asked";
  const lv_class k = compile_class(named(p, "web"), kTick, 2);
  EXPECT_TRUE(k.flags & LV_CLASS_SYN_AUTH);
  EXPECT_FALSE(k.flags & LV_CLASS_SYN_RESET);
  EXPECT_EQ(class_of(k).syn_auth, SynAuth::Cookie);
  EXPECT_FALSE(compile_class(named(p, "ssh"), kTick, 2).flags & LV_CLASS_SYN_AUTH);
}

TEST(ConfigSynAuth, ResetModeHasAFlagOfItsOwnAndProxyCompilesAsCookie) {
  auto one = [](const std::string& mode) {
    return parse_ok("[[class]]\nname = \"web\"\nmatch = { proto = \"tcp\" }\nrate = 1\nburst = 1\nsyn_auth = \"" +
                    mode + "\"\n" + kDefault);
  };
  Policy reset = one("reset"), proxy = one("proxy");
  EXPECT_EQ(named(reset, "web").syn_auth, SynAuth::Reset);
  EXPECT_EQ(named(proxy, "web").syn_auth, SynAuth::Proxy);
  const lv_class r = compile_class(named(reset, "web"), kTick, 2), x = compile_class(named(proxy, "web"), kTick, 2);
  EXPECT_EQ(r.flags & (LV_CLASS_SYN_AUTH | LV_CLASS_SYN_RESET), LV_CLASS_SYN_AUTH | LV_CLASS_SYN_RESET);
  EXPECT_EQ(x.flags & (LV_CLASS_SYN_AUTH | LV_CLASS_SYN_RESET), LV_CLASS_SYN_AUTH);
  EXPECT_EQ(class_of(r).syn_auth, SynAuth::Reset);
  auto bad = parse("[[class]]\nname = \"web\"\nmatch = { proto = \"tcp\" }\nsyn_auth = \"syncookie\"\n" + kDefault);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("proxy"), std::string::npos) << bad.error().message();
}

// "auto" is a flag of its own, not SYN_AUTH's: the datapath gates only while the
// autopilot is engaged. It needs the autopilot's admission, which engages it.
TEST(ConfigSynAuth, AutoHasAFlagOfItsOwnAndNeedsTheAutopilotsAdmission) {
  const std::string web =
      "[[class]]\nname = \"web\"\nmatch = { proto = \"tcp\" }\nrate = 1\nburst = 1\n"
      "syn_auth = \"auto\"\n";
  Policy p = parse_ok(web + kDefault);
  EXPECT_EQ(named(p, "web").syn_auth, SynAuth::Auto);
  const lv_class k = compile_class(named(p, "web"), kTick, 2);
  EXPECT_EQ(k.flags & (LV_CLASS_SYN_AUTH | LV_CLASS_SYN_RESET | LV_CLASS_SYN_AUTO), LV_CLASS_SYN_AUTO);
  EXPECT_EQ(class_of(k).syn_auth, SynAuth::Auto);
  EXPECT_TRUE(has_syn_auth(p)) << "the cookie keys and the tc program, as for the other modes";
  // As the default gives it: in the default class (every protocol), after a class that
  // takes TCP; not in a class of SYNs only.
  EXPECT_TRUE(parse(web + "[default]\nrate = 1\nburst = 1\nsyn_auth = \"auto\"\n").ok());
  auto syns = parse(
      "[[class]]\nname = \"s\"\nmatch = { proto = \"tcp\", syn = true }\nrate = 1\nburst = 1\n"
      "syn_auth = \"auto\"\n" +
      kDefault);
  ASSERT_FALSE(syns.ok());
  EXPECT_EQ(
      syns.error().message(),
      "t.toml:1: class[0]: class 's' has syn_auth = \"auto\" but does not match all of TCP's packets; give it TCP "
      "among its protocols, no match.syn and no match.sport");
  for (const char* admission : {"new_sources = 50\n", "new_sources = \"off\"\n"}) {
    auto bad = parse(web + admission + kDefault);
    ASSERT_FALSE(bad.ok()) << admission;
    EXPECT_EQ(bad.error().message(),
              "t.toml:1: class[0]: class 'web' has syn_auth = \"auto\", which the autopilot's admission engages, but "
              "new_sources is not \"auto\"; give it new_sources = \"auto\", or syn_auth = \"cookie\" to authenticate "
              "every new TCP source");
  }
}

TEST(ConfigSynAuth, NeedsAClassThatSeesWholeTcpConnections) {
  auto msg = [](const std::string& text) {
    auto r = parse(text);
    return r.ok() ? "(accepted)" : r.error().message();
  };
  const std::string limits = "rate = 1\nburst = 1\nsyn_auth = \"cookie\"\n";
  EXPECT_EQ(msg("[[class]]\nname = \"s\"\nmatch = { proto = \"tcp\", syn = true }\n" + limits + kDefault),
            "t.toml:1: class[0]: class 's' has syn_auth but does not match all of TCP's packets; give it match.proto = "
            "\"tcp\" "
            "(destination ports as you like), no match.syn and no match.sport");
  EXPECT_EQ(msg("[[class]]\nname = \"u\"\nmatch = { proto = [\"tcp\", \"udp\"] }\n" + limits + kDefault),
            "t.toml:1: class[0]: class 'u' has syn_auth but does not match all of TCP's packets; give it match.proto = "
            "\"tcp\" "
            "(destination ports as you like), no match.syn and no match.sport");
  // No class before it may take its SYNs (first match wins): one on an overlapping port
  // range or on any TCP does; one on other ports or of another protocol does not.
  const std::string shadow =
      "[[class]]\nname = \"syn\"\nmatch = { proto = \"tcp\", port = \"440-450\", syn = true }\n"
      "rate = 1\nburst = 1\n";
  const std::string web = "[[class]]\nname = \"web\"\nmatch = { proto = \"tcp\", port = [80, 443] }\n" + limits;
  EXPECT_EQ(msg(shadow + web + kDefault),
            "t.toml:6: class[1]: class 'web' has syn_auth but class 'syn' before it takes its SYNs; put 'web' first, "
            "or keep its ports out of 'syn'");
  EXPECT_EQ(msg(web + shadow + kDefault), "(accepted)");
  // A class of source ports before it takes SYNs too: a spoofed SYN picks its source port.
  EXPECT_EQ(msg("[[class]]\nname = \"refl\"\nmatch = { sport = 53 }\nrate = 1\nburst = 1\n" + web + kDefault),
            "t.toml:6: class[1]: class 'web' has syn_auth but class 'refl' before it takes its SYNs; put 'web' first, "
            "or keep its ports out of 'refl'");
  EXPECT_EQ(msg("[[class]]\nname = \"s\"\nmatch = { proto = \"tcp\", sport = 1 }\n" + limits + kDefault),
            "t.toml:1: class[0]: class 's' has syn_auth but does not match all of TCP's packets; give it match.proto = "
            "\"tcp\" (destination ports as you like), no match.syn and no match.sport");
  EXPECT_EQ(
      msg("[[class]]\nname = \"dns\"\nmatch = { proto = \"udp\", port = 443 }\nrate = 1\nburst = 1\n" + web + kDefault),
      "(accepted)");
  EXPECT_EQ(
      msg("[[class]]\nname = \"ssh\"\nmatch = { proto = \"tcp\", port = 22 }\nrate = 1\nburst = 1\n" + web + kDefault),
      "(accepted)");
  EXPECT_NE(msg("[[class]]\nname = \"any\"\nmatch.port = 80\nrate = 1\nburst = 1\n" + web + kDefault), "(accepted)")
      << "a class of any protocol on port 80 takes TCP SYNs to 80";
  EXPECT_NE(msg("[[class]]\nname = \"w\"\nmatch.proto = \"tcp\"\nrate = 1\nburst = 1\nsyn_auth = \"yes\"\n" + kDefault)
                .find("syn_auth"),
            std::string::npos);
}

TEST(ConfigSynAuth, TheAnswerRatesAreTheSynAuthTables) {
  EXPECT_TRUE(parse_ok(kDefault).syn_auth == SynAuthSpec{});
  Policy p = parse_ok(
      "[syn_auth]\nanswer_rate = \"2k\"\nanswer_burst = 50\nanswer_prefix4 = 16\nanswer_prefix6 = 32\n"
      "answer_cap = \"1M\"\n" +
      kDefault);
  EXPECT_EQ(p.syn_auth.per_network, (Rate{2'000, 50}));
  EXPECT_EQ(p.syn_auth.prefix4, 16u);
  EXPECT_EQ(p.syn_auth.prefix6, 32u);
  EXPECT_EQ(p.syn_auth.cap, 1'000'000u);
  const Clocks clk{4'000'000, kConfigNow, 1000 * kSec};
  auto c = std::make_unique<CompiledPolicy>(compile(p, clk));
  const lv_answer& a = c->slot.answer;
  EXPECT_EQ(a.per_network.rate, 2'000u);
  EXPECT_EQ(a.per_network.burst, 50u);
  EXPECT_EQ(a.mask4, htonl(0xffff0000));
  EXPECT_EQ(a.mask6[0], 0xffffffffu);
  EXPECT_EQ(a.mask6[1], 0u);
  EXPECT_EQ(a.cap_per_cpu.rate, 1'000'000u / possible_cpus());
  auto msg = [](const std::string& text) {
    auto r = parse(text);
    return r.ok() ? "(accepted)" : r.error().message();
  };
  EXPECT_EQ(msg("[syn_auth]\nanswer_rate = 10\n" + kDefault).find("t.toml:"), 0u) << "a rate needs its burst";
  EXPECT_NE(msg("[syn_auth]\nanswers = 10\n" + kDefault).find("unknown key"), std::string::npos);
  EXPECT_NE(msg("[syn_auth]\nanswer_prefix4 = 33\n" + kDefault), "(accepted)");
  EXPECT_NE(msg("[syn_auth]\nanswer_cap = 0\n" + kDefault), "(accepted)");
}

// known_good_per_network: the known-good marks one answer network may make in an ageing
// of the filter, compiled into lv_answer (the datapath's bound and levee run's); 256 by
// default, 0 for none, and anything else a count in range, said at its line.
TEST(ConfigSynAuth, KnownGoodPerNetworkBoundsTheMarksOfOneNetwork) {
  const Clocks clk{4'000'000, kConfigNow, 1000 * kSec};
  auto compiled = [&](const std::string& text) {
    return std::make_unique<CompiledPolicy>(compile(parse_ok(text), clk))->slot.answer.marks_per_network;
  };
  EXPECT_EQ(parse_ok(kDefault).syn_auth.marks_per_network, 256u);
  EXPECT_EQ(compiled(kDefault), 256u) << "the default is compiled too";
  EXPECT_EQ(compiled("[syn_auth]\nknown_good_per_network = 16\n" + kDefault), 16u);
  EXPECT_EQ(compiled("[syn_auth]\nknown_good_per_network = \"10k\"\n" + kDefault), 10'000u);
  EXPECT_EQ(compiled("[syn_auth]\nknown_good_per_network = 0\n" + kDefault), 0u) << "0: no bound";
  EXPECT_FALSE(parse_ok("[syn_auth]\nknown_good_per_network = 16\n" + kDefault).syn_auth == SynAuthSpec{})
      << "a reload that changes it is a change";
  auto msg = [](const std::string& text) {
    auto r = parse(text);
    return r.ok() ? "(accepted)" : r.error().message();
  };
  EXPECT_EQ(msg("[syn_auth]\nknown_good_per_network = -1\n" + kDefault),
            "t.toml:2: syn_auth.known_good_per_network: -1 is negative; write e.g. 500, \"10k\" or \"1.5M\"");
  EXPECT_EQ(msg("[syn_auth]\nknown_good_per_network = \"2M\"\n" + kDefault),
            "t.toml:2: syn_auth.known_good_per_network: 2000000 is out of range; give 0 to 1M");
}

// A rate given without its burst: the hint says whose burst it is. network_burst and
// answer_burst are a network's, not a source's.
TEST(ConfigMessages, EachMissingBurstSaysWhoseBurstItIs) {
  const std::pair<std::string, std::string> cases[] = {
      {"[auto]\nnetwork_rate = \"10k\"\n" + kDefault,
       "t.toml:2: auto.network_rate: given without network_burst; add network_burst: how much one escalated network "
       "may send at once"},
      {"[syn_auth]\nanswer_rate = 1000\n" + kDefault,
       "t.toml:2: syn_auth.answer_rate: given without answer_burst; add answer_burst: how many SYN-ACKs levee may "
       "send one network at once"},
      {"[default]\nrate = 10\n",
       "t.toml:2: default.rate: given without burst; add burst: how much one source may send at once"},
      {"[default]\nrate = 10\nburst = 10\nnetwork = { rate = 5 }\n",
       "t.toml:4: default.network.rate: given without burst; add burst: how much one network may send at once"},
      {"[default]\nrate = 10\nburst = 10\ntotal = { rate = 5 }\n",
       "t.toml:4: default.total.rate: given without burst; add burst: how much the class may pass at once"},
  };
  for (const auto& [text, want] : cases) {
    auto r = parse(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().message(), want);
  }
}

// A random-source flood answered at the cap puts cap / LV_ANSWER_CELLS answers a second
// on each cell of lv_answers: a per-network rate under twice that would refuse clients.
TEST(ConfigSynAuth, AnAnswerRateARandomFloodWouldMeetIsRefused) {
  auto msg = [](const std::string& text) {
    auto r = parse(text);
    return r.ok() ? "(accepted)" : r.error().message();
  };
  const std::string web =
      "[[class]]\nname = \"web\"\nmatch.proto = \"tcp\"\nrate = 1\nburst = 1\nsyn_auth = \"cookie\"\n";
  static_assert(LV_ANSWER_CELLS == 16384, "the figures below");
  // At the key, with file:line, as every other error of the file.
  EXPECT_EQ(msg("[syn_auth]\nanswer_rate = 200\nanswer_burst = 100\n" + web + kDefault),
            "t.toml:2: syn_auth.answer_rate: 200 a second is under 611: a flood of random sources at answer_cap 5M "
            "would meet it in levee's 16384 network cells and refuse new clients; raise answer_rate to at least 611, "
            "or lower answer_cap to at most 1638400");
  // Only the cap given: at the cap, naming the rate it cannot live with.
  EXPECT_EQ(msg("[syn_auth]\nanswer_cap = \"9M\"\n" + web + kDefault),
            "t.toml:2: syn_auth.answer_cap: answer_rate 1000 a second is under 1099: a flood of random sources at "
            "answer_cap 9M would meet it in levee's 16384 network cells and refuse new clients; raise answer_rate to "
            "at least 1099, or lower answer_cap to at most 8192000");
  EXPECT_EQ(msg("[syn_auth]\nanswer_rate = 611\nanswer_burst = 100\n" + web + kDefault), "(accepted)");
  EXPECT_EQ(msg("[syn_auth]\nanswer_rate = 200\nanswer_burst = 100\nanswer_cap = \"1M\"\n" + web + kDefault),
            "(accepted)");
  EXPECT_NE(msg("[syn_auth]\nanswer_rate = 200\nanswer_burst = 100\n" + kDefault), "(accepted)")
      << "the default class answers SYNs: syn_auth is \"auto\" where it fits";
  EXPECT_EQ(msg("[syn_auth]\nanswer_rate = 200\nanswer_burst = 100\n[default]\nrate = 1\nburst = 1\n"
                "new_sources = \"off\"\n"),
            "(accepted)")
      << "no class answers SYNs";
}

}  // namespace
}  // namespace levee
