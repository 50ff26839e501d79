// main.cpp - the levee command line: CLI11 wiring only.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bpf/kernel.hpp"
#include "cli/commands.hpp"

using namespace levee;

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

void add_iface(CLI::App* cmd, std::string& iface) {
  cmd->add_option("iface", iface, "network interface, e.g. eth0")->required();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"levee drops floods at the NIC driver with XDP: a token bucket per source address.", "levee"};
  app.require_subcommand(1);
  app.set_version_flag("--version", LEVEE_VERSION);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "print libbpf's messages (the verifier log on a refused load)");

  cli::AttachArgs at;
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

  cli::SetArgs st;
  auto* set = app.add_subcommand("set", "change the limits of an attached interface, live");
  add_iface(set, st.iface);
  set->add_option("--rate", st.rate, "new packets per second per source");
  set->add_option("--burst", st.burst, "new burst per source");
  set->add_option("--prefix4", st.prefix4, "new IPv4 source prefix length (starts new buckets)");
  set->add_option("--prefix6", st.prefix6, "new IPv6 source prefix length (starts new buckets)");

  cli::StatsArgs sa;
  auto* stats = app.add_subcommand("stats", "counters of an interface, summed over CPUs");
  add_iface(stats, sa.iface);
  stats->add_flag("--json", sa.json, "one JSON object");
  stats->add_flag("-w,--watch", sa.watch, "print rates every interval until interrupted");
  stats->add_option("--interval", sa.interval, "seconds between --watch samples")->capture_default_str();
  stats->add_option("--count", sa.count, "stop --watch after this many samples");

  bool status_json = false;
  auto* status = app.add_subcommand("status", "every attached interface: mode, program, limits, sources");
  status->add_flag("--json", status_json, "one JSON object");

  std::string detach_iface;
  auto* detach = app.add_subcommand("detach", "remove levee from an interface and everything it pinned");
  add_iface(detach, detach_iface);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string sub;
    for (auto* s : app.get_subcommands()) sub = s->get_name() + " ";
    fmt::print(stderr, "levee: {}; see: levee {}--help\n", e.what(), sub);
    return kExitUsage;
  }
  set_libbpf_verbose(verbose);

  Status r;
  if (*attach) r = cli::attach(at);
  else if (*set) r = cli::set(st);
  else if (*stats) r = cli::stats(sa);
  else if (*status) r = cli::status(status_json);
  else if (*detach) r = cli::detach(detach_iface);

  if (!r) {
    fmt::print(stderr, "levee: {}\n", r.error().message());
    return r.error().usage ? kExitUsage : kExitError;
  }
  return 0;
}
