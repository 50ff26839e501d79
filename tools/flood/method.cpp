// method.cpp - the live sender's load, probe and fallback to the packet method (method.hpp).
#include "method.hpp"

#include <net/if.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>

namespace levee::flood {
namespace {

enum class Probe { Delivered, Vanished, Unknown };

// Sends n live frames and watches the sender's counters: a veth counts frames its peer
// took in tx_packets and frames it could not hand over in tx_dropped.
// A frame the kernel could not hand to the peer (no XDP program, GRO off) is counted
// nowhere, so on a veth "not taken within 200 ms" means vanished.
Probe live_probe(LiveSender& ls, const LinkInfo& link, uint32_t n, unsigned batch, int& err, int64_t& call_ns) {
  int ifindex = link.ifindex;
  auto before = stats_of(ifindex);
  int64_t t = mono_ns();
  err = ls.call(n, batch);
  call_ns = mono_ns() - t;
  if (err || !before) return Probe::Unknown;
  for (int i = 0; i < 40; ++i) {  // the peer's NAPI runs soon after; wait <= 200 ms
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    auto now = stats_of(ifindex);
    if (!now) return Probe::Unknown;
    uint64_t tx = now->tx_packets - before->tx_packets, drop = now->tx_dropped - before->tx_dropped;
    if (tx >= (n + 1) / 2) return Probe::Delivered;
    if (drop >= (n + 1) / 2 && i >= 4) return Probe::Vanished;
  }
  return link.kind == "veth" ? Probe::Vanished : Probe::Unknown;
}

// The live sender, or null (and name "packet") when it cannot load and --method is auto.
std::unique_ptr<LiveSender> load_live(const Options& o, const FloodSpec& spec, int ifindex, std::string& name) {
  try {
    return std::make_unique<LiveSender>(spec, ifindex, o.verbose);
  } catch (const std::exception& e) {
    if (o.method == "live") throw;
    warn(std::string(e.what()) + "; using --method packet");
    name = "packet";
    return nullptr;
  }
}

// Each sender CPU feeds the peer's rx queue number cpu % (the peer's queues); the
// peer's own count cannot be read from here, ours is the usual stand-in (pairs are
// created symmetric).
void warn_shared_queues(const Options& o) {
  auto q = active_queues(o.dev);
  if (o.threads > 1 && q && o.threads > static_cast<int>(q->first))
    warn(o.dev + " has " + std::to_string(q->first) + " rx queue(s) in use for " + std::to_string(o.threads) +
         " threads: create the pair with numrxqueues/numtxqueues " + std::to_string(o.threads) +
         " on both ends, or the threads share one ring");
}

// The probe, on thread 0's CPU, so that round robin continues from the same per-CPU
// counter. Throws std::runtime_error when the call fails.
Probe probe_on_first_cpu(LiveSender& live, const Device& dev, uint32_t n, const RunPlan& plan, int64_t& call_ns) {
  int err = 0;
  cpu_set_t all, one;
  sched_getaffinity(0, sizeof all, &all);
  CPU_ZERO(&one);
  CPU_SET(plan.cpus.empty() ? 0 : plan.cpus[0], &one);
  sched_setaffinity(0, sizeof one, &one);
  Probe p = live_probe(live, dev.link, n, plan.batch, err, call_ns);
  sched_setaffinity(0, sizeof all, &all);
  if (err) throw std::runtime_error(std::string("BPF_PROG_TEST_RUN (live frames) failed: ") + std::strerror(-err));
  return p;
}

// The probe's frames vanished: an error with --method live, else a warning.
void fall_back(const Options& o, const Device& dev) {
  const auto& peer = dev.peer;
  std::string why = "frames redirected to " + o.dev + " are dropped by the kernel: ";
  if (peer && !(peer->flags & IFF_UP))
    why += "its peer " + peer->name + " is down";
  else
    why += "its peer" + (peer ? " " + peer->name : std::string()) +
           " has no XDP program attached and GRO off (attach an XDP program to the peer, or enable GRO on it)";
  if (o.method == "live") throw std::runtime_error(why + ", or use --method packet");
  warn(why + "; using --method packet");
}

}  // namespace

Method choose_method(const Options& o, const FloodSpec& spec, const RunPlan& plan, const Device& dev,
                     std::optional<LinkStats>& stats_before) {
  Method m;
  m.name = o.method == "auto" ? (o.rate > 0 ? "packet" : "live") : o.method;
  if (m.name == "live") m.live = load_live(o, spec, dev.ifindex, m.name);
  if (!m.live) return m;
  warn_shared_queues(o);
  uint32_t n = static_cast<uint32_t>(o.count ? std::min<uint64_t>(o.count, 4096) : 4096);
  Probe p = probe_on_first_cpu(*m.live, dev, n, plan, m.probe_ns);
  // A few frames are within the noise of the counters (the sender's own stack sends
  // some): only "vanished" is certain then.
  if (p == Probe::Delivered && n < 64 && !(dev.peer && dev.peer->xdp_attached)) p = Probe::Unknown;
  if (p == Probe::Vanished) {
    fall_back(o, dev);
    m.name = "packet";
    m.live.reset();
    m.probe_ns = 0;
    stats_before = stats_of(dev.ifindex);
    return m;
  }
  if (p == Probe::Unknown)
    warn("could not tell whether the peer of " + o.dev +
         " takes live frames (it needs an XDP program or GRO; check the receiver's counts)");
  m.probe_packets = n;
  m.live->set_call_setup_ns(m.probe_ns);  // 4096 frames take about the fixed cost
  return m;
}

}  // namespace levee::flood
