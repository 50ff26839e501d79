// cli_limits_test.cpp - the command line and the output of issue 5's features: would-be
// drops in monitor mode, bans, admission, network and class limits, in `levee stats`,
// `show`, `status`, `set`, `attach` and `unban`.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "core/reasons.hpp"
#include "core/units.hpp"
#include "export/render_policy.hpp"
#include "export/render_show.hpp"
#include "export/render_stats.hpp"
#include "export/render_status.hpp"
#include "export/render_units.hpp"
#include "policy/compile.hpp"
#include "policy/keys.hpp"
#include "policy/policy.hpp"

namespace levee::cli {
namespace {

// ---- stats ------------------------------------------------------------------------

TEST(StatsMonitor, ReasonsOfIssue5AreCountedWhereTheyBelong) {
  Counters c;
  c.by_reason[LV_R_CONFORMING] = {10, 1000};
  c.by_reason[LV_R_MONITORED] = {7, 700};
  c.by_reason[LV_R_BAN] = {3, 180};
  c.by_reason[LV_R_ADMISSION] = {4, 240};
  c.by_reason[LV_R_NETWORK] = {5, 300};
  c.by_reason[LV_R_CLASS_LIMIT] = {6, 360};
  auto j = stats_json("eth0", c);
  EXPECT_EQ(j["passed"]["monitored"], 7) << "monitored packets pass";
  EXPECT_EQ(j["passed_packets"], 17);
  EXPECT_EQ(j["dropped"]["ban"], 3);
  EXPECT_EQ(j["dropped"]["admission"], 4);
  EXPECT_EQ(j["dropped"]["network"], 5);
  EXPECT_EQ(j["dropped"]["class_limit"], 6);
  EXPECT_EQ(j["dropped_packets"], 18);
  EXPECT_EQ(j["bytes"]["dropped"]["class_limit"], 360);
  EXPECT_FALSE(j["dropped"].contains("monitored"));
}

TEST(StatsMonitor, WouldDropHasEveryMonitorableReasonZerosToo) {
  Counters c;
  c.by_reason[LV_R_MONITORED] = {12, 1200};
  c.would[LV_R_RATE] = {9, 900};
  c.would[LV_R_BAN] = {3, 300};
  auto j = stats_json("eth0", c);
  ASSERT_TRUE(j.contains("would_drop"));
  ASSERT_TRUE(j.contains("would_drop_bytes"));
  const std::vector<std::string> want{"rate", "map_full",  "contended", "deny",       "bytes",
                                      "ban",  "admission", "network",   "class_limit"};
  EXPECT_EQ(j["would_drop"].size(), want.size()) << j["would_drop"].dump();
  for (const auto& r : want) {
    EXPECT_TRUE(j["would_drop"].contains(r)) << r;
    EXPECT_TRUE(j["would_drop"][r].is_number_unsigned()) << r;
    EXPECT_TRUE(j["would_drop_bytes"].contains(r)) << r;
  }
  // Not monitorable: always dropped, never "would". (The deny list is, unless
  // deny_in_monitor = "drop".)
  for (const char* r : {"malformed", "vlan_depth", "ext_depth", "conforming", "monitored"})
    EXPECT_FALSE(j["would_drop"].contains(r)) << r;
  EXPECT_EQ(j["would_drop"]["rate"], 9);
  EXPECT_EQ(j["would_drop"]["ban"], 3);
  EXPECT_EQ(j["would_drop"]["network"], 0);
  EXPECT_EQ(j["would_drop_bytes"]["rate"], 900);
  // Would-be drops passed: they are not in the drop counts.
  EXPECT_EQ(j["dropped_packets"], 0);
}

TEST(StatsMonitor, TextSectionWhenCountedOrMonitoring) {
  Counters none;
  EXPECT_EQ(stats_text("eth0", none).find("would drop"), std::string::npos);
  const std::string monitoring = stats_text("eth0", none, {}, true);
  EXPECT_NE(monitoring.find("would drop (monitor mode)"), std::string::npos) << monitoring;

  Counters c;
  c.would[LV_R_ADMISSION] = {1'234, 56'789};
  const std::string t = stats_text("eth0", c);
  const size_t section = t.find("would drop (monitor mode)\n");
  ASSERT_NE(section, std::string::npos) << t;
  const size_t row = t.find("  admission", section);
  ASSERT_NE(row, std::string::npos) << t;
  const std::string line = t.substr(row, t.find('\n', row) - row);
  EXPECT_NE(line.find("1,234"), std::string::npos) << line;
  EXPECT_NE(line.find("56,789"), std::string::npos) << line;
  // The reasons monitor mode can count only.
  EXPECT_EQ(t.find("  malformed", section), std::string::npos) << t;
  EXPECT_NE(t.find("  deny", section), std::string::npos) << t;
}

TEST(StatsMonitor, RatesLineSaysWhatWouldBeDropped) {
  Counters a, b;
  b.by_reason[LV_R_MONITORED] = {5000, 0};
  b.would[LV_R_RATE] = {5000, 0};
  const std::string line = rates_line(a, b, 1.0);
  EXPECT_NE(line.find("would drop 5.00k pps"), std::string::npos) << line;
  EXPECT_EQ(rates_line(a, a, 1.0).find("would"), std::string::npos);
}

TEST(Reasons, EveryAbiReasonHasANameAndHelp) {
  for (unsigned r : {LV_R_MONITORED, LV_R_BAN, LV_R_ADMISSION, LV_R_NETWORK, LV_R_CLASS_LIMIT}) {
    auto it = std::find_if(kReasons.begin(), kReasons.end(), [&](const ReasonInfo& i) { return i.id == r; });
    ASSERT_NE(it, kReasons.end()) << r;
    EXPECT_FALSE(it->help.empty()) << it->name;
  }
  EXPECT_FALSE(monitorable(LV_R_DENY));
  EXPECT_TRUE(would_drop_reason(LV_R_DENY));
  EXPECT_FALSE(would_drop_reason(LV_R_MALFORMED));
  EXPECT_FALSE(monitorable(LV_R_MALFORMED));
  EXPECT_TRUE(monitorable(LV_R_CLASS_LIMIT));
  for (size_t i = 1; i < kReasons.size(); ++i) EXPECT_LT(kReasons[i - 1].id, kReasons[i].id) << "ABI order";
}

// ---- the command line -------------------------------------------------------------

Parsed parse_args(std::vector<const char*> args) {
  std::vector<const char*> argv{"levee"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse(static_cast<int>(argv.size()), argv.data());
}

TEST(CliParseLimits, AttachShorthandWithAdmissionBansAndMonitor) {
  auto p =
      parse_args({"attach", "eth0", "--rate", "1k", "--burst", "100", "--new-sources", "500", "--new-sources-burst",
                  "50", "--ban", "2s", "--ban-max", "10m", "--forget-after", "30m", "--monitor"});
  ASSERT_TRUE(p.invocation) << p.err;
  const AttachArgs& a = p.invocation->attach;
  EXPECT_EQ(a.new_sources, "500");
  EXPECT_EQ(a.new_sources_burst, "50");
  EXPECT_EQ(a.ban, "2s");
  EXPECT_EQ(a.ban_max, "10m");
  EXPECT_EQ(a.forget_after, "30m");
  EXPECT_TRUE(a.monitor);
  // --monitor goes with a config file too; it is off unless given.
  auto c = parse_args({"attach", "eth0", "--config", "f.toml", "--monitor"});
  ASSERT_TRUE(c.invocation) << c.err;
  EXPECT_TRUE(c.invocation->attach.monitor);
  EXPECT_FALSE(parse_args({"attach", "eth0", "--config", "f.toml"}).invocation->attach.monitor);
}

TEST(CliParseLimits, SetWithEveryNewOption) {
  auto p = parse_args({"set", "eth0", "--class", "dns", "--new-sources", "off", "--new-sources-burst", "7", "--ban",
                       "500ms", "--ban-max", "1m", "--forget-after", "2h", "--mode", "monitor"});
  ASSERT_TRUE(p.invocation) << p.err;
  const SetArgs& s = p.invocation->set;
  EXPECT_EQ(s.class_name, "dns");
  EXPECT_EQ(s.new_sources, "off");
  EXPECT_EQ(s.new_sources_burst, "7");
  EXPECT_EQ(s.ban, "500ms");
  EXPECT_EQ(s.ban_max, "1m");
  EXPECT_EQ(s.forget_after, "2h");
  EXPECT_EQ(s.mode, "monitor");
  auto m = parse_args({"set", "eth0", "--mode", "enforce"});
  ASSERT_TRUE(m.invocation) << m.err;
  EXPECT_EQ(m.invocation->set.mode, "enforce");
  EXPECT_TRUE(m.invocation->set.rate.empty());
}

TEST(CliParseLimits, Unban) {
  auto p = parse_args({"unban", "eth0", "198.18.0.7"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Unban);
  EXPECT_EQ(p.invocation->unban.iface, "eth0");
  EXPECT_EQ(p.invocation->unban.address, "198.18.0.7");
  EXPECT_TRUE(p.invocation->unban.class_name.empty());
  auto c = parse_args({"unban", "eth0", "2001:db8::7", "--class", "dns"});
  ASSERT_TRUE(c.invocation) << c.err;
  EXPECT_EQ(c.invocation->unban.class_name, "dns");
}

TEST(CliParseLimits, UsageErrorsPointAtTheRightHelp) {
  struct Case {
    std::vector<const char*> args;
    const char* help;
  };
  for (const Case& c : std::vector<Case>{
           {{"set", "eth0", "--mode", "dry-run"}, "levee set --help"},
           {{"set", "eth0", "--mode"}, "levee set --help"},
           {{"attach", "eth0", "--config", "f", "--new-sources", "5"}, "levee attach --help"},
           {{"attach", "eth0", "--config", "f", "--ban", "2s"}, "levee attach --help"},
           {{"attach", "eth0", "--rate", "5", "--burst", "5", "--ban-max", "1m"}, "levee attach --help"},  // no --ban
           {{"attach", "eth0", "--rate", "5", "--burst", "5", "--new-sources-burst", "9"}, "levee attach --help"},
           {{"unban", "eth0"}, "levee unban --help"},
           {{"unban", "eth0", "198.18.0.7", "198.18.0.8"}, "levee unban --help"},
           {{"unban", "eth0", "198.18.0.7", "--class"}, "levee unban --help"},
       }) {
    auto p = parse_args(c.args);
    EXPECT_FALSE(p.invocation) << c.help;
    EXPECT_EQ(p.exit_code, kExitUsage) << c.help;
    EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << "one line: " << p.err;
    EXPECT_NE(p.err.find(std::string("see: ") + c.help), std::string::npos) << p.err;
  }
}

TEST(CliParseLimits, UnbanHasHelpWithAnExample) {
  auto p = parse_args({"unban", "--help"});
  EXPECT_EQ(p.exit_code, kExitOk);
  EXPECT_NE(p.out.find("Example"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("levee unban eth0 198.18.0.7"), std::string::npos) << p.out;
  auto top = parse_args({"--help"});
  EXPECT_NE(top.out.find("unban"), std::string::npos) << top.out;
  auto set = parse_args({"set", "--help"});
  for (const char* opt : {"--new-sources", "--new-sources-burst", "--ban", "--ban-max", "--forget-after", "--mode"})
    EXPECT_NE(set.out.find(opt), std::string::npos) << opt;
  auto at = parse_args({"attach", "--help"});
  for (const char* opt : {"--new-sources", "--ban", "--monitor"}) EXPECT_NE(at.out.find(opt), std::string::npos) << opt;
}

// Values are checked before any privilege or kernel check: these need no interface.
TEST(CliCommandsLimits, BadValuesAreUsageErrorsNamingTheOption) {
  auto attach_with = [](auto tweak) {
    AttachArgs a{"eth0", "100", "10"};
    tweak(a);
    return attach(a);
  };
  struct Case {
    Status st;
    const char* names;
  };
  const Case cases[] = {
      {attach_with([](AttachArgs& a) { a.new_sources = "0"; }), "--new-sources 0 is out of range"},
      {attach_with([](AttachArgs& a) { a.new_sources = "20M"; }), "--new-sources"},
      {attach_with([](AttachArgs& a) { a.new_sources = "lots"; }), "--new-sources 'lots' is not a count"},
      {attach_with([](AttachArgs& a) { a.new_sources = "5", a.new_sources_burst = "0"; }), "--new-sources-burst"},
      {attach_with([](AttachArgs& a) { a.ban = "2 seconds"; }), "--ban '2 seconds' is not a duration"},
      {attach_with([](AttachArgs& a) { a.ban = "0s"; }), "--ban 0s is no time at all"},
      {attach_with([](AttachArgs& a) { a.ban = "10m", a.ban_max = "1m"; }), "--ban-max 1m is shorter than --ban 10m"},
      {attach_with([](AttachArgs& a) { a.forget_after = "1h"; }), "need --ban"},
      {set(SetArgs{"eth0", "", "", "", "", "", {}, {}, "0"}), "--new-sources 0 is out of range"},
      {set(SetArgs{"eth0", "", "", "", "", "", {}, {}, "", "", "2x"}), "--ban '2x' is not a duration"},
      {set(SetArgs{"eth0", "", "", "", "", "", {}, {}, "", "", "", "off"}), "--ban-max 'off' is not a duration"},
      {set(SetArgs{"eth0", "", "", "", "", "", {}, {}, "", "", "off", "1m"}), "--ban off with --ban-max"},
      {set(SetArgs{"eth0", "", "", "", "", "", {}, {}, "off", "5"}), "--new-sources off with --new-sources-burst"},
      {set(SetArgs{"eth0", "", "", "", "", "", {}, {}, "", "", "", "", "", "dry"}), "--mode 'dry' is not a mode"},
      {unban(UnbanArgs{"eth0", "198.18.0.0/24", ""}), "'198.18.0.0/24' is a network"},
      {unban(UnbanArgs{"eth0", "not-an-address", ""}), "not-an-address"},
  };
  for (const Case& c : cases) {
    ASSERT_FALSE(c.st.ok()) << c.names;
    EXPECT_TRUE(c.st.error().usage) << c.st.error().message();
    EXPECT_NE(c.st.error().message().find(c.names), std::string::npos) << c.st.error().message();
    EXPECT_EQ(c.st.error().message().find('\n'), std::string::npos) << c.st.error().message();
  }
  // Something to change: the new options count.
  Status nothing = set(SetArgs{"eth0"});
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.error().message().find("--mode"), std::string::npos) << nothing.error().message();
}

// ---- the keys levee show and unban look up -----------------------------------------

Cidr addr(const char* text) { return Cidr::parse(text).value(); }

TEST(Keys, SourceNetworkAndEveryClassKeysAsTheDatapathBuildsThem) {
  ClassSpec spec;
  spec.name = "dns";
  spec.packets = {10, 10};
  spec.prefix4 = 32;
  spec.prefix6 = 64;
  spec.network.prefix4 = 24;
  spec.network.prefix6 = 48;
  spec.network.packets = {100, 100};
  lv_class c = compile_class(spec, 4'000'000, 2);
  c.epoch = 3;

  const lv_key k4 = source_key(addr("198.18.5.77"), c, 9);
  EXPECT_EQ(k4.addr[0], 0u);
  EXPECT_EQ(k4.addr[1], 0u);
  EXPECT_EQ(k4.addr[2], htonl(0xffff)) << "IPv4-mapped";
  EXPECT_EQ(k4.addr[3], htonl(0xc612054d));
  EXPECT_EQ(k4.family, LV_AF_INET);
  EXPECT_EQ(k4.class_id, 9);
  EXPECT_EQ(k4.epoch, 3);

  const lv_key n4 = network_key(addr("198.18.5.77"), c, 9);
  EXPECT_EQ(n4.addr[3], htonl(0xc6120500)) << "masked to the network's /24";
  EXPECT_EQ(n4.family, LV_AF_INET | LV_KEY_NETWORK);
  EXPECT_EQ(n4.class_id, 9);
  EXPECT_EQ(n4.epoch, 3);

  const lv_key k6 = source_key(addr("2001:db8:1:2:3:4:5:6"), c, 9);
  EXPECT_EQ(k6.addr[0], htonl(0x20010db8));
  EXPECT_EQ(k6.addr[1], htonl(0x00010002));
  EXPECT_EQ(k6.addr[2], 0u) << "/64";
  EXPECT_EQ(k6.addr[3], 0u);
  EXPECT_EQ(k6.family, LV_AF_INET6);
  const lv_key n6 = network_key(addr("2001:db8:1:2:3:4:5:6"), c, 9);
  EXPECT_EQ(n6.addr[1], htonl(0x00010000)) << "/48";
  EXPECT_EQ(n6.family, LV_AF_INET6 | LV_KEY_NETWORK);

  lv_policy pol{};
  pol.ban_mask4 = htonl(0xffffff00);
  pol.ban_mask6[0] = pol.ban_mask6[1] = ~0u;
  const lv_key a4 = ban_all_key(addr("198.18.5.77"), pol);
  EXPECT_EQ(a4.addr[2], htonl(0xffff));
  EXPECT_EQ(a4.addr[3], htonl(0xc6120500));
  EXPECT_EQ(a4.class_id, LV_ALL_CLASSES);
  EXPECT_EQ(a4.epoch, 0);
  EXPECT_EQ(a4.family, LV_AF_INET);
  const lv_key a6 = ban_all_key(addr("2001:db8:1:2:3:4:5:6"), pol);
  EXPECT_EQ(a6.addr[1], htonl(0x00010002));
  EXPECT_EQ(a6.addr[2], 0u);
}

// ---- show ------------------------------------------------------------------------

constexpr uint64_t kS = 1'000'000'000;
constexpr uint64_t kNowMono = 5'000 * kS;

ShowClass banned_class(bool monitor) {
  ClassSpec spec;
  spec.name = "dns";
  spec.packets = {100, 10};
  spec.prefix4 = 32;
  spec.network.packets = {1000, 100};
  spec.monitor = monitor;
  ShowClass c;
  c.name = "dns";
  c.class_id = 2;
  c.cls = compile_class(spec, 4'000'000, 2);
  c.pkt = c.cls.pkt;
  c.now_ns = kNowMono;
  c.state.ready_ns = kNowMono + 1'200'000'000;  // pushed to the ban's end
  c.state.passed = (uint64_t{640} << 32) | 10;
  c.state.dropped = (uint64_t{6'400} << 32) | 100;
  lv_state net{};
  net.ready_ns = kNowMono - kS;  // long eligible: full
  net.passed = 40;
  c.network = net;
  lv_ban b{};
  b.until_ns = kNowMono + 1'200'000'000;
  b.duration_ns = 4 * kS;
  b.since_ns = kNowMono - 2'800'000'000;
  b.offences = 3;
  b.class_id = 2;
  c.ban = b;
  return c;
}

ShowResult show_of(ShowClass c) {
  ShowResult r;
  r.address = "198.18.0.7";
  r.now_ns = kNowMono;
  r.classes.push_back(c);
  return r;
}

TEST(ShowBans, JsonFields) {
  auto j = show_json("eth0", show_of(banned_class(false)), 0);
  const auto& c = j["classes"][0];
  EXPECT_EQ(c["banned"], true);
  EXPECT_EQ(c["ban_remaining_ms"], 1200);
  EXPECT_EQ(c["offences"], 3);
  EXPECT_EQ(c["ban_duration_ms"], 4000);
  EXPECT_EQ(c["ban_since_ms_ago"], 2800);
  EXPECT_EQ(c["ban_scope"], "class");
  EXPECT_EQ(c["monitor"], false);
  EXPECT_EQ(c["has_state"], true);
  EXPECT_EQ(c["wait_ns"], 1'200'000'000u) << "the ban holds its state back";
  ASSERT_TRUE(c["network"].is_object());
  EXPECT_EQ(c["network"]["network"], "198.18.0.0/24");
  EXPECT_EQ(c["network"]["tokens"], 100);
  EXPECT_EQ(c["network"]["passed_packets"], 40);
  EXPECT_TRUE(j["ban_all"].is_null());

  // Ended: not banned, its history kept.
  ShowClass ended = banned_class(false);
  ended.ban->until_ns = kNowMono - 60 * kS;
  auto e = show_json("eth0", show_of(ended), 0)["classes"][0];
  EXPECT_EQ(e["banned"], false);
  EXPECT_EQ(e["ban_remaining_ms"], 0);
  EXPECT_EQ(e["offences"], 3);

  // No record and no network limit: nulls and zeros, the fields still there.
  ShowClass plain = banned_class(false);
  plain.ban.reset();
  plain.network.reset();
  auto n = show_json("eth0", show_of(plain), 0)["classes"][0];
  EXPECT_EQ(n["banned"], false);
  EXPECT_EQ(n["offences"], 0);
  EXPECT_EQ(n["ban_duration_ms"], 0);
  EXPECT_TRUE(n["ban_scope"].is_null());
  EXPECT_TRUE(n["network"].is_null());
}

TEST(ShowBans, AnEveryClassBanAppliesInEachClassAndEndsLast) {
  ShowClass c = banned_class(false);
  c.ban->until_ns = kNowMono - kS;  // its own ban is over
  lv_ban all{};
  all.until_ns = kNowMono + 30 * kS;
  all.duration_ns = 30 * kS;
  all.offences = 1;
  all.class_id = 5;
  c.ban_all = all;
  ShowResult r = show_of(c);
  r.ban_all = all;
  EXPECT_EQ(show_ban(c), &*c.ban_all);
  auto j = show_json("eth0", r, 0);
  EXPECT_EQ(j["classes"][0]["banned"], true);
  EXPECT_EQ(j["classes"][0]["ban_scope"], "all");
  EXPECT_EQ(j["classes"][0]["ban_remaining_ms"], 30'000);
  EXPECT_EQ(j["ban_all"]["banned"], true);
  EXPECT_EQ(j["ban_all"]["offences"], 1);
  const std::string t = show_text("eth0", r, 0);
  EXPECT_NE(t.find("  ban      in every class: banned for 30.0 s more (30s ban"), std::string::npos) << t;
  EXPECT_NE(t.find("    ban      banned for 30.0 s more (30s ban, in every class"), std::string::npos) << t;

  // Known only by its ban in every class: still shown.
  ShowResult only;
  only.address = "198.18.0.7";
  only.now_ns = kNowMono;
  only.ban_all = all;
  const std::string o = show_text("eth0", only, 0);
  EXPECT_EQ(o.find("no state in any class, on no list"), std::string::npos) << o;
  EXPECT_NE(o.find("in every class: banned"), std::string::npos) << o;
}

TEST(ShowBans, Text) {
  const std::string t = show_text("eth0", show_of(banned_class(false)), 0);
  EXPECT_NE(t.find("    ban      banned for 1.2 s more (4s ban, began 2.8 s ago), 3 offences\n"), std::string::npos)
      << t;
  EXPECT_NE(t.find("    network  198.18.0.0/24: 1k pps, burst 100; tokens 100 packets; next now\n"), std::string::npos)
      << t;
  EXPECT_NE(t.find("    dropped  100 packets"), std::string::npos) << t;
  EXPECT_EQ(t.find("would drop"), std::string::npos) << t;
  // A monitoring class drops nothing: its drop counter is what it would have dropped.
  const std::string m = show_text("eth0", show_of(banned_class(true)), 0);
  EXPECT_NE(m.find("(monitor mode)"), std::string::npos) << m;
  EXPECT_NE(m.find("    would drop  100 packets"), std::string::npos) << m;
  // Known only through its network or a ban: said so, no made-up tokens.
  ShowClass gone = banned_class(false);
  gone.has_state = false;
  gone.state = {};
  const std::string g = show_text("eth0", show_of(gone), 0);
  EXPECT_NE(g.find("none of its own"), std::string::npos) << g;
  EXPECT_EQ(g.find("tokens   "), std::string::npos) << g;
}

// ---- status ------------------------------------------------------------------------

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

TEST(StatusLimits, ModeWhenFullSourcesNetworksBansAdmitted) {
  ClassSpec syn = named("web-syn");
  syn.new_sources = {500, 50};
  syn.ban.ban_ns = 2 * kS;
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

TEST(StatusLimits, Modes) {
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

TEST(StatusLimits, AnUnreadableInterfaceDoesNotHideTheOthers) {
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

TEST(Describe, ExtrasAndRemaining) {
  ClassSpec c = named("c");
  EXPECT_EQ(describe_extras(c), "");
  c.ban = {90 * kS, 0, 600 * kS, true, {}, {}};
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
  EXPECT_EQ(format_remaining(600 * kS), "10m");
  EXPECT_EQ(format_remaining(3900 * kS), "1h 5m");
}

}  // namespace
}  // namespace levee::cli
