// The command line as the binary parses it (levee::cli::parse), and the checks each
// command makes before it touches the kernel.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "cli/lists.hpp"
#include "export/render_lists.hpp"
#include "export/render_policy.hpp"
#include "export/render_show.hpp"
#include "export/render_stats.hpp"
#include "export/render_status.hpp"
#include "export/render_units.hpp"
#include "limiter.h"
#include "policy/compile.hpp"

namespace levee::cli {
namespace {

Parsed parse_args(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"levee"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse(static_cast<int>(argv.size()), argv.data());
}

TEST(CliParse, AttachWithEveryOption) {
  auto p = parse_args({"attach", "eth0", "--rate", "10k", "--burst", "200", "--mode", "generic", "--max-sources", "2M",
                       "--prefix4", "24", "--prefix6", "48"});
  ASSERT_TRUE(p.invocation) << p.err;
  const Invocation& inv = *p.invocation;
  EXPECT_EQ(inv.command, Command::Attach);
  EXPECT_EQ(inv.attach.iface, "eth0");
  EXPECT_EQ(inv.attach.rate, "10k");
  EXPECT_EQ(inv.attach.burst, "200");
  EXPECT_EQ(inv.attach.mode, "generic");
  EXPECT_EQ(inv.attach.max_sources, "2M");
  EXPECT_EQ(inv.attach.prefix4, 24u);
  EXPECT_EQ(inv.attach.prefix6, 48u);
}

TEST(CliParse, AttachDefaults) {
  auto p = parse_args({"attach", "eth0", "--rate", "1", "--burst", "1"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->attach.mode, "auto");
  EXPECT_EQ(p.invocation->attach.prefix4, 32u);
  EXPECT_EQ(p.invocation->attach.prefix6, 64u);
  EXPECT_TRUE(p.invocation->attach.max_sources.empty());
}

TEST(CliParse, UsageErrorsExitTwoWithOneLine) {
  for (auto args : std::vector<std::vector<const char*>>{
           {},                                         // no subcommand
           {"attach", "eth0", "--rate", "5"},          // --burst missing
           {"attach", "--rate", "5", "--burst", "5"},  // interface missing
           {"attach", "eth0", "--rate", "5", "--burst", "5", "--mode", "turbo"},
           {"attach", "eth0", "--rate", "5", "--burst", "5", "--prefix4", "x"},
           {"stats", "eth0", "--bogus"},
           {"stats", "eth0", "--watch", "--interval", "0"},
           {"frobnicate"},
       }) {
    std::vector<const char*> argv{"levee"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto p = parse(static_cast<int>(argv.size()), argv.data());
    EXPECT_FALSE(p.invocation);
    EXPECT_EQ(p.exit_code, kExitUsage);
    ASSERT_FALSE(p.err.empty());
    EXPECT_EQ(p.err.rfind("levee: ", 0), 0u) << p.err;
    EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << "one line: " << p.err;
    EXPECT_NE(p.err.find("--help"), std::string::npos) << p.err;
  }
}

TEST(CliParse, HelpAndVersionExitZero) {
  auto h = parse_args({"--help"});
  EXPECT_FALSE(h.invocation);
  EXPECT_EQ(h.exit_code, kExitOk);
  for (const char* sub : {"attach", "set", "stats", "status", "detach"})
    EXPECT_NE(h.out.find(sub), std::string::npos) << sub;

  auto sub = parse_args({"attach", "--help"});
  EXPECT_EQ(sub.exit_code, kExitOk);
  EXPECT_NE(sub.out.find("--max-sources"), std::string::npos);
  EXPECT_NE(sub.out.find("levee attach eth0 --config"), std::string::npos);
  EXPECT_NE(sub.out.find("levee attach eth0 --rate"), std::string::npos);

  auto v = parse_args({"--version"});
  EXPECT_EQ(v.exit_code, kExitOk);
  EXPECT_NE(v.out.find('.'), std::string::npos);
}

TEST(CliParse, SetKeepsWhatIsNotGiven) {
  auto p = parse_args({"set", "eth0", "--burst", "50"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Set);
  EXPECT_TRUE(p.invocation->set.rate.empty());
  EXPECT_EQ(p.invocation->set.burst, "50");
  EXPECT_FALSE(p.invocation->set.prefix4);
  EXPECT_FALSE(p.invocation->set.prefix6);
}

TEST(CliParse, StatsStatusDetach) {
  auto s = parse_args({"stats", "eth0", "--json", "--watch", "--interval", "0.5", "--count", "3"});
  ASSERT_TRUE(s.invocation) << s.err;
  EXPECT_EQ(s.invocation->command, Command::Stats);
  EXPECT_TRUE(s.invocation->stats.json);
  EXPECT_TRUE(s.invocation->stats.watch);
  EXPECT_DOUBLE_EQ(s.invocation->stats.interval, 0.5);
  EXPECT_EQ(s.invocation->stats.count, 3u);

  auto st = parse_args({"status", "--json"});
  ASSERT_TRUE(st.invocation);
  EXPECT_EQ(st.invocation->command, Command::Status);
  EXPECT_TRUE(st.invocation->status_json);

  auto d = parse_args({"-v", "detach", "eth0"});
  ASSERT_TRUE(d.invocation);
  EXPECT_EQ(d.invocation->command, Command::Detach);
  EXPECT_EQ(d.invocation->detach_iface, "eth0");
  EXPECT_TRUE(d.invocation->verbose);
}

// Values are checked before any privilege or kernel check, so these hold without root.
TEST(CliCommands, BadValuesAreUsageErrorsNamingTheOption) {
  struct Case {
    AttachArgs a;
    const char* names;
  };
  for (const Case& c : {Case{{"eth0", "0", "5"}, "--rate"}, Case{{"eth0", "abc", "5"}, "--rate"},
                        Case{{"eth0", "5", "0"}, "--burst"}, Case{{"eth0", "5", "1.5"}, "--burst"},
                        Case{{"eth0", "20M", "5"}, "--rate"}, Case{{"eth0", "5", "5", "auto", "0"}, "--max-sources"},
                        Case{{"eth0", "5", "5", "auto", "", 33, 64}, "--prefix4"},
                        Case{{"eth0", "5", "5", "auto", "", 32, 0}, "--prefix6"}}) {
    Status s = attach(c.a);
    ASSERT_FALSE(s.ok()) << c.names;
    EXPECT_TRUE(s.error().usage) << s.error().message();
    EXPECT_NE(s.error().message().find(c.names), std::string::npos) << s.error().message();
  }
  SetArgs nothing{"eth0"};
  Status s = set(nothing);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.error().usage);
}

TEST(Format, GroupDigits) {
  EXPECT_EQ(group_digits(0), "0");
  EXPECT_EQ(group_digits(999), "999");
  EXPECT_EQ(group_digits(1000), "1,000");
  EXPECT_EQ(group_digits(1234567), "1,234,567");
  EXPECT_EQ(group_digits(18446744073709551615ull), "18,446,744,073,709,551,615");
}

TEST(Format, StatsJsonHasTheContractFields) {
  Counters c;
  c.by_reason[LV_R_CONFORMING] = {10, 1000};
  c.by_reason[LV_R_NOT_IP] = {2, 84};
  c.by_reason[LV_R_RATE] = {30, 1920};
  c.by_reason[LV_R_MALFORMED] = {1, 20};
  auto j = stats_json("eth0", c);
  EXPECT_EQ(j["interface"], "eth0");
  EXPECT_EQ(j["rx_packets"], 43u);
  EXPECT_EQ(j["rx_bytes"], 3024u);
  EXPECT_EQ(j["passed_packets"], 12u);
  EXPECT_EQ(j["passed_bytes"], 1084u);
  EXPECT_EQ(j["dropped_packets"], 31u);
  EXPECT_EQ(j["dropped_bytes"], 1940u);
  EXPECT_EQ(j["dropped"]["rate"], 30u);
  EXPECT_EQ(j["dropped"]["malformed"], 1u);
  EXPECT_EQ(j["dropped"]["vlan_depth"], 0u);
  EXPECT_EQ(j["passed"]["conforming"], 10u);
  EXPECT_EQ(j["passed"]["not_ip"], 2u);
  EXPECT_EQ(j["bytes"]["dropped"]["rate"], 1920u);
  EXPECT_FALSE(j["passed"].contains("rate"));
  EXPECT_FALSE(j["dropped"].contains("conforming"));
  for (const char* f : {"rx_packets", "rx_bytes", "passed_packets", "passed_bytes", "dropped_packets", "dropped_bytes"})
    EXPECT_TRUE(j[f].is_number_unsigned()) << f;
}

TEST(Format, RatesLine) {
  Counters a, b;
  b.by_reason[LV_R_CONFORMING] = {1000, 0};
  b.by_reason[LV_R_RATE] = {7'310'000, 0};
  std::string line = rates_line(a, b, 1.0);
  EXPECT_NE(line.find("7.31M"), std::string::npos) << line;
  EXPECT_NE(line.find("(rate 7.31M)"), std::string::npos) << line;
  EXPECT_EQ(rates_line(a, a, 1.0).find('('), std::string::npos);
}

// ---- attach --config, reload ------------------------------------------------------

TEST(CliParse, AttachWithConfig) {
  auto p =
      parse_args({"attach", "eth0", "--config", "/etc/levee/levee.toml", "--mode", "native", "--max-sources", "2M"});
  ASSERT_TRUE(p.invocation) << p.err;
  const AttachArgs& a = p.invocation->attach;
  EXPECT_EQ(p.invocation->command, Command::Attach);
  EXPECT_EQ(a.config, "/etc/levee/levee.toml");
  EXPECT_TRUE(a.rate.empty());
  EXPECT_EQ(a.mode, "native");
  EXPECT_TRUE(a.mode_given);
  EXPECT_EQ(a.max_sources, "2M");

  // Without --mode the file's mode applies: the default is not "given".
  auto q = parse_args({"attach", "eth0", "--config", "f.toml"});
  ASSERT_TRUE(q.invocation) << q.err;
  EXPECT_FALSE(q.invocation->attach.mode_given);
  EXPECT_TRUE(q.invocation->attach.max_sources.empty());
}

TEST(CliParse, ReloadNeedsConfig) {
  auto p = parse_args({"reload", "eth0", "--config", "levee.toml"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Reload);
  EXPECT_EQ(p.invocation->reload.iface, "eth0");
  EXPECT_EQ(p.invocation->reload.config, "levee.toml");
}

// ---- lists and show ------------------------------------------------------------------

TEST(CliParse, ListCommands) {
  struct Case {
    std::vector<const char*> args;
    lv_list_kind kind;
    ListOp op;
  };
  for (const Case& c :
       {Case{{"allow", "add", "eth0", "198.51.100.0/24", "2001:db8:1::/48"}, LV_LIST_ALLOW, ListOp::Add},
        Case{{"allow", "del", "eth0", "198.51.100.0/24"}, LV_LIST_ALLOW, ListOp::Del},
        Case{{"allow", "list", "eth0"}, LV_LIST_ALLOW, ListOp::List},
        Case{{"deny", "add", "eth0", "203.0.113.7"}, LV_LIST_DENY, ListOp::Add},
        Case{{"deny", "del", "eth0", "203.0.113.7"}, LV_LIST_DENY, ListOp::Del},
        Case{{"deny", "list", "eth0", "--json"}, LV_LIST_DENY, ListOp::List},
        Case{{"deny", "import", "eth0", "drop.txt"}, LV_LIST_DENY, ListOp::Import},
        Case{{"override", "add", "eth0", "partner", "192.0.2.0/24"}, LV_LIST_OVERRIDE, ListOp::Add},
        Case{{"override", "del", "eth0", "192.0.2.0/24"}, LV_LIST_OVERRIDE, ListOp::Del},
        Case{{"override", "list", "eth0"}, LV_LIST_OVERRIDE, ListOp::List}}) {
    std::vector<const char*> argv{"levee"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto p = parse(static_cast<int>(argv.size()), argv.data());
    ASSERT_TRUE(p.invocation) << c.args[0] << " " << c.args[1] << ": " << p.err;
    EXPECT_EQ(p.invocation->command, Command::Lists);
    EXPECT_EQ(p.invocation->lists.kind, c.kind) << c.args[0] << " " << c.args[1];
    EXPECT_EQ(p.invocation->lists.op, c.op) << c.args[0] << " " << c.args[1];
    EXPECT_EQ(p.invocation->lists.iface, "eth0");
  }
}

TEST(CliParse, ListArguments) {
  auto d = parse_args({"deny", "add", "eth0", "203.0.113.0/24", "2001:db8:bad::/48", "--expires", "2h"});
  ASSERT_TRUE(d.invocation) << d.err;
  EXPECT_EQ(d.invocation->lists.cidrs, (std::vector<std::string>{"203.0.113.0/24", "2001:db8:bad::/48"}));
  EXPECT_EQ(d.invocation->lists.expires, "2h");

  auto o = parse_args({"override", "add", "eth0", "partner", "192.0.2.0/24", "2001:db8:2::/48"});
  ASSERT_TRUE(o.invocation) << o.err;
  EXPECT_EQ(o.invocation->lists.override_name, "partner");
  EXPECT_EQ(o.invocation->lists.cidrs, (std::vector<std::string>{"192.0.2.0/24", "2001:db8:2::/48"}));

  auto i = parse_args({"deny", "import", "eth0", "/var/lib/levee/drop.netset", "--expires", "2026-12-01T00:00:00Z"});
  ASSERT_TRUE(i.invocation) << i.err;
  EXPECT_EQ(i.invocation->lists.file, "/var/lib/levee/drop.netset");
  EXPECT_EQ(i.invocation->lists.expires, "2026-12-01T00:00:00Z");

  auto l = parse_args({"allow", "list", "eth0", "198.51.100.0/24", "--json"});
  ASSERT_TRUE(l.invocation) << l.err;
  EXPECT_TRUE(l.invocation->lists.json);
  EXPECT_EQ(l.invocation->lists.cidrs, (std::vector<std::string>{"198.51.100.0/24"}));
}

TEST(CliParse, Show) {
  auto p = parse_args({"show", "eth0", "2001:db8::7", "--json"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Show);
  EXPECT_EQ(p.invocation->show.iface, "eth0");
  EXPECT_EQ(p.invocation->show.address, "2001:db8::7");
  EXPECT_TRUE(p.invocation->show.json);
}

TEST(CliParse, NewUsageErrorsExitTwoWithOneLinePointingAtTheRightHelp) {
  struct Case {
    std::vector<const char*> args;
    const char* help;  // the --help the line points at
  };
  for (const Case& c : std::vector<Case>{
           {{"attach", "eth0"}, "levee attach --help"},                                                  // neither
           {{"attach", "eth0", "--config", "f", "--rate", "5", "--burst", "5"}, "levee attach --help"},  // both
           {{"attach", "eth0", "--config", "f", "--prefix4", "24"}, "levee attach --help"},
           {{"attach", "eth0", "--burst", "5"}, "levee attach --help"},  // --rate missing
           {{"reload", "eth0"}, "levee reload --help"},
           {{"reload", "--config", "f"}, "levee reload --help"},
           {{"deny"}, "levee deny --help"},
           {{"deny", "add", "eth0"}, "levee deny add --help"},  // no CIDR
           {{"deny", "add", "eth0", "203.0.113.7", "--expires"}, "levee deny add --help"},
           {{"allow", "add", "eth0", "198.51.100.0/24", "--expires", "2h"}, "levee allow add --help"},
           {{"allow", "import", "eth0", "f"}, "levee allow --help"},
           {{"override", "add", "eth0", "partner"}, "levee override add --help"},
           {{"override", "list"}, "levee override list --help"},
           {{"deny", "import", "eth0"}, "levee deny import --help"},
           {{"deny", "list", "eth0", "--bogus"}, "levee deny list --help"},
           {{"show", "eth0"}, "levee show --help"},
           {{"show", "eth0", "203.0.113.7", "203.0.113.8"}, "levee show --help"},
       }) {
    std::vector<const char*> argv{"levee"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto p = parse(static_cast<int>(argv.size()), argv.data());
    EXPECT_FALSE(p.invocation) << c.help;
    EXPECT_EQ(p.exit_code, kExitUsage) << c.help;
    ASSERT_FALSE(p.err.empty()) << c.help;
    EXPECT_EQ(p.err.rfind("levee: ", 0), 0u) << p.err;
    EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << "one line: " << p.err;
    EXPECT_NE(p.err.find(std::string("see: ") + c.help), std::string::npos) << p.err;
  }
}

TEST(CliParse, EverySubcommandHasHelpWithAnExample) {
  for (auto args : std::vector<std::vector<const char*>>{{"attach"},
                                                         {"reload"},
                                                         {"set"},
                                                         {"stats"},
                                                         {"status"},
                                                         {"detach"},
                                                         {"show"},
                                                         {"allow"},
                                                         {"allow", "add"},
                                                         {"allow", "del"},
                                                         {"allow", "list"},
                                                         {"deny"},
                                                         {"deny", "add"},
                                                         {"deny", "del"},
                                                         {"deny", "list"},
                                                         {"deny", "import"},
                                                         {"override"},
                                                         {"override", "add"},
                                                         {"override", "del"},
                                                         {"override", "list"}}) {
    std::vector<const char*> argv{"levee"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--help");
    auto p = parse(static_cast<int>(argv.size()), argv.data());
    std::string path = "levee";
    for (const char* a : args) path += std::string(" ") + a;
    EXPECT_EQ(p.exit_code, kExitOk) << path;
    EXPECT_NE(p.out.find("Example"), std::string::npos) << path << ":\n" << p.out;
    EXPECT_NE(p.out.find(path + " "), std::string::npos) << path << " has no example of itself:\n" << p.out;
  }
}

// Values are checked before any privilege or kernel check (no root needed here).
TEST(CliCommands, ListValuesAreUsageErrors) {
  struct Case {
    ListArgs a;
    const char* mentions;
  };
  auto args = [](lv_list_kind k, ListOp op, std::vector<std::string> cidrs, std::string expires = "") {
    ListArgs a;
    a.kind = k;
    a.op = op;
    a.iface = "eth0";
    a.cidrs = std::move(cidrs);
    a.expires = std::move(expires);
    return a;
  };
  for (const Case& c : {
           Case{args(LV_LIST_DENY, ListOp::Add, {"203.0.113.300"}), "203.0.113.300"},
           Case{args(LV_LIST_DENY, ListOp::Add, {"203.0.113.7/24"}), "did you mean 203.0.113.0/24"},
           Case{args(LV_LIST_ALLOW, ListOp::Add, {"198.51.100.0/33"}), "/32"},
           Case{args(LV_LIST_ALLOW, ListOp::Del, {"2001:db8::/129"}), "/128"},
           Case{args(LV_LIST_DENY, ListOp::List, {"nonsense"}), "nonsense"},
           Case{args(LV_LIST_DENY, ListOp::Add, {"203.0.113.7"}, "tomorrow"), "--expires"},
           Case{args(LV_LIST_DENY, ListOp::Add, {"203.0.113.7"}, "2001-01-01T00:00:00Z"), "in the past"},
           Case{args(LV_LIST_DENY, ListOp::Add, {"203.0.113.7"}, "0s"), "--expires"},
           Case{args(LV_LIST_DENY, ListOp::Import, {}, "2h30"), "--expires"},
       }) {
    Status s = lists(c.a);
    ASSERT_FALSE(s.ok()) << c.mentions;
    EXPECT_TRUE(s.error().usage) << s.error().message();
    EXPECT_NE(s.error().message().find(c.mentions), std::string::npos) << s.error().message();
  }
}

TEST(CliCommands, ShowTakesOneAddress) {
  for (const char* bad : {"203.0.113.0/24", "2001:db8::/64", "not-an-address", ""}) {
    Status s = show(ShowArgs{"eth0", bad, false});
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_TRUE(s.error().usage) << bad << ": " << s.error().message();
  }
}

TEST(CliCommands, AttachNeedsOnePolicy) {
  AttachArgs both{"eth0", "5", "5"};
  both.config = "levee.toml";
  Status s = attach(both);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.error().usage) << s.error().message();
  Status none = attach(AttachArgs{"eth0"});
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(none.error().usage) << none.error().message();
  EXPECT_NE(none.error().message().find("--config"), std::string::npos) << none.error().message();
}

// A temporary file with the given contents, removed at scope exit.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char tmpl[] = "/tmp/levee-unit-XXXXXX";
    int fd = mkstemp(tmpl);
    path = tmpl;
    if (fd >= 0) {
      (void)!write(fd, text.data(), text.size());
      close(fd);
    }
  }
  ~TempFile() { std::remove(path.c_str()); }
};

TEST(CliCommands, ImportOfAFileWithNothingValidFailsBeforeTouchingTheKernel) {
  TempFile f("# only comments\n\nnot-a-network\n203.0.113.7/24\n");
  ListArgs a;
  a.kind = LV_LIST_DENY;
  a.op = ListOp::Import;
  a.iface = "eth0";
  a.file = f.path;
  testing::internal::CaptureStdout();
  Status s = lists(a);
  const std::string out = testing::internal::GetCapturedStdout();
  ASSERT_FALSE(s.ok());
  EXPECT_FALSE(s.error().usage);
  EXPECT_NE(s.error().message().find("no valid entry"), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("2 lines rejected"), std::string::npos) << s.error().message();
  EXPECT_NE(out.find("line 3: "), std::string::npos) << out;
  EXPECT_NE(out.find("line 4: "), std::string::npos) << out;

  a.file = "/nonexistent/levee-blocklist";
  Status missing = lists(a);
  ASSERT_FALSE(missing.ok());
  EXPECT_FALSE(missing.error().usage);
  EXPECT_NE(missing.error().message().find("/nonexistent/levee-blocklist"), std::string::npos);
}

// ---- the blocklist file parser ------------------------------------------------------

std::vector<std::string> strings(const std::vector<Cidr>& v) {
  std::vector<std::string> out;
  for (const Cidr& c : v) out.push_back(c.to_string());
  return out;
}

TEST(Blocklist, NetsetStyle) {
  const Blocklist b = parse_blocklist(
      "#\n"
      "# FireHOL-style netset: comments, blank lines\n"
      "#\n"
      "\n"
      "198.51.100.0/24\n"
      "203.0.113.7\n"
      "  2001:db8:bad::/48  \n"
      "\t192.0.2.0/25\t\n");
  EXPECT_EQ(strings(b.entries),
            (std::vector<std::string>{"198.51.100.0/24", "203.0.113.7/32", "2001:db8:bad::/48", "192.0.2.0/25"}));
  EXPECT_EQ(b.repeated, 0u);
  EXPECT_TRUE(b.rejected.empty());
}

TEST(Blocklist, TrailingCommentsSemicolonsCrlfAndBom) {
  const Blocklist b = parse_blocklist(
      "\xEF\xBB\xBF; Spamhaus DROP style\r\n"
      "198.51.100.0/24 ; SBL123456\r\n"
      "203.0.113.0/25 # a note\r\n"
      "2001:db8:1::/48;no space\r\n"
      "\r\n"
      "192.0.2.1");  // no newline at the end
  EXPECT_EQ(strings(b.entries),
            (std::vector<std::string>{"198.51.100.0/24", "203.0.113.0/25", "2001:db8:1::/48", "192.0.2.1/32"}));
  EXPECT_TRUE(b.rejected.empty()) << b.rejected[0].why;
}

TEST(Blocklist, DuplicatesAreCountedOnce) {
  const Blocklist b = parse_blocklist("198.51.100.0/24\n203.0.113.7\n198.51.100.0/24\n203.0.113.7/32\n");
  EXPECT_EQ(strings(b.entries), (std::vector<std::string>{"198.51.100.0/24", "203.0.113.7/32"}));
  EXPECT_EQ(b.repeated, 2u);  // an address and its /32 are one network
}

TEST(Blocklist, RejectsWithLineNumbersAndReasons) {
  const Blocklist b = parse_blocklist(
      "198.51.100.0/24\n"      // 1 ok
      "198.51.100.300\n"       // 2 not an address
      "203.0.113.7/24\n"       // 3 host bits
      "# comment\n"            // 4
      "198.51.100.0/33\n"      // 5 too long
      "1.2.3.4 5.6.7.8\n"      // 6 two fields
      "0.0.0.0/0\n"            // 7 everything
      "192.0.2.1-192.0.2.9\n"  // 8 a range
      "2001:db8::/129\r\n"     // 9
      "::/0\n"                 // 10
      "2001:db8:1::/48\n");    // 11 ok
  EXPECT_EQ(strings(b.entries), (std::vector<std::string>{"198.51.100.0/24", "2001:db8:1::/48"}));
  ASSERT_EQ(b.rejected.size(), 8u);
  const std::vector<unsigned> lines{2, 3, 5, 6, 7, 8, 9, 10};
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(b.rejected[i].line, lines[i]) << i;
  EXPECT_NE(b.rejected[0].why.find("198.51.100.300"), std::string::npos) << b.rejected[0].why;
  EXPECT_NE(b.rejected[1].why.find("did you mean 203.0.113.0/24"), std::string::npos) << b.rejected[1].why;
  EXPECT_NE(b.rejected[2].why.find("/32"), std::string::npos) << b.rejected[2].why;
  EXPECT_NE(b.rejected[3].why.find("one CIDR per line"), std::string::npos) << b.rejected[3].why;
  EXPECT_NE(b.rejected[4].why.find("every address"), std::string::npos) << b.rejected[4].why;
  EXPECT_EQ(b.rejected[3].text, "1.2.3.4 5.6.7.8");
}

TEST(Blocklist, EmptyAndCommentOnly) {
  EXPECT_TRUE(parse_blocklist("").entries.empty());
  const Blocklist b = parse_blocklist("# nothing\n;\n\n   \n");
  EXPECT_TRUE(b.entries.empty());
  EXPECT_TRUE(b.rejected.empty());
}

// ---- --expires --------------------------------------------------------------------

constexpr uint64_t kS = 1'000'000'000ull;
// 2026-11-22T03:00:00Z
constexpr uint64_t kNow = 1'795'316'400ull * kS;

TEST(Expiry, Durations) {
  EXPECT_EQ(parse_expiry("90s", kNow).value(), kNow + 90 * kS);
  EXPECT_EQ(parse_expiry("30m", kNow).value(), kNow + 1800 * kS);
  EXPECT_EQ(parse_expiry("2h", kNow).value(), kNow + 7200 * kS);
  EXPECT_EQ(parse_expiry("1d12h", kNow).value(), kNow + 36 * 3600 * kS);
  EXPECT_EQ(parse_expiry("1w", kNow).value(), kNow + 7 * 86400 * kS);
  EXPECT_EQ(parse_expiry("1h30m15s", kNow).value(), kNow + 5415 * kS);
  for (const char* bad : {"", "2", "h", "2x", "1.5h", "-2h", "2h ", "0s", "0h0m", "99999d", "2H"})
    EXPECT_FALSE(parse_expiry(bad, kNow).ok()) << bad;
}

TEST(Expiry, Rfc3339) {
  EXPECT_EQ(parse_expiry("2026-12-01T00:00:00Z", kNow).value(), 1'796'083'200ull * kS);
  EXPECT_EQ(parse_expiry("2026-12-01t00:00:00z", kNow).value(), 1'796'083'200ull * kS);
  EXPECT_EQ(parse_expiry("2026-12-01T02:00:00+02:00", kNow).value(), 1'796'083'200ull * kS);
  EXPECT_EQ(parse_expiry("2026-11-30T19:00:00-05:00", kNow).value(), 1'796'083'200ull * kS);
  EXPECT_EQ(parse_expiry("2026-12-01T00:00:00.25Z", kNow).value(), 1'796'083'200ull * kS + kS / 4);
  EXPECT_EQ(parse_expiry("2028-02-29T00:00:00Z", kNow).value(), 1'835'395'200ull * kS);  // a leap day
  for (const char* bad : {"2026-12-01", "2026-12-01T00:00:00", "2026-13-01T00:00:00Z", "2027-02-29T00:00:00Z",
                          "2026-12-01T24:00:00Z", "2026-12-01T00:00:00+2:00", "2026-12-01T00:00:00Zjunk"})
    EXPECT_FALSE(parse_expiry(bad, kNow).ok()) << bad;
  auto past = parse_expiry("2026-11-22T02:59:59Z", kNow);
  ASSERT_FALSE(past.ok());
  EXPECT_TRUE(past.error().usage);
  EXPECT_NE(past.error().message().find("in the past"), std::string::npos);
  EXPECT_TRUE(parse_expiry("2046-11-22T03:00:00Z", kNow).ok());   // twenty years: within the limit
  EXPECT_FALSE(parse_expiry("2127-11-22T03:00:00Z", kNow).ok());  // more than 100 years (kMaxDurationNs)
  // One reader of durations: weeks too, as in the config file.
  EXPECT_EQ(parse_expiry("1w", kNow).value(), kNow + 7 * 86400 * kS);
}

// ---- formatting of the new outputs --------------------------------------------------

TEST(Format, TimesAndSpans) {
  EXPECT_EQ(format_time(1'796'083'200ull * kS), "2026-12-01T00:00:00Z");
  EXPECT_EQ(format_span(0), "0s");
  EXPECT_EQ(format_span(42), "42s");
  EXPECT_EQ(format_span(3600), "1h");
  EXPECT_EQ(format_span(7500), "2h 5m");
  EXPECT_EQ(format_span(9 * 86400 + 3 * 3600 + 59), "9d 3h");
  EXPECT_EQ(format_expiry(kNow + 7200 * kS, kNow), "in 2h");
  EXPECT_EQ(format_expiry(kNow + 7200 * kS - 1, kNow), "in 2h");  // rounded up: just added for 2h
  EXPECT_EQ(format_expiry(kNow - 180 * kS, kNow), "expired 3m ago");
}

TEST(Format, DescribeMatch) {
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

ListRow row(const char* cidr, lv_list_kind kind, uint64_t expires = 0, lv_list_origin origin = LV_ORIGIN_CLI,
            std::string ov = "") {
  return ListRow{Cidr::parse(cidr).value(), kind, std::move(ov), expires, origin};
}

TEST(Format, ListJsonFields) {
  auto j = list_json("eth0", LV_LIST_DENY,
                     {row("203.0.113.0/24", LV_LIST_DENY, kNow + 7200 * kS, LV_ORIGIN_IMPORT),
                      row("2001:db8:bad::/48", LV_LIST_DENY, 0, LV_ORIGIN_CONFIG)},
                     kNow);
  EXPECT_EQ(j["interface"], "eth0");
  EXPECT_EQ(j["kind"], "deny");
  ASSERT_EQ(j["entries"].size(), 2u);
  const auto& e = j["entries"][0];
  for (const char* k :
       {"cidr", "family", "kind", "override", "expires", "expires_unix", "expires_in", "expired", "origin"})
    EXPECT_TRUE(e.contains(k)) << k;
  EXPECT_EQ(e["cidr"], "203.0.113.0/24");
  EXPECT_EQ(e["family"], 4);
  EXPECT_EQ(e["expires"], "2026-11-22T05:00:00Z");
  EXPECT_EQ(e["expires_unix"], kNow / kS + 7200);
  EXPECT_EQ(e["expires_in"], 7200);
  EXPECT_EQ(e["expired"], false);
  EXPECT_EQ(e["origin"], "import");
  EXPECT_TRUE(e["override"].is_null());
  const auto& f = j["entries"][1];
  EXPECT_EQ(f["family"], 6);
  EXPECT_TRUE(f["expires"].is_null());
  EXPECT_TRUE(f["expires_in"].is_null());
  EXPECT_EQ(f["origin"], "config");

  auto o =
      list_json("eth0", LV_LIST_OVERRIDE, {row("192.0.2.0/24", LV_LIST_OVERRIDE, 0, LV_ORIGIN_CLI, "partner")}, kNow);
  EXPECT_EQ(o["entries"][0]["override"], "partner");
}

TEST(Format, ListText) {
  EXPECT_EQ(list_text("eth0", LV_LIST_ALLOW, {}, kNow), "eth0: no allow entries\n");
  const std::string t = list_text(
      "eth0", LV_LIST_DENY,
      {row("203.0.113.0/24", LV_LIST_DENY, kNow + 7200 * kS), row("198.51.100.0/24", LV_LIST_DENY, kNow - 60 * kS)},
      kNow);
  EXPECT_NE(t.find("eth0: 2 deny entries"), std::string::npos) << t;
  EXPECT_NE(t.find("2026-11-22T05:00:00Z (in 2h)"), std::string::npos) << t;
  EXPECT_NE(t.find("(expired 1m ago)"), std::string::npos) << t;
  EXPECT_NE(t.find("cli"), std::string::npos) << t;
}

// A class state as levee show reads it: wait and tokens come from bpf/limiter.h.
ShowResult show_one(uint64_t ready, uint64_t ready_bytes, bool with_bytes) {
  ShowResult r;
  r.address = "198.51.100.77";
  ShowClass c;
  c.name = "dns";
  c.class_id = 0;
  c.cls = compile_class(ClassSpec{"dns", {}, {100, 10}, {}, 24, 64, {}}, 1);
  c.pkt = compile_packet_limit({100, 10});
  if (with_bytes) c.bytes = compile_byte_limit({10'000, 5'000});
  c.now_ns = 1'000 * kS;
  c.state.ready_ns = c.now_ns + ready;
  c.state.ready_bytes_ns = c.now_ns + ready_bytes;
  c.state.passed = (uint64_t{64'000} << 32) | 1'000;
  c.state.dropped = (uint64_t{6'400} << 32) | 100;
  r.classes.push_back(c);
  return r;
}

TEST(Format, ShowWaitIsTheLaterOfBothLimits) {
  // Packet limit eligible in 5 ms, byte limit in 7 ms: the next packet waits 7 ms.
  ShowResult r = show_one(5'000'000, 7'000'000, true);
  ShowLimiter l = show_limiter(r.classes[0]);
  EXPECT_EQ(l.wait_ns, 7'000'000u);
  EXPECT_EQ(l.tokens, 0u);
  EXPECT_EQ(l.byte_tokens, 0u);

  // Both long eligible: full buckets, no wait.
  const uint64_t long_ago = static_cast<uint64_t>(-static_cast<int64_t>(10 * kS));
  r = show_one(long_ago, long_ago, true);
  l = show_limiter(r.classes[0]);
  EXPECT_EQ(l.wait_ns, 0u);
  EXPECT_EQ(l.tokens, 10u);
  EXPECT_EQ(l.byte_tokens, 5'000u);

  // No byte limit: no byte tokens, the packet limit alone decides.
  r = show_one(3'000'000, 9'000'000, false);
  l = show_limiter(r.classes[0]);
  EXPECT_EQ(l.wait_ns, 3'000'000u);
  EXPECT_FALSE(l.byte_tokens);
}

TEST(Format, ShowJsonFields) {
  ShowResult r = show_one(5'000'000, 0, false);
  r.list = row("198.51.100.0/24", LV_LIST_OVERRIDE, 0, LV_ORIGIN_CONFIG, "partner");
  r.classes[0].override_name = "partner";
  auto j = show_json("eth0", r, kNow);
  EXPECT_EQ(j["interface"], "eth0");
  EXPECT_EQ(j["address"], "198.51.100.77");
  EXPECT_EQ(j["counter_bits"], 32);
  EXPECT_EQ(j["list"]["kind"], "override");
  EXPECT_EQ(j["list"]["override"], "partner");
  ASSERT_EQ(j["classes"].size(), 1u);
  const auto& c = j["classes"][0];
  for (const char* k :
       {"name", "class_id", "source", "override", "rate", "burst", "bytes_rate", "bytes_burst", "tokens", "byte_tokens",
        "wait_ns", "passed_packets", "passed_bytes", "dropped_packets", "dropped_bytes"})
    EXPECT_TRUE(c.contains(k)) << k;
  EXPECT_EQ(c["name"], "dns");
  EXPECT_EQ(c["source"], "198.51.100.0/24");  // the class counts per /24
  EXPECT_EQ(c["override"], "partner");
  EXPECT_EQ(c["wait_ns"], 5'000'000);
  EXPECT_EQ(c["tokens"], 0);
  EXPECT_TRUE(c["byte_tokens"].is_null());
  EXPECT_EQ(c["passed_packets"], 1'000);
  EXPECT_EQ(c["passed_bytes"], 64'000);
  EXPECT_EQ(c["dropped_packets"], 100);
  EXPECT_EQ(c["dropped_bytes"], 6'400);
}

TEST(Format, ShowText) {
  ShowResult none;
  none.address = "203.0.113.9";
  EXPECT_EQ(show_text("eth0", none, kNow), "203.0.113.9 on eth0: no state in any class, on no list\n");

  ShowResult denied;
  denied.address = "203.0.113.9";
  denied.list = row("203.0.113.0/24", LV_LIST_DENY, kNow + 7200 * kS, LV_ORIGIN_IMPORT);
  const std::string d = show_text("eth0", denied, kNow);
  EXPECT_NE(
      d.find("list     deny 203.0.113.0/24, origin import, expires 2026-11-22T05:00:00Z (in 2h): every packet dropped"),
      std::string::npos)
      << d;
  EXPECT_NE(d.find("no state in any class"), std::string::npos) << d;

  const std::string t = show_text("eth0", show_one(1'500'000, 0, false), kNow);
  EXPECT_NE(t.find("class dns  source 198.51.100.0/24"), std::string::npos) << t;
  EXPECT_NE(t.find("next     in 1.5ms"), std::string::npos) << t;
  EXPECT_NE(t.find("passed   1,000 packets, 64,000 bytes"), std::string::npos) << t;
  EXPECT_NE(t.find("dropped  100 packets, 6,400 bytes"), std::string::npos) << t;
  EXPECT_NE(t.find("32-bit"), std::string::npos) << t;
}

TEST(Format, StatsWithSeveralClasses) {
  Counters c;
  c.by_reason[LV_R_CONFORMING] = {10, 1000};
  c.by_reason[LV_R_DENY] = {5, 300};
  // Counters are kept by class id, which need not follow the match order.
  c.by_class[5] = {{4, 400}, {1, 60}};
  c.by_class[2] = {{6, 600}, {4, 240}};
  const ClassNames names{{"dns", 5}, {"a-very-long-class-name-here", 2}};
  auto j = stats_json("eth0", c, names);
  EXPECT_EQ(j["classes"]["dns"]["id"], 5);
  EXPECT_EQ(j["classes"]["dns"]["passed_packets"], 4);
  EXPECT_EQ(j["classes"]["a-very-long-class-name-here"]["id"], 2);
  EXPECT_EQ(j["classes"]["a-very-long-class-name-here"]["dropped_bytes"], 240);
  EXPECT_EQ(j["dropped"]["deny"], 5);
  const std::string t = stats_text("eth0", c, names);
  EXPECT_NE(t.find("  deny "), std::string::npos) << t;
  // The class rows line up under their header, whatever the name's length.
  const size_t header = t.find("\nclass ") + 1;  // the table's header, not the class_limit reason
  const size_t line = t.rfind('\n', header) + 1;
  const size_t col = t.find("passed packets", header) - line;
  const size_t dns = t.find("\ndns") + 1;
  EXPECT_EQ(t.find('\n', dns) - dns, t.find('\n', line) - line) << t;
  (void)col;
}

TEST(Format, StatusWithClassesAndOverrides) {
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

}  // namespace
}  // namespace levee::cli
