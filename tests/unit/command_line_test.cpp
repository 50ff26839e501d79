// command_line_test.cpp - the command line as the binary parses it (levee::cli::parse):
// every command's options, usage errors and help; and the checks each command makes
// on its values before it touches the kernel.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/app.hpp"
#include "cli/lists.hpp"
#include "core/quote.hpp"
#include "core/version.hpp"
#include "datapath/live.hpp"
#include "policy/map_memory.hpp"
#include "policy/validate.hpp"

namespace levee::cli {
namespace {

Parsed parse_args(std::vector<const char*> args) {
  std::vector<const char*> argv{"levee"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse(static_cast<int>(argv.size()), argv.data());
}

TEST(CliParse, AttachWithEveryOption) {
  auto p = parse_args({"attach", "eth0", "--rate", "10k", "--burst", "200", "--xdp-mode", "generic", "--max-sources",
                       "2M", "--prefix4", "24", "--prefix6", "48"});
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

// The XDP mode is --xdp-mode for attach and run; --mode, its older name, still works
// there (scripts, units) but is not in --help, where --mode is set's drop mode.
TEST(CliParse, XdpModeHasANameOfItsOwnAndMayStillBeCalledMode) {
  for (const char* name : {"--xdp-mode", "--mode"}) {
    auto a = parse_args({"attach", "eth0", "--config", "f.toml", name, "generic"});
    ASSERT_TRUE(a.invocation) << name << ": " << a.err;
    EXPECT_EQ(a.invocation->attach.mode, "generic") << name;
    EXPECT_TRUE(a.invocation->attach.mode_given) << name;
    auto r = parse_args({"run", "eth0", "--config", "f.toml", name, "native"});
    ASSERT_TRUE(r.invocation) << name << ": " << r.err;
    EXPECT_EQ(r.invocation->run.mode, "native") << name;
  }
  // A drop mode given to attach is refused by name, before anything else, with the way
  // to what was meant.
  auto drop = parse_args({"attach", "eth0", "--config", "f.toml", "--mode", "monitor"});
  ASSERT_TRUE(drop.invocation) << drop.err;
  const Status refused = attach(drop.invocation->attach);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(refused.error().usage);
  EXPECT_NE(refused.error().message().find("--mode 'monitor' is not an XDP mode"), std::string::npos)
      << refused.error().message();
  EXPECT_NE(refused.error().message().find("--monitor"), std::string::npos) << refused.error().message();
  for (const char* cmd : {"attach", "run"}) {
    auto h = parse_args({cmd, "--help"});
    EXPECT_NE(h.out.find("--xdp-mode"), std::string::npos) << cmd << ": " << h.out;
    EXPECT_EQ(h.out.find("\n  --mode"), std::string::npos) << cmd << ": " << h.out;
  }
  EXPECT_NE(parse_args({"set", "--help"}).out.find("\n  --mode"), std::string::npos);
}

TEST(CliParse, AttachShorthandWithAdmissionBansAndMonitor) {
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

TEST(CliParse, SetKeepsWhatIsNotGiven) {
  auto p = parse_args({"set", "eth0", "--burst", "50"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Set);
  EXPECT_TRUE(p.invocation->set.rate.empty());
  EXPECT_EQ(p.invocation->set.burst, "50");
  EXPECT_FALSE(p.invocation->set.prefix4);
  EXPECT_FALSE(p.invocation->set.prefix6);
}

TEST(CliParse, SetWithEveryNewOption) {
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

TEST(CliParse, ReloadNeedsConfig) {
  auto p = parse_args({"reload", "eth0", "--config", "levee.toml"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Reload);
  EXPECT_EQ(p.invocation->reload.iface, "eth0");
  EXPECT_EQ(p.invocation->reload.config, "levee.toml");
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
    auto p = parse_args(c.args);
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

TEST(CliParse, Unban) {
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

TEST(CliParse, Prune) {
  auto p = parse_args({"prune", "eth0"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Prune);
  EXPECT_EQ(p.invocation->prune.iface, "eth0");
  EXPECT_TRUE(p.invocation->prune.idle.empty());
  EXPECT_FALSE(p.invocation->prune.json);
  auto q = parse_args({"prune", "eth0", "--idle", "1s", "--json"});
  ASSERT_TRUE(q.invocation) << q.err;
  EXPECT_EQ(q.invocation->prune.idle, "1s");
  EXPECT_TRUE(q.invocation->prune.json);
}

TEST(CliParse, Top) {
  auto p = parse_args({"top", "eth0"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Top);
  EXPECT_EQ(p.invocation->top.n, 10u);
  EXPECT_EQ(p.invocation->top.by, "drops");
  EXPECT_FALSE(p.invocation->top.watch);
  EXPECT_FALSE(p.invocation->top.networks);
  auto q = parse_args({"top", "eth0", "-n", "3", "--by", "bytes", "--json", "--networks", "--watch", "--interval",
                       "0.5", "--count", "4"});
  ASSERT_TRUE(q.invocation) << q.err;
  const TopArgs& t = q.invocation->top;
  EXPECT_EQ(t.n, 3u);
  EXPECT_EQ(t.by, "bytes");
  EXPECT_TRUE(t.json && t.networks && t.watch);
  EXPECT_DOUBLE_EQ(t.interval, 0.5);
  EXPECT_EQ(t.count, 4u);
}

TEST(CliParse, Suggest) {
  auto p = parse_args({"suggest", "eth0"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Suggest);
  const SuggestArgs& d = p.invocation->suggest;
  EXPECT_EQ(d.window, "30s");
  EXPECT_EQ(d.interval, "1s");
  EXPECT_DOUBLE_EQ(d.headroom, 1.5);
  EXPECT_EQ(d.min_sources, 10u);
  EXPECT_FALSE(d.json);
  EXPECT_TRUE(d.config.empty());
  auto q = parse_args({"suggest", "eth0", "--window", "5m", "--interval", "500ms", "--headroom", "2", "--min-sources",
                       "3", "--json", "--config", "levee.toml"});
  ASSERT_TRUE(q.invocation) << q.err;
  const SuggestArgs& s = q.invocation->suggest;
  EXPECT_EQ(s.window, "5m");
  EXPECT_EQ(s.interval, "500ms");
  EXPECT_DOUBLE_EQ(s.headroom, 2);
  EXPECT_EQ(s.min_sources, 3u);
  EXPECT_TRUE(s.json);
  EXPECT_EQ(s.config, "levee.toml");
}

// Refused before anything touches the kernel: one line naming the value and the fix.
TEST(CliParse, SuggestRefusesWindowsAndIntervalsOutOfRange) {
  const std::pair<std::vector<const char*>, std::string> cases[] = {
      {{"--interval", "50ms"}, "--interval '50ms' is shorter than 100ms"},
      {{"--window", "2h"}, "--window '2h' is longer than 1h"},
      {{"--window", "1s"}, "--window '1s' is shorter than two intervals of '1s'"},
      {{"--window", "soon"}, "--window 'soon' is not a duration"},
      {{"--headroom", "0.5"}, "--headroom 0.5 is out of range"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<const char*> args{"suggest", "eth0"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto p = parse_args(args);
    ASSERT_TRUE(p.invocation) << p.err;
    const Status st = suggest(p.invocation->suggest);
    ASSERT_FALSE(st.ok()) << message;
    EXPECT_TRUE(st.error().usage) << message;
    EXPECT_NE(st.error().message().find(message), std::string::npos) << st.error().message();
  }
}

TEST(CliParse, Events) {
  auto p = parse_args({"events", "eth0", "--json", "--count", "5", "--duration", "2.5"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->command, Command::Events);
  EXPECT_EQ(p.invocation->events.iface, "eth0");
  EXPECT_TRUE(p.invocation->events.json);
  EXPECT_EQ(p.invocation->events.count, 5u);
  EXPECT_DOUBLE_EQ(p.invocation->events.duration, 2.5);
  auto d = parse_args({"events", "eth0"});
  ASSERT_TRUE(d.invocation);
  EXPECT_EQ(d.invocation->events.count, 0u);
  EXPECT_EQ(d.invocation->events.duration, 0.0);
}

// A usage error exits 2 with one line on stderr, "levee: ...; see: levee CMD --help",
// naming the help of the command that was mistyped.
TEST(CliParse, UsageErrorsExitTwoWithOneLinePointingAtTheRightHelp) {
  struct Case {
    std::vector<const char*> args;
    const char* help;  // the --help the line points at
  };
  for (const Case& c : std::vector<Case>{
           {{}, "levee --help"},  // no subcommand
           {{"frobnicate"}, "levee --help"},
           {{"-v", "frobnicate", "eth0"}, "levee --help"},
           {{"attach", "eth0"}, "levee attach --help"},                                                  // neither
           {{"attach", "eth0", "--config", "f", "--rate", "5", "--burst", "5"}, "levee attach --help"},  // both
           {{"attach", "eth0", "--config", "f", "--prefix4", "24"}, "levee attach --help"},
           {{"attach", "eth0", "--rate", "5"}, "levee attach --help"},          // --burst missing
           {{"attach", "eth0", "--burst", "5"}, "levee attach --help"},         // --rate missing
           {{"attach", "--rate", "5", "--burst", "5"}, "levee attach --help"},  // interface missing
           {{"attach", "eth0", "--rate", "5", "--burst", "5", "--xdp-mode", "turbo"}, "levee attach --help"},
           {{"attach", "eth0", "--rate", "5", "--burst", "5", "--prefix4", "x"}, "levee attach --help"},
           {{"attach", "eth0", "--config", "f", "--new-sources", "5"}, "levee attach --help"},
           {{"attach", "eth0", "--config", "f", "--ban", "2s"}, "levee attach --help"},
           {{"attach", "eth0", "--rate", "5", "--burst", "5", "--ban-max", "1m"}, "levee attach --help"},  // no --ban
           {{"attach", "eth0", "--rate", "5", "--burst", "5", "--new-sources-burst", "9"}, "levee attach --help"},
           {{"set", "eth0", "--mode", "dry-run"}, "levee set --help"},
           {{"set", "eth0", "--mode"}, "levee set --help"},
           {{"stats", "eth0", "--bogus"}, "levee stats --help"},
           {{"stats", "eth0", "--watch", "--interval", "0"}, "levee stats --help"},
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
           {{"unban", "eth0"}, "levee unban --help"},
           {{"unban", "eth0", "198.18.0.7", "198.18.0.8"}, "levee unban --help"},
           {{"unban", "eth0", "198.18.0.7", "--class"}, "levee unban --help"},
           {{"prune"}, "levee prune --help"},
           {{"top", "eth0", "--by", "pps"}, "levee top --help"},
           {{"top", "eth0", "-n", "many"}, "levee top --help"},
           {{"top", "eth0", "--watch", "--interval", "0"}, "levee top --help"},
           {{"events", "eth0", "--count", "x"}, "levee events --help"},
           {{"events", "eth0", "--duration", "-1"}, "levee events --help"},
       }) {
    auto p = parse_args(c.args);
    EXPECT_FALSE(p.invocation) << c.help;
    EXPECT_EQ(p.exit_code, kExitUsage) << c.help;
    ASSERT_FALSE(p.err.empty()) << c.help;
    EXPECT_EQ(p.err.rfind("levee: ", 0), 0u) << p.err;
    EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << "one line: " << p.err;
    EXPECT_NE(p.err.find(std::string("see: ") + c.help), std::string::npos) << p.err;
  }
}

// A command levee does not have is named as such, with where the commands are listed;
// CLI11 alone said only "A subcommand is required".
TEST(CliParse, UnknownCommandIsNamedWithWhereTheCommandsAre) {
  for (std::vector<const char*> args : {std::vector<const char*>{"frobnicate"}, {"-v", "frobnicate", "eth0"}}) {
    auto p = parse_args(args);
    EXPECT_FALSE(p.invocation);
    EXPECT_EQ(p.exit_code, kExitUsage);
    EXPECT_EQ(p.err, "levee: 'frobnicate' is not a levee command; see: levee --help (it lists every command)\n");
  }
  const std::string huge(10 << 20, 'f');
  auto p = parse_args({huge.c_str()});
  EXPECT_EQ(p.exit_code, kExitUsage);
  EXPECT_LT(p.err.size(), 200u) << p.err.substr(0, 300);
  // A known command still gets its own usage line.
  auto q = parse_args({"stats"});
  EXPECT_NE(q.err.find("see: levee stats --help"), std::string::npos) << q.err;
}

TEST(CliParse, HelpAndVersionExitZero) {
  auto h = parse_args({"--help"});
  EXPECT_FALSE(h.invocation);
  EXPECT_EQ(h.exit_code, kExitOk);
  for (const char* sub : {"attach", "set", "stats", "status", "detach", "unban"})
    EXPECT_NE(h.out.find(sub), std::string::npos) << sub;

  auto v = parse_args({"--version"});
  EXPECT_EQ(v.exit_code, kExitOk);
  // The name and version first, as tools read it; then the build's facts.
  EXPECT_EQ(v.out.rfind(std::string("levee ") + levee_version() + "\n", 0), 0u) << v.out;
  EXPECT_NE(v.out.find(fmt::format("state layout (ABI) {}:", LV_ABI_VERSION)), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("\nlibbpf "), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("\nbuilt with "), std::string::npos) << v.out;
}

// Each command's help lists its options and says what a reader must know.
TEST(CliParse, HelpNamesTheOptionsAndExamples) {
  auto at = parse_args({"attach", "--help"});
  EXPECT_EQ(at.exit_code, kExitOk);
  for (const char* s : {"--max-sources", "--new-sources", "--ban", "--monitor", "levee attach eth0 --config",
                        "levee attach eth0 --rate"})
    EXPECT_NE(at.out.find(s), std::string::npos) << s;
  auto set = parse_args({"set", "--help"});
  for (const char* opt : {"--new-sources", "--new-sources-burst", "--ban", "--ban-max", "--forget-after", "--mode"})
    EXPECT_NE(set.out.find(opt), std::string::npos) << opt;
  EXPECT_NE(parse_args({"unban", "--help"}).out.find("levee unban eth0 198.18.0.7"), std::string::npos);
  for (const char* sub : {"prune", "top", "events"}) {
    auto p = parse_args({sub, "--help"});
    EXPECT_NE(p.out.find(std::string("Examples: levee ") + sub + " eth0"), std::string::npos) << p.out;
  }
  EXPECT_NE(parse_args({"top", "--help"}).out.find("wrap at 2^32"), std::string::npos);
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
                                                         {"override", "list"},
                                                         {"unban"},
                                                         {"prune"},
                                                         {"top"},
                                                         {"events"}}) {
    std::vector<const char*> with_help = args;
    with_help.push_back("--help");
    auto p = parse_args(with_help);
    std::string path = "levee";
    for (const char* a : args) path += std::string(" ") + a;
    EXPECT_EQ(p.exit_code, kExitOk) << path;
    EXPECT_NE(p.out.find("Example"), std::string::npos) << path << ":\n" << p.out;
    EXPECT_NE(p.out.find(path + " "), std::string::npos) << path << " has no example of itself:\n" << p.out;
  }
}

// Values are checked before any privilege or kernel check, so these hold without root:
// a usage error of one line that names the option.
TEST(CliCommands, BadValuesAreUsageErrorsNamingTheOption) {
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
      {attach(AttachArgs{"eth0", "0", "5"}), "--rate"},
      {attach(AttachArgs{"eth0", "abc", "5"}), "--rate"},
      {attach(AttachArgs{"eth0", "5", "0"}), "--burst"},
      {attach(AttachArgs{"eth0", "5", "1.5"}), "--burst"},
      {attach(AttachArgs{"eth0", "20M", "5"}), "--rate"},
      {attach(AttachArgs{"eth0", "5", "5", "auto", "0"}), "--max-sources"},
      {attach(AttachArgs{"eth0", "5", "5", "auto", "", 33, 64}), "--prefix4"},
      {attach(AttachArgs{"eth0", "5", "5", "auto", "", 32, 0}), "--prefix6"},
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
      {set(SetArgs{"eth0", "", "", "", "", "", {}, {}, "auto", "5"}), "--new-sources auto with --new-sources-burst"},
      {attach_with([](AttachArgs& a) { a.new_sources = "off", a.new_sources_burst = "5"; }),
       "--new-sources off with --new-sources-burst"},
      {set(SetArgs{"eth0", "", "", "", "", "", {}, {}, "", "", "", "", "", "dry"}), "--mode 'dry' is not a mode"},
      {unban(UnbanArgs{"eth0", "198.18.0.0/24", ""}), "'198.18.0.0/24' is a network"},
      {unban(UnbanArgs{"eth0", "not-an-address", ""}), "not-an-address"},
      {prune(PruneArgs{"eth0", "10"}), "--idle"},
      {prune(PruneArgs{"eth0", "soon"}), "--idle"},
      {prune(PruneArgs{"eth0", "0s"}), "--idle"},
      {top(TopArgs{"eth0", 0}), "-n 0 shows nothing"},
  };
  for (const Case& c : cases) {
    ASSERT_FALSE(c.st.ok()) << c.names;
    EXPECT_TRUE(c.st.error().usage) << c.st.error().message();
    EXPECT_NE(c.st.error().message().find(c.names), std::string::npos) << c.st.error().message();
    EXPECT_EQ(c.st.error().message().find('\n'), std::string::npos) << c.st.error().message();
  }
  // set needs something to change; the options it takes count.
  Status nothing = set(SetArgs{"eth0"});
  ASSERT_FALSE(nothing.ok());
  EXPECT_TRUE(nothing.error().usage);
  EXPECT_NE(nothing.error().message().find("--mode"), std::string::npos) << nothing.error().message();
}

// `set --bytes-rate 0` is out of range whatever the class has, as bytes_rate = 0 in the
// config file and --rate 0 are; the byte limit is removed only by saying so:
// --bytes-rate off (rate and burst together). Before, 0 was a no-op on a class without
// a byte limit and an error on one with it, and 0 with --bytes-burst 0 removed it.
TEST(CliCommands, ByteLimitIsRemovedOnlyByOff) {
  auto set_with = [](std::string bytes_rate, std::string bytes_burst, std::string rate = "") {
    SetArgs a{"eth0"};
    a.rate = std::move(rate);
    a.bytes_rate = std::move(bytes_rate);
    a.bytes_burst = std::move(bytes_burst);
    return set(a);
  };
  struct Case {
    Status st;
    const char* names;
  };
  const Case cases[] = {
      {set_with("0", ""), "--bytes-rate 0 is out of range; give 1 or more; --bytes-rate off removes"},
      {set_with("0", "0"), "0 is out of range"},
      {set_with("", "0"), "--bytes-burst 0 is out of range"},
      {set_with("off", "10k"), "--bytes-rate off with --bytes-burst"},
      {set_with("", "", "0"), "--rate 0 is out of range"},
  };
  for (const Case& c : cases) {
    ASSERT_FALSE(c.st.ok()) << c.names;
    EXPECT_TRUE(c.st.error().usage) << c.st.error().message();
    EXPECT_NE(c.st.error().message().find(c.names), std::string::npos) << c.st.error().message();
  }
  // off: the class keeps its packet limit and loses both byte values; a class without
  // a byte limit is left as it is.
  ClassSpec with_bytes;
  with_bytes.name = "web";
  with_bytes.packets = {100, 10};
  with_bytes.bytes = {1'000'000, 64'000};
  LimitChange off;
  off.bytes_rate = 0;
  auto c = changed_class(with_bytes, off);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->bytes, Rate{});
  EXPECT_EQ(c->packets, (Rate{100, 10}));
  ClassSpec without = with_bytes;
  without.bytes = {};
  auto d = changed_class(without, off);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->bytes, Rate{});
  // A new byte rate keeps the burst.
  LimitChange faster;
  faster.bytes_rate = 2'000'000;
  auto e = changed_class(with_bytes, faster);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->bytes, (Rate{2'000'000, 64'000}));
}

// --new-sources takes a budget, auto (the autopilot) or off (neither); --escalate auto or
// off. A budget wins over the autopilot; auto and off take the budget away.
TEST(CliCommands, NewSourcesAutoOffOrABudgetAndEscalate) {
  ClassSpec c;
  c.name = "web";
  c.packets = {100, 10};
  c.new_sources = {500, 50};
  LimitChange off;
  off.admission = Admission::Off;
  off.escalate = false;
  auto o = changed_class(c, off);
  ASSERT_TRUE(o.ok()) << o.error().message();
  EXPECT_EQ(o->admission_in_force(), Admission::Off);
  EXPECT_FALSE(o->new_sources.set());
  EXPECT_FALSE(o->escalate);
  LimitChange aut;
  aut.admission = Admission::Auto;
  aut.escalate = true;
  auto a = changed_class(*o, aut);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->admission_in_force(), Admission::Auto);
  EXPECT_TRUE(a->escalate);
  LimitChange budget;
  budget.new_sources = 200;
  auto b = changed_class(*a, budget);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->admission_in_force(), Admission::Budget);
  EXPECT_EQ(b->new_sources.rate, 200u);
  auto p = parse_args({"set", "eth0", "--new-sources", "auto", "--escalate", "off"});
  ASSERT_TRUE(p.invocation) << p.err;
  EXPECT_EQ(p.invocation->set.new_sources, "auto");
  EXPECT_EQ(p.invocation->set.escalate, "off");
  EXPECT_FALSE(parse_args({"set", "eth0", "--escalate", "sometimes"}).invocation);
  auto at =
      parse_args({"attach", "eth0", "--rate", "1k", "--burst", "100", "--new-sources", "off", "--escalate", "off"});
  ASSERT_TRUE(at.invocation) << at.err;
  EXPECT_EQ(at.invocation->attach.new_sources, "off");
  EXPECT_EQ(at.invocation->attach.escalate, "off");
}

// An error echoes at most a short prefix of what an operator gave (here 10 MB of it),
// with its size, never the whole; control characters cannot break the one line.
TEST(CliCommands, ErrorsEchoOnlyAShortPrefixOfAValue) {
  const std::string huge(10 << 20, 'x');
  SetArgs rate{"eth0"};
  rate.rate = huge;
  AttachArgs attach_args{"eth0", "5", "5"};
  attach_args.max_sources = huge;
  Policy named;
  named.classes.push_back(ClassSpec{});
  named.classes[0].name = huge;
  named.classes[0].packets = {5, 5};
  const Status errors[] = {
      set(rate),
      attach(attach_args),
      unban(UnbanArgs{"eth0", huge, ""}),
      show(ShowArgs{"eth0", huge, false}),
      prune(PruneArgs{"eth0", huge}),
      validate(named, 0),
  };
  for (const Status& st : errors) {
    ASSERT_FALSE(st.ok());
    const std::string m = st.error().message();
    EXPECT_LT(m.size(), 400u) << m.substr(0, 400);
    EXPECT_NE(m.find("xxx…' (10485760 bytes)"), std::string::npos) << m.substr(0, 400);
  }
  EXPECT_EQ(quote_value("eth0"), "'eth0'");
  EXPECT_EQ(quote_value("a\nb\x7f"), "'a\\x0ab\\x7f'");
  // Cut on a character: 63 bytes of 'x', then a 2-byte 'é' that would straddle byte 64.
  const std::string accented = std::string(63, 'x') + "é" + std::string(10, 'y');
  EXPECT_EQ(quote_value(accented), "'" + std::string(63, 'x') + "…' (75 bytes)");
  EXPECT_LE(clipped(huge).size(), kClippedMax + 32);
}

// The maps sized at attach pin their memory whole: an attach over a quarter of MemTotal is
// refused, naming the figures, unless --exceed-memory-cap says so. The estimate from
// entry sizes is what the docs say a source and a ban record cost (~129 and ~140
// bytes at the defaults), and 100M sources is the 13.4 GB of the machine of 24 GB.
TEST(CliCommands, MapsOverAQuarterOfTheMemoryNeedTheExplicitFlag) {
  const uint64_t per_source = hash_map_bytes(LV_DEFAULT_MAX_SOURCES, sizeof(lv_key), sizeof(lv_state));
  EXPECT_NEAR(static_cast<double>(per_source) / LV_DEFAULT_MAX_SOURCES, 129, 1);
  EXPECT_NEAR(
      static_cast<double>(hash_map_bytes(LV_DEFAULT_MAX_BANS, sizeof(lv_key), sizeof(lv_ban))) / LV_DEFAULT_MAX_BANS,
      136, 5);
  EXPECT_NEAR(static_cast<double>(attach_map_bytes(100'000'000, LV_DEFAULT_MAX_BANS)) / 1e9, 13.4, 0.2);

  const auto mem = mem_total_of("MemTotal:       24684084 kB\nMemFree:         1000 kB\n");
  ASSERT_TRUE(mem);
  EXPECT_EQ(*mem, 24684084ull * 1024);
  EXPECT_FALSE(mem_total_of("MemFree: 5 kB\n"));
  EXPECT_TRUE(check_map_memory(LV_DEFAULT_MAX_SOURCES, LV_DEFAULT_MAX_BANS, mem, false).ok());
  EXPECT_TRUE(check_map_memory(100'000'000, LV_DEFAULT_MAX_BANS, mem, true).ok());
  EXPECT_TRUE(check_map_memory(100'000'000, LV_DEFAULT_MAX_BANS, std::nullopt, false).ok());
  Status over = check_map_memory(100'000'000, LV_DEFAULT_MAX_BANS, mem, false);
  ASSERT_FALSE(over.ok());
  EXPECT_TRUE(over.error().usage);
  EXPECT_EQ(over.error().message(),
            "max_sources 100M and max_bans 65536 would pin 12.4 GiB of kernel memory, over 25% of this machine's "
            "23.5 GiB (MemTotal); lower --max-sources to at most 46754203, or attach anyway with --exceed-memory-cap");

  // Through the command, before anything touches the kernel (an interface that cannot
  // exist: nothing is attached whatever happens).
  const auto here = read_mem_total();
  if (!here || attach_map_bytes(100'000'000, LV_DEFAULT_MAX_BANS) <= *here / 4)
    GTEST_SKIP() << "this machine has room for 100M sources";
  Status refused = attach(AttachArgs{"levee-nx0", "5", "5", "auto", "100M"});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.error().usage) << refused.error().message();
  EXPECT_NE(refused.error().message().find("--exceed-memory-cap"), std::string::npos) << refused.error().message();
}

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

}  // namespace
}  // namespace levee::cli
