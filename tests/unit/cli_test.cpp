// The command line as the binary parses it (levee::cli::parse), and the checks each
// command makes before it touches the kernel.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "export/format.hpp"

namespace levee::cli {
namespace {

Parsed parse_args(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"levee"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse(static_cast<int>(argv.size()), argv.data());
}

TEST(CliParse, AttachWithEveryOption) {
  auto p = parse_args({"attach", "eth0", "--rate", "10k", "--burst", "200", "--mode", "generic",
                       "--max-sources", "2M", "--prefix4", "24", "--prefix6", "48"});
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
           {},                                                    // no subcommand
           {"attach", "eth0", "--rate", "5"},                     // --burst missing
           {"attach", "--rate", "5", "--burst", "5"},             // interface missing
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
  EXPECT_NE(sub.out.find("Example: levee attach"), std::string::npos);

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
  struct Case { AttachArgs a; const char* names; };
  for (const Case& c : {Case{{"eth0", "0", "5"}, "--rate"},
                        Case{{"eth0", "abc", "5"}, "--rate"},
                        Case{{"eth0", "5", "0"}, "--burst"},
                        Case{{"eth0", "5", "1.5"}, "--burst"},
                        Case{{"eth0", "20M", "5"}, "--rate"},
                        Case{{"eth0", "5", "5", "auto", "0"}, "--max-sources"},
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

}  // namespace
}  // namespace levee::cli
