#include "cli/app.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <sstream>

#include "bpf/kernel.hpp"

#ifndef LEVEE_VERSION
#define LEVEE_VERSION "0.1.0"
#endif

namespace levee::cli {
namespace {

void add_iface(CLI::App* cmd, std::string& iface) {
  cmd->add_option("iface", iface, "network interface, e.g. eth0")->required();
}

}  // namespace

Parsed parse(int argc, const char* const* argv) {
  Invocation inv;
  CLI::App app{"levee drops floods at the NIC driver with XDP: a token bucket per source address.", "levee"};
  app.require_subcommand(1);
  app.set_version_flag("--version", LEVEE_VERSION);
  app.add_flag("-v,--verbose", inv.verbose, "print libbpf's messages (the verifier log on a refused load)");

  AttachArgs& at = inv.attach;
  auto* attach = app.add_subcommand("attach", "attach to an interface and start limiting every source");
  add_iface(attach, at.iface);
  attach->add_option("--rate", at.rate, "packets per second each source may send (e.g. 500, 10k)")->required();
  attach->add_option("--burst", at.burst, "packets a source may send at once above its rate")->required();
  attach->add_option("--mode", at.mode, "XDP mode: auto tries native, then generic")
      ->check(CLI::IsMember({"auto", "native", "generic"}))
      ->capture_default_str();
  attach->add_option("--max-sources", at.max_sources, "sources tracked at once (LRU); default 1M, ~121 bytes each");
  attach->add_option("--prefix4", at.prefix4, "IPv4 prefix length that makes one source")->capture_default_str();
  attach->add_option("--prefix6", at.prefix6, "IPv6 prefix length that makes one source")->capture_default_str();
  attach->footer("\nExample: levee attach eth0 --rate 1k --burst 200\n"
                 "Pins the program under /sys/fs/bpf/levee/IFACE/: it keeps running after levee exits.");

  SetArgs& st = inv.set;
  auto* set = app.add_subcommand("set", "change the limits of an attached interface, live");
  add_iface(set, st.iface);
  set->add_option("--class", st.class_name, "the class to change (needed when there are several)");
  set->add_option("--rate", st.rate, "new packets per second per source");
  set->add_option("--burst", st.burst, "new burst per source");
  set->add_option("--bytes-rate", st.bytes_rate, "new bytes per second per source");
  set->add_option("--bytes-burst", st.bytes_burst, "new byte burst per source");
  set->add_option("--prefix4", st.prefix4, "new IPv4 source prefix length (starts new buckets)");
  set->add_option("--prefix6", st.prefix6, "new IPv6 source prefix length (starts new buckets)");
  set->footer("\nExample: levee set eth0 --rate 2k\n"
              "Options not given keep their value. Sources keep their state: one that was being\n"
              "limited continues at the new rate at once.");

  StatsArgs& sa = inv.stats;
  auto* stats = app.add_subcommand("stats", "counters of an interface, summed over CPUs");
  add_iface(stats, sa.iface);
  stats->add_flag("--json", sa.json, "one JSON object (with --watch: one per sample)");
  stats->add_flag("-w,--watch", sa.watch, "print rates every interval until interrupted");
  stats->add_option("--interval", sa.interval, "seconds between --watch samples")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  stats->add_option("--count", sa.count, "stop --watch after this many samples");
  stats->footer("\nExamples: levee stats eth0 --json\n          levee stats eth0 --watch");

  auto* status = app.add_subcommand("status", "every attached interface: mode, program, limits, sources");
  status->add_flag("--json", inv.status_json, "one JSON object");
  status->footer("\nExample: levee status --json");

  auto* detach = app.add_subcommand("detach", "remove levee from an interface and everything it pinned");
  add_iface(detach, inv.detach_iface);
  detach->footer("\nExample: levee detach eth0");

  Parsed out;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream o, err;
    const bool info = e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success);
    if (info) {
      app.exit(e, o, err);
      out.out = o.str();
      if (!out.out.empty() && out.out.back() != '\n') out.out += '\n';
      out.exit_code = kExitOk;
    } else {
      std::string sub;
      for (auto* s : app.get_subcommands()) sub = s->get_name() + " ";
      out.err = fmt::format("levee: {}; see: levee {}--help\n", e.what(), sub);
      out.exit_code = kExitUsage;
    }
    return out;
  }
  if (*attach) inv.command = Command::Attach;
  else if (*set) inv.command = Command::Set;
  else if (*stats) inv.command = Command::Stats;
  else if (*status) inv.command = Command::Status;
  else inv.command = Command::Detach;
  out.invocation = std::move(inv);
  return out;
}

int run(const Invocation& inv) {
  set_libbpf_verbose(inv.verbose);
  Status r;
  switch (inv.command) {
    case Command::Attach: r = attach(inv.attach); break;
    case Command::Set: r = set(inv.set); break;
    case Command::Stats: r = stats(inv.stats); break;
    case Command::Status: r = status(inv.status_json); break;
    case Command::Detach: r = detach(inv.detach_iface); break;
  }
  if (!r) {
    std::fflush(stdout);
    fmt::print(stderr, "levee: {}\n", r.error().message());
    return r.error().usage ? kExitUsage : kExitError;
  }
  return kExitOk;
}

}  // namespace levee::cli
