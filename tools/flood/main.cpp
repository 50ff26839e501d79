// main.cpp - levee-flood: sends a flood of Ethernet frames out of a veth and says how
// many went out per second. See README.md beside this file.
//
// This file is the command line and the outline of a run; each step lives in the file
// named for it: options (checks, source mode), device (the interface), frame (what is
// sent), method (live frames or packet, the probe), senders (the threads), report.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <thread>

#include "device.hpp"
#include "frame.hpp"
#include "method.hpp"
#include "netdev.hpp"
#include "options.hpp"
#include "report.hpp"
#include "run.hpp"
#include "senders.hpp"
#include "spec.hpp"

using namespace levee::flood;

namespace {

const char* kFooter = R"(
Sources: --src A (one address), --sources N with --src-base B (B, B+1, ... B+N-1 round
robin; --src is taken as the base too), or --random PREFIX (a new random address inside
PREFIX for every packet). IPv4 or IPv6 follows from the addresses.

Methods:
  live    BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES: the kernel runs a tiny XDP
          program that rewrites the source and redirects the frame out of --dev.
          Full speed only (millions of packets/s). Default when --rate is 0.
          THE RECEIVING END (the veth peer) MUST HAVE AN XDP PROGRAM ATTACHED OR GRO
          ENABLED, otherwise the kernel drops every redirected frame silently.
          levee-flood sends a probe first and stops (falls back to `packet` with
          --method auto) when the frames vanish. Two threads need a peer with two rx
          queues (ip link add ... numrxqueues 2 numtxqueues 2 type veth peer ...).
  packet  AF_PACKET sendmmsg with PACKET_QDISC_BYPASS. Works with any receiver; paced
          with absolute deadlines when --rate is set. Default when --rate > 0.

Counting: "packets" is what the sender handed to the kernel (live: the repeat counts of
the calls that completed). The veth's own drop counter (ring full, receiver too slow) is
reported beside it. --size is the frame length without FCS, VLAN tag included.

Exit status: 0 sent, 1 error, 2 usage error.)";

int run(Options& o) {
  // --- the options and the sources -------------------------------------------------------
  check_options(o);
  bool v6 = is_v6(o.dst);
  Proto proto = proto_of(o);
  size_t size = frame_size(o, v6, proto);
  Sources sources = source_mode(o, v6);

  // --- the interface, the frame and the plan --------------------------------------------
  Device dev = open_device(o, size);
  FrameRequest req = frame_request(o, dev, proto, size, sources);
  FloodSpec spec = make_spec(o, req, sources);
  RunPlan plan = make_plan(o, dev.ifindex);

  // --- the method, the senders and what they did ----------------------------------------
  block_stop_signals();
  auto stats_before = stats_of(dev.ifindex);
  Method method = choose_method(o, spec, plan, dev, stats_before);
  Outcome out = send_flood(spec, plan, method);

  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the peer's counters settle
  auto stats_after = stats_of(dev.ifindex);
  std::optional<uint64_t> dropped;
  if (stats_before && stats_after) dropped = stats_after->tx_dropped - stats_before->tx_dropped;
  return report(o, RunSummary{spec, req, plan, method.name, dropped}, out);
}

// Reads the command line into o: nullopt to run, else the exit status (--help, a
// mistake CLI11 finds).
std::optional<int> parse(int argc, char** argv, Options& o) {
  CLI::App app{"levee-flood: send a flood of Ethernet frames out of a veth and report packets/s.", "levee-flood"};
  app.footer(kFooter);
  app.add_option("--dev", o.dev, "interface to send on (a veth you created)")->required();
  app.add_option("--dst", o.dst, "destination address (IPv4 or IPv6)")->required();
  app.add_option("--dst-mac", o.dst_mac, "destination MAC (default: the veth peer's, else broadcast)");
  app.add_option("--src", o.src, "source address (default: the first address of --dev)");
  app.add_option("--src-base", o.src_base, "first of --sources round-robin source addresses");
  app.add_option("--sources", o.sources, "number of round-robin sources from --src-base (default 1)");
  app.add_option("--random", o.random, "a new random source inside this prefix for every packet, e.g. 198.18.128.0/17");
  app.add_option("--proto", o.proto, "udp, syn or icmp (echo request)")->check(CLI::IsMember({"udp", "syn", "icmp"}));
  app.add_option("--dport", o.dport, "destination port (udp, syn)");
  app.add_option("--sport", o.sport, "source port (udp, syn)");
  app.add_option("--vlan", o.vlan, "add an 802.1Q tag with this VLAN id");
  auto* size_opt =
      app.add_option("--size", o.size, "frame length in bytes without FCS (default 64, or what the headers need)");
  app.add_option("--rate", o.rate, "packets per second in all, 0 = full speed (default)");
  app.add_option("--duration", o.duration,
                 "seconds to send (default 10 unless --count is given; 0: until SIGINT/SIGTERM)");
  app.add_option("--count", o.count, "packets to send in all");
  app.add_option("--threads", o.threads, "sender threads, each pinned to its own CPU (default 1)");
  app.add_option("--method", o.method, "auto, live or packet (default auto: live at full speed, packet when paced)")
      ->check(CLI::IsMember({"auto", "live", "packet"}));
  app.add_option("--netns", o.netns, "enter /var/run/netns/NAME first");
  app.add_option("--batch", o.batch, "frames per batch: live-frames batch size, sendmmsg size (default 64)");
  app.add_flag("--json", o.json, "print the result as one JSON object");
  app.add_flag("-v,--verbose", o.verbose, "say what is being sent; libbpf's messages");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "levee-flood: %s (see --help)\n", e.what());
    return kExitUsage;
  }
  o.size_given = size_opt->count() > 0;
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o;
    if (auto status = parse(argc, argv, o)) return *status;
    return run(o);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "levee-flood: %s (see --help)\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "levee-flood: error: %s\n", e.what());
    return kExitError;
  }
}
