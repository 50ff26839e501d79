// class_limits_test.cpp - the limits beyond one source's rate: new-source admission,
// network and class totals, escalating bans, monitor mode and a full map's policy. How
// the config file states them (userspace/policy/config) and what compile() makes of
// them for the datapath (userspace/policy/policy).
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>

#include "core/units.hpp"
#include "policy/config.hpp"
#include "policy/policy.hpp"

namespace levee {
namespace {

constexpr uint64_t kSec = 1'000'000'000;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kNow = 1'767'225'600 * kSec;  // 2026-01-01T00:00:00Z
constexpr uint64_t kTick = 4'000'000;            // HZ=250
const std::string kDefault = "[default]\nrate = 100\nburst = 10\n";
const Clocks kClocks{kTick, kNow, 1000 * kSec};

Policy parse_ok(const std::string& text) {
  auto r = parse_config(text, "t.toml", kNow);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message()) << "\n--- in:\n" << text;
  return r.ok() ? r.value() : Policy{};
}

const ClassSpec& named(const Policy& p, const std::string& name) {
  for (const ClassSpec& c : p.classes)
    if (c.name == name) return c;
  ADD_FAILURE() << "no class " << name;
  return p.classes.back();
}

template <size_t N>
std::array<uint8_t, N> bytes_of(const void* p) {
  std::array<uint8_t, N> b{};
  std::memcpy(b.data(), p, N);
  return b;
}

// ---- durations ------------------------------------------------------------------

TEST(Durations, MillisecondsSecondsMinutesHoursDays) {
  const std::pair<const char*, uint64_t> cases[] = {
      {"500ms", 500 * kMs},      {"2s", 2 * kSec},     {"1m", 60 * kSec},       {"1h", 3600 * kSec},
      {"7d", 7 * 86400 * kSec},  {"1m30s", 90 * kSec}, {"1s500ms", 1500 * kMs}, {"0s", 0},
      {"36500d", kMaxDurationNs}};
  for (auto [text, ns] : cases) EXPECT_EQ(parse_duration_ns(text), ns) << text;
  for (const char* bad : {"", "5", "ms", "1.5s", "2 s", "-1s", "1w", "5us", "1h30", "36501d", "1msx", "s5"})
    EXPECT_EQ(parse_duration_ns(bad), std::nullopt) << '"' << bad << '"';
}

TEST(Durations, FormatReadsBack) {
  EXPECT_EQ(format_duration(500 * kMs), "500ms");
  EXPECT_EQ(format_duration(2 * kSec), "2s");
  EXPECT_EQ(format_duration(90 * kSec), "1m30s");
  EXPECT_EQ(format_duration(3600 * kSec), "1h");
  EXPECT_EQ(format_duration(36 * 3600 * kSec), "1d12h");
  for (uint64_t ns : {kMs, 1500 * kMs, 61 * kSec, 86400 * kSec + kMs, kMaxDurationNs})
    EXPECT_EQ(parse_duration_ns(format_duration(ns)), ns) << ns;
}

// ---- the config keys --------------------------------------------------------------

TEST(ConfigAdmission, NewSourcesWithTheirBurst) {
  Policy p = parse_ok("[default]\nrate = 10\nburst = 5\nnew_sources = \"1k\"\nnew_sources_burst = 300\n");
  EXPECT_EQ(p.classes[0].new_sources, (Rate{1000, 300}));
  // The burst defaults to a tenth of a second's worth, at least one.
  EXPECT_EQ(parse_ok("[default]\nrate = 10\nburst = 5\nnew_sources = 250\n").classes[0].new_sources, (Rate{250, 25}));
  EXPECT_EQ(parse_ok("[default]\nrate = 10\nburst = 5\nnew_sources = 5\n").classes[0].new_sources, (Rate{5, 1}));
  EXPECT_FALSE(parse_ok(kDefault).classes[0].new_sources.set());
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

  // A copy: the Policy parse_ok returns is a temporary, gone at the end of the statement.
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

// ---- broken files: FILE:LINE: KEY, the problem, and what to do ----------------------

struct Broken {
  const char* what;
  std::string text;
  unsigned line;
  std::string key;
  std::string says;
};

std::vector<Broken> broken() {
  const std::string c = "[[class]]\nname = \"c\"\nmatch.port = 1\nrate = 1\nburst = 1\n";  // lines 1-5
  return {
      {"negative new_sources", "[default]\nrate = 1\nburst = 1\nnew_sources = -5\n", 4, "default.new_sources",
       "-5 is negative"},
      {"zero new_sources", c + "new_sources = 0\n" + kDefault, 6, "class[0].new_sources",
       "0 is out of range; give 1 to 10M (for no admission limit, leave out new_sources)"},
      {"new_sources_burst 0", c + "new_sources = 5\nnew_sources_burst = 0\n" + kDefault, 7,
       "class[0].new_sources_burst", "out of range"},
      {"new_sources_burst alone", c + "new_sources_burst = 10\n" + kDefault, 6, "class[0].new_sources_burst",
       "given without new_sources"},
      {"new_sources_burst alone in [defaults]", "[defaults]\nnew_sources_burst = 10\n" + kDefault, 2,
       "defaults.new_sources_burst", "given without new_sources"},
      {"bad duration", c + "ban = \"2 hours\"\n" + kDefault, 6, "class[0].ban", "'2 hours' is not a duration"},
      {"duration without a unit", "[default]\nrate = 1\nburst = 1\nban = \"90\"\n", 4, "default.ban",
       "not a duration; write a duration like \"500ms\""},
      {"negative duration", "[default]\nrate = 1\nburst = 1\nban = \"-1s\"\n", 4, "default.ban", "not a duration"},
      {"zero ban", "[default]\nrate = 1\nburst = 1\nban = \"0s\"\n", 4, "default.ban", "no time at all"},
      {"ban as a number", "[default]\nrate = 1\nburst = 1\nban = 2\n", 4, "default.ban",
       "expected a duration string, got an integer"},
      {"zero forget_after", "[default]\nrate = 1\nburst = 1\nban = \"1s\"\nforget_after = \"0ms\"\n", 5,
       "default.forget_after", "no time at all"},
      {"ban_max shorter than ban", "[default]\nrate = 1\nburst = 1\nban = \"10m\"\nban_max = \"5m\"\n", 5,
       "default.ban_max", "5m is shorter than the first ban, 10m; give ban_max at least as long as ban"},
      {"ban_max from [defaults] shorter than a class's ban",
       "[defaults]\nban_max = \"1m\"\n" + c + "ban = \"2m\"\n" + kDefault, 2, "defaults.ban_max",
       "is shorter than the first ban"},
      {"ban_max without ban", "[default]\nrate = 1\nburst = 1\nban_max = \"5m\"\n", 4, "default.ban_max",
       "given without ban"},
      {"ban_scope without ban", c + "ban_scope = \"all\"\n" + kDefault, 6, "class[0].ban_scope", "given without ban"},
      {"bad scope", "[default]\nrate = 1\nburst = 1\nban = \"1s\"\nban_scope = \"global\"\n", 5, "default.ban_scope",
       "'global' is not a valid ban_scope; give \"class\" or \"all\""},
      {"bad mode", c + "mode = \"dry-run\"\n" + kDefault, 6, "class[0].mode",
       "'dry-run' is not a valid mode; give \"enforce\" or \"monitor\""},
      {"bad mode in [defaults]", "[defaults]\nmode = \"monitoring\"\n" + kDefault, 2, "defaults.mode",
       "'monitoring' is not a valid mode"},
      {"ban without a limit per source", "[default]\ntotal = { rate = 5, burst = 5 }\nban = \"1s\"\n", 3, "default.ban",
       "class 'default' bans sources (ban) but has no limit per source to be over"},
      {"ban from [defaults] in a class without a limit per source",
       "[defaults]\nban = \"1s\"\n[default] #<\ntotal = { rate = 5, burst = 5 }\n", 3, "default",
       "bans sources (ban from [defaults])"},
      {"network prefix4 longer than the source prefix",
       c + "prefix4 = 24\nnetwork = { prefix4 = 28, rate = 5, burst = 5 }\n" + kDefault, 7, "class[0].network.prefix4",
       "/28 is narrower than one source of the class, /24; a network holds whole sources: give network.prefix4 = 24 "
       "or less"},
      {"network prefix6 by default longer than the source prefix",
       c + "prefix6 = 32\nnetwork = { rate = 5, burst = 5 }\n" + kDefault, 7, "class[0].network.prefix6",
       "/48 is narrower than one source of the class, /32"},
      {"network prefix out of range", c + "network = { prefix4 = 0, rate = 5, burst = 5 }\n" + kDefault, 6,
       "class[0].network.prefix4", "give 1 to 32"},
      {"network without a limit", c + "network = { prefix4 = 16 }\n" + kDefault, 6, "class[0].network", "no limit"},
      {"network rate without burst", c + "network = { rate = 5 }\n" + kDefault, 6, "class[0].network.rate",
       "given without burst"},
      {"unknown key in network", c + "network = { rate = 5, burst = 5, prefix = 24 }\n" + kDefault, 6,
       "class[0].network.prefix", "unknown key; did you mean 'prefix4'?"},
      {"unknown key in a network sub-table", c + "[class.network]\nrate = 5\nburst = 5\nbytes = 7\n" + kDefault, 9,
       "class[0].network.bytes", "unknown key"},
      {"network not a table", c + "network = 24\n" + kDefault, 6, "class[0].network", "expected a table"},
      {"unknown key in total", c + "total = { rate = 5, burst = 5, prefix4 = 24 }\n" + kDefault, 6,
       "class[0].total.prefix4", "unknown key; the keys here are rate, burst, bytes_rate, bytes_burst"},
      {"empty total", c + "total = {}\n" + kDefault, 6, "class[0].total", "no limit"},
      {"total rate 0", c + "total = { rate = 0, burst = 5 }\n" + kDefault, 6, "class[0].total.rate", "out of range"},
      {"negative network rate", c + "network = { rate = -1, burst = 5 }\n" + kDefault, 6, "class[0].network.rate",
       "-1 is negative"},
      {"all-scope classes with different prefixes",
       "[[class]]\nname = \"a\"\nmatch.port = 1\nrate = 1\nburst = 1\nban = \"1s\"\nban_scope = \"all\"\nprefix4 = 24\n"
       "[default]\nrate = 1\nburst = 1\nban = \"1s\"\nban_scope = \"all\"\n",
       13, "default.ban_scope",
       "class 'default' bans in every class per /32 (IPv4), /64 (IPv6), and class 'a' per /24, /64; a source has one "
       "ban in every class"},
      {"all-scope from [defaults] with different prefixes",
       "[defaults]\nban = \"1s\"\nban_scope = \"all\"\n"
       "[[class]]\nname = \"a\"\nmatch.port = 1\nrate = 1\nburst = 1\nprefix6 = 48\n" +
           kDefault,
       3, "defaults.ban_scope", "class 'default' bans in every class"},
      {"bad when_full", "[interface]\nwhen_full = \"drop\"\n" + kDefault, 2, "interface.when_full",
       "give \"evict\" or \"refuse\""},
      {"max_bans 0", "[interface]\nmax_bans = 0\n" + kDefault, 2, "interface.max_bans", "give 1 to 100M"},
      {"bad deny_in_monitor", kDefault + "[lists]\ndeny_in_monitor = true\n", 5, "lists.deny_in_monitor",
       "expected a string, got a boolean"},
      {"unknown deny_in_monitor", kDefault + "[lists]\ndeny_in_monitor = \"pass\"\n", 5, "lists.deny_in_monitor",
       "give \"count\" or \"drop\""},
  };
}

TEST(ConfigBrokenLimits, EachIsOneLineWithFileLineAndKey) {
  for (const Broken& b : broken()) {
    SCOPED_TRACE(b.what);
    auto r = parse_config(b.text, "t.toml", kNow);
    ASSERT_FALSE(r.ok()) << "accepted:\n" << b.text;
    const std::string m = r.error().message();
    EXPECT_TRUE(r.error().usage) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    const std::string at = fmt::format("t.toml:{}: {}: ", b.line, b.key);
    EXPECT_EQ(m.compare(0, at.size(), at), 0) << "want " << at << " in: " << m;
    EXPECT_NE(m.find(b.says), std::string::npos) << "want '" << b.says << "' in: " << m;
  }
}

// ---- compile: what the datapath reads ---------------------------------------------

ClassSpec spec(const std::string& name) {
  ClassSpec c;
  c.name = name;
  c.packets = {1000, 100};  // T = 1 ms, tau = 99 ms
  return c;
}

TEST(CompileLimits, AdmissionNetworkTotalAndTheirFlags) {
  ClassSpec c = spec("c");
  c.prefix4 = 32;
  c.prefix6 = 64;
  c.new_sources = {200, 20};
  c.network.prefix4 = 24;
  c.network.prefix6 = 48;
  c.network.packets = {10'000, 1'000};
  c.network.bytes = {1'000'000, 100'000};
  c.total.packets = {50'000, 5'000};
  const lv_class k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.admit.cost, 5'000'000u) << "1e9 / 200";
  EXPECT_EQ(k.admit.tau_ns, 19 * 5'000'000u);
  EXPECT_EQ(k.admit.rate, 200u);
  EXPECT_EQ(k.admit.burst, 20u);
  const lv_limit np = compile_packet_limit({10'000, 1'000});
  EXPECT_EQ(std::memcmp(&k.net_pkt, &np, sizeof np), 0);
  const lv_limit nb = compile_byte_limit({1'000'000, 100'000});
  EXPECT_EQ(std::memcmp(&k.net_bytes, &nb, sizeof nb), 0);
  const lv_limit tp = compile_packet_limit({50'000, 5'000});
  EXPECT_EQ(std::memcmp(&k.total_pkt, &tp, sizeof tp), 0);
  EXPECT_EQ(k.total_bytes.cost, 0u);
  EXPECT_EQ(k.net_prefix4, 24);
  EXPECT_EQ(k.net_prefix6, 48);
  EXPECT_EQ(bytes_of<4>(&k.net_mask4), (std::array<uint8_t, 4>{0xff, 0xff, 0xff, 0}));
  EXPECT_EQ(bytes_of<16>(k.net_mask6),
            (std::array<uint8_t, 16>{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bytes_of<4>(&k.mask4), (std::array<uint8_t, 4>{0xff, 0xff, 0xff, 0xff})) << "the source's own prefix";
  const uint32_t want = LV_CLASS_ADMIT | LV_CLASS_NETWORK | LV_CLASS_TOTAL | LV_CLASS_FAST_REJECT;
  EXPECT_EQ(k.flags, want);
  EXPECT_EQ(k.ban_ns, 0u);

  // Each kind alone sets its flag alone (a burst of one keeps the fast reject off).
  ClassSpec only = spec("o");
  only.packets = {1000, 1};
  only.new_sources = {10, 1};
  EXPECT_EQ(compile_class(only, kTick, 2).flags, uint32_t{LV_CLASS_ADMIT});
  only.new_sources = {};
  only.network.bytes = {1000, 1000};
  EXPECT_EQ(compile_class(only, kTick, 2).flags, uint32_t{LV_CLASS_NETWORK});
  only.network.bytes = {};
  only.total.bytes = {1000, 1000};
  EXPECT_EQ(compile_class(only, kTick, 2).flags, uint32_t{LV_CLASS_TOTAL});
}

TEST(CompileLimits, FastRejectNeedsEveryLimitToCoverTwoTicks) {
  ClassSpec c = spec("c");  // per-source tau 99 ms: fast on its own
  ASSERT_TRUE(compile_class(c, kTick, 2).flags & LV_CLASS_FAST_REJECT);
  struct Case {
    const char* what;
    void (*set)(ClassSpec&, bool wide);
  };
  // For each kind: a tau of 2 ticks exactly keeps it, one ns less loses it.
  const Case cases[] = {
      {"admission",
       [](ClassSpec& s, bool w) {
         s.new_sources = {1000, w ? 9u : 8u};
       }},  // tau 8 ms / 7 ms
      {"network packets",
       [](ClassSpec& s, bool w) {
         s.network.packets = {1000, w ? 9u : 8u};
       }},
      {"network bytes",
       [](ClassSpec& s, bool w) {
         s.network.bytes = {1'000'000, w ? 8'000u : 7'999u};
       }},
      {"total packets",
       [](ClassSpec& s, bool w) {
         s.total.packets = {1000, w ? 9u : 8u};
       }},
      {"total bytes",
       [](ClassSpec& s, bool w) {
         s.total.bytes = {1'000'000, w ? 8'000u : 7'999u};
       }},
  };
  for (const Case& k : cases) {
    ClassSpec wide = c, narrow = c;
    k.set(wide, true);
    k.set(narrow, false);
    EXPECT_TRUE(compile_class(wide, kTick, 2).flags & LV_CLASS_FAST_REJECT) << k.what;
    EXPECT_FALSE(compile_class(narrow, kTick, 2).flags & LV_CLASS_FAST_REJECT) << k.what;
  }
}

TEST(CompileLimits, LeaseIsAMillisecondAtMostAndAShareOfTheTotalsTau) {
  ClassSpec c = spec("c");
  EXPECT_EQ(compile_class(c, kTick, 4).lease_ns, 0u) << "no total";
  c.total.packets = {1000, 100};  // tau 99 ms: 99 ms / 8 is over a millisecond
  EXPECT_EQ(compile_class(c, kTick, 4).lease_ns, kMs);
  c.total.packets = {1000, 2};  // tau 1 ms
  EXPECT_EQ(compile_class(c, kTick, 4).lease_ns, kMs / 8);
  EXPECT_EQ(compile_class(c, kTick, 1).lease_ns, kMs / 2);
  c.total.packets = {1000, 1};  // tau 0: no lease at all, every packet asks the shared budget
  EXPECT_EQ(compile_class(c, kTick, 4).lease_ns, 0u);
  // Both limits: the smaller share. Bytes: 1 MB/s, burst 1500 B: tau 1.5 ms.
  c.total.packets = {1000, 100};
  c.total.bytes = {1'000'000, 1'500};
  EXPECT_EQ(compile_class(c, kTick, 4).lease_ns, 1'500'000u / 8);
  c.total.packets = {};
  EXPECT_EQ(compile_class(c, kTick, 2).lease_ns, 1'500'000u / 4);
  // The machine's CPUs by default.
  EXPECT_EQ(compile_class(c, kTick).lease_ns, std::min<uint64_t>(kMs, 1'500'000u / (2 * possible_cpus())));
}

TEST(CompileLimits, Bans) {
  ClassSpec c = spec("c");
  c.ban.ban_ns = 2 * kSec;
  lv_class k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.ban_ns, 2 * kSec);
  EXPECT_EQ(k.ban_max_ns, 3600 * kSec);
  EXPECT_EQ(k.forget_ns, 3600 * kSec);
  EXPECT_EQ(k.flags & (LV_CLASS_BAN | LV_CLASS_BAN_ALL), uint32_t{LV_CLASS_BAN});
  c.ban.max_ns = 60 * kSec;
  c.ban.forget_ns = 10 * kSec;
  c.ban.all_classes = true;
  k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.ban_max_ns, 60 * kSec);
  EXPECT_EQ(k.forget_ns, 10 * kSec);
  EXPECT_EQ(k.flags & (LV_CLASS_BAN | LV_CLASS_BAN_ALL), uint32_t{LV_CLASS_BAN | LV_CLASS_BAN_ALL});
}

Policy two_classes() {
  Policy p;
  ClassSpec dns = spec("dns");
  dns.match.protos = {Proto::Udp};
  dns.match.ports = {{53, 53}};
  dns.prefix4 = 24;
  dns.prefix6 = 48;
  p.classes = {dns, spec("default")};
  return p;
}

TEST(CompilePolicy, MonitorModesFoldIntoEveryClass) {
  Policy p = two_classes();
  p.classes[0].monitor = true;
  auto c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  const lv_policy& s = c->slot;
  EXPECT_EQ(s.flags & LV_POL_MONITOR, 0u);
  EXPECT_EQ(s.classes[0].flags & (LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN),
            uint32_t{LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN});
  EXPECT_EQ(s.classes[1].flags & (LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN), 0u);

  // The interface's switch: every class monitors, their own modes are kept apart.
  p.monitor = true;
  c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  EXPECT_TRUE(c->slot.flags & LV_POL_MONITOR);
  EXPECT_EQ(c->slot.classes[0].flags & (LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN),
            uint32_t{LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN});
  EXPECT_EQ(c->slot.classes[1].flags & (LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN), uint32_t{LV_CLASS_MONITOR});

  // Switched off again (levee set --mode enforce): only the class's own mode is left.
  lv_policy next = c->slot;
  next.flags &= ~uint32_t{LV_POL_MONITOR};
  apply_interface(next);
  EXPECT_TRUE(next.classes[0].flags & LV_CLASS_MONITOR);
  EXPECT_FALSE(next.classes[1].flags & LV_CLASS_MONITOR);
}

TEST(CompilePolicy, PolicyFlags) {
  Policy p = two_classes();
  auto c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  EXPECT_EQ(c->slot.flags, 0u);
  p.deny_in_monitor = true;
  p.iface.refuse_full = true;
  p.iface.max_sources = 10'000;
  c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  EXPECT_EQ(c->slot.flags, uint32_t{LV_POL_MONITOR_DENY | LV_POL_REFUSE_FULL});
  EXPECT_EQ(c->slot.full_at, refuse_full_at(10'000, possible_cpus()));
}

TEST(CompilePolicy, BansInEveryClassShareTheirPrefix) {
  Policy p = two_classes();
  p.classes[0].ban.ban_ns = kSec;  // dns: this class only
  auto c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  EXPECT_EQ(c->slot.flags & LV_POL_BAN_ALL, 0u);
  EXPECT_EQ(c->slot.ban_mask4, 0u);

  p.classes[0].ban.all_classes = true;  // per /24 and /48
  c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  EXPECT_TRUE(c->slot.flags & LV_POL_BAN_ALL);
  EXPECT_EQ(bytes_of<4>(&c->slot.ban_mask4), (std::array<uint8_t, 4>{0xff, 0xff, 0xff, 0}));
  EXPECT_EQ(bytes_of<16>(c->slot.ban_mask6),
            (std::array<uint8_t, 16>{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));

  // A second class banning in every class must count sources the same way.
  p.classes[1].ban = p.classes[0].ban;
  Status st = validate(p, kNow);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("class 'default' bans in every class per /32 (IPv4), /64 (IPv6)"),
            std::string::npos)
      << st.error().message();
  p.classes[1].prefix4 = 24;
  p.classes[1].prefix6 = 48;
  EXPECT_TRUE(validate(p, kNow).ok());
}

TEST(CompilePolicy, ValidateChecksWhatTheCommandLineCanGetWrong) {
  auto error_of = [](const ClassSpec& c) {
    Policy p;
    p.classes = {c};
    Status st = validate(p, kNow);
    return st.ok() ? std::string("(accepted)") : st.error().message();
  };
  ClassSpec c = spec("default");
  c.ban.ban_ns = 10 * 60 * kSec;
  c.ban.max_ns = 60 * kSec;
  EXPECT_NE(error_of(c).find("ban_max 1m is shorter than the first ban, 10m"), std::string::npos) << error_of(c);
  c = spec("default");
  c.packets = {};
  c.total.packets = {10, 10};
  c.ban.ban_ns = kSec;
  EXPECT_NE(error_of(c).find("no limit per source"), std::string::npos) << error_of(c);
  c = spec("default");
  c.prefix4 = 16;
  c.network.packets = {10, 10};  // per /24: narrower than a /16 source
  EXPECT_NE(error_of(c).find("narrower than one source"), std::string::npos) << error_of(c);
  c = spec("default");
  c.new_sources = {0, 5};
  EXPECT_NE(error_of(c).find("new-source rate 0 is out of range"), std::string::npos) << error_of(c);
  c = spec("default");
  c.packets = {};
  EXPECT_NE(error_of(c).find("has no limit"), std::string::npos) << error_of(c);
  c.network.packets = {10, 10};
  EXPECT_EQ(error_of(c), "(accepted)") << "a network limit is a limit";
}

TEST(CompilePolicy, ClassOfReadsEverythingBack) {
  // `levee set` recompiles a class from the slot: nothing may be lost on the way.
  ClassSpec c = spec("c");
  c.bytes = {1'000'000, 10'000};
  c.prefix4 = 28;
  c.prefix6 = 60;
  c.new_sources = {300, 30};
  c.network = {20, 44, {5000, 500}, {9'000'000, 90'000}, {}};
  c.total = {{70'000, 7'000}, {}, {}};
  c.ban = {3 * kSec, 120 * kSec, 600 * kSec, true, {}, {}};
  c.monitor = true;
  const lv_class k = compile_class(c, kTick, 2);
  const lv_class again = compile_class(class_of(k), kTick, 2);
  EXPECT_EQ(std::memcmp(&k, &again, sizeof k), 0);
  const ClassSpec back = class_of(k);
  EXPECT_EQ(back.new_sources, c.new_sources);
  EXPECT_EQ(back.network.prefix4, 20u);
  EXPECT_EQ(back.network.bytes, c.network.bytes);
  EXPECT_EQ(back.total.packets, c.total.packets);
  EXPECT_EQ(back.ban.max_ns, 120 * kSec);
  EXPECT_TRUE(back.ban.all_classes);
  EXPECT_TRUE(back.monitor);
  // The interface's switch is not the class's own mode.
  lv_class switched = compile_class(spec("d"), kTick, 2);
  switched.flags |= LV_CLASS_MONITOR;
  EXPECT_FALSE(class_of(switched).monitor);
}

TEST(RefuseFull, JustUnderTheMapSize) {
  EXPECT_EQ(refuse_full_at(1'000'000, 2), 1'000'000u - 512);
  EXPECT_EQ(refuse_full_at(1'000'000, 64), 1'000'000u - 256 * 64);
  EXPECT_EQ(refuse_full_at(1000, 4), 500u) << "never below half the map";
  EXPECT_EQ(refuse_full_at(1, 1), 1u);
}

TEST(ConfigCompiled, FromTheFileToTheSlot) {
  Policy p = parse_ok(R"([interface]
when_full = "refuse"
max_sources = "100k"
[defaults]
ban = "2s"
[[class]]
name = "web-syn"
match.proto = "tcp"
match.port = 443
match.syn = true
rate = 100
burst = 200
new_sources = 500
ban_scope = "all"
prefix4 = 24
prefix6 = 48
[[class]]
name = "dns"
match.port = 53
rate = 500
burst = 100
network = { rate = "5k", burst = 500 }
mode = "monitor"
[default]
rate = "10k"
burst = "1k"
total = { rate = "1M", burst = "100k" }
[lists]
deny_in_monitor = "drop"
)");
  auto c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  const lv_policy& s = c->slot;
  EXPECT_EQ(s.flags, uint32_t{LV_POL_REFUSE_FULL | LV_POL_MONITOR_DENY | LV_POL_BAN_ALL});
  EXPECT_EQ(s.full_at, refuse_full_at(100'000, possible_cpus()));
  EXPECT_EQ(bytes_of<4>(&s.ban_mask4), (std::array<uint8_t, 4>{0xff, 0xff, 0xff, 0}));
  const lv_class& syn = s.classes[0];
  EXPECT_EQ(syn.admit.rate, 500u);
  EXPECT_EQ(syn.admit.burst, 50u);
  EXPECT_EQ(syn.ban_ns, 2 * kSec);
  EXPECT_TRUE(syn.flags & LV_CLASS_BAN_ALL);
  const lv_class& dns = s.classes[1];
  EXPECT_EQ(dns.flags & (LV_CLASS_NETWORK | LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN | LV_CLASS_BAN | LV_CLASS_BAN_ALL),
            uint32_t{LV_CLASS_NETWORK | LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN | LV_CLASS_BAN});
  EXPECT_EQ(dns.net_pkt.rate, 5000u);
  const lv_class& def = s.classes[2];
  EXPECT_TRUE(def.flags & LV_CLASS_TOTAL);
  EXPECT_EQ(def.total_pkt.burst, 100'000u);
  EXPECT_EQ(def.lease_ns, kMs) << "tau 100 ms: a millisecond";
  EXPECT_FALSE(def.flags & LV_CLASS_MONITOR);
}

}  // namespace
}  // namespace levee
