// main.cpp - levee-flood: sends a flood of Ethernet frames out of a veth and says how
// many went out per second. See README.md beside this file.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "netdev.hpp"
#include "run.hpp"
#include "spec.hpp"

using namespace levee;
using namespace levee::flood;

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string dev, dst, dst_mac, src, src_base, random, proto = "udp", method = "auto", netns;
  uint32_t sources = 1;
  uint16_t dport = 9, sport = 40000;
  int vlan = -1;
  size_t size = 64;
  bool size_given = false;
  double rate = 0, duration = -1;
  uint64_t count = 0;
  int threads = 1;
  unsigned batch = 64;
  bool json = false, verbose = false;
};

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

std::vector<int> allowed_cpus() {
  cpu_set_t cs;
  CPU_ZERO(&cs);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof cs, &cs) == 0)
    for (int i = 0; i < CPU_SETSIZE; ++i)
      if (CPU_ISSET(i, &cs)) out.push_back(i);
  return out;
}

std::optional<std::string> first_address(const std::string& dev, bool v6) {
  ifaddrs* ifa = nullptr;
  if (getifaddrs(&ifa) != 0) return std::nullopt;
  std::optional<std::string> out;
  for (ifaddrs* p = ifa; p && !out; p = p->ifa_next) {
    if (!p->ifa_addr || dev != p->ifa_name) continue;
    char b[INET6_ADDRSTRLEN];
    if (!v6 && p->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(p->ifa_addr)->sin_addr, b, sizeof b);
      out = b;
    } else if (v6 && p->ifa_addr->sa_family == AF_INET6) {
      auto* a = &reinterpret_cast<sockaddr_in6*>(p->ifa_addr)->sin6_addr;
      if (IN6_IS_ADDR_LINKLOCAL(a)) continue;
      inet_ntop(AF_INET6, a, b, sizeof b);
      out = b;
    }
  }
  freeifaddrs(ifa);
  return out;
}

bool is_v6(const std::string& a) { return a.find(':') != std::string::npos; }

void warn(const std::string& s) { std::fprintf(stderr, "levee-flood: warning: %s\n", s.c_str()); }
void note(const Options& o, const std::string& s) {
  if (o.verbose) std::fprintf(stderr, "levee-flood: %s\n", s.c_str());
}

// What the senders did, summed.
struct Outcome {
  uint64_t packets = 0, slipped = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::vector<uint64_t> per_thread;
  std::vector<std::string> errors;
};

// Runs fn(i) on plan.threads threads while the main thread waits for SIGINT/SIGTERM.
template <typename Fn>
Outcome run_threads(const RunPlan& plan, Fn fn) {
  std::vector<ThreadResult> res(plan.threads);
  std::atomic<int> done{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < plan.threads; ++i)
    ts.emplace_back([&, i] {
      res[i] = fn(i);
      done.fetch_add(1);
    });
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  timespec tick{0, 50'000'000};
  while (done.load() < plan.threads) {
    if (sigtimedwait(&set, nullptr, &tick) > 0) g_stop.store(true);
  }
  for (auto& t : ts) t.join();
  Outcome o;
  for (auto& r : res) {
    o.packets += r.packets;
    o.slipped += r.slipped;
    o.per_thread.push_back(r.packets);
    if (!r.error.empty()) o.errors.push_back(r.error);
    if (r.start_ns && (!o.start_ns || r.start_ns < o.start_ns)) o.start_ns = r.start_ns;
    o.end_ns = std::max(o.end_ns, r.end_ns);
  }
  return o;
}

std::optional<LinkStats> stats_of(int ifindex) {
  auto li = get_link(ifindex);
  if (!li) return std::nullopt;
  return li->stats;
}

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

int run(Options& o) {
  // --- the sources and the frame ------------------------------------------------------
  bool v6 = is_v6(o.dst);
  try {
    v6 ? (void)pkt::ipv6_bytes(o.dst) : (void)pkt::ipv4_bytes(o.dst);
  } catch (const std::exception& e) {
    throw UsageError(std::string("--dst: ") + e.what());
  }
  if (!o.random.empty() && (!o.src.empty() || !o.src_base.empty() || o.sources != 1))
    throw UsageError("--random excludes --src, --src-base and --sources");
  if (!o.src_base.empty() && !o.src.empty()) throw UsageError("give --src or --src-base, not both");
  if (o.sources == 0) throw UsageError("--sources must be at least 1");
  if (o.method != "auto" && o.method != "live" && o.method != "packet")
    throw UsageError("--method must be auto, live or packet");
  if (o.method == "live" && o.rate > 0)
    throw UsageError("--method live sends at full speed only; use --method packet for --rate");
  if (o.rate < 0) throw UsageError("--rate must be >= 0");
  if (o.threads < 1 || o.threads > 64) throw UsageError("--threads must be 1..64");
  if (o.vlan > 4094) throw UsageError("--vlan must be 0..4094");
  if (o.batch < 1 || o.batch > 256) throw UsageError("--batch must be 1..256");
  if (o.duration < 0 && o.count == 0) o.duration = 10;
  if (o.duration < 0) o.duration = 0;

  Proto proto = o.proto == "udp" ? Proto::Udp : o.proto == "syn" ? Proto::Syn : Proto::Icmp;
  size_t min_size = min_frame_size(v6, proto, o.vlan >= 0);
  if (o.size_given && o.size < min_size)
    throw UsageError("--size " + std::to_string(o.size) + " is below the " + std::to_string(min_size) +
                     " bytes these headers need");
  size_t size = std::max(o.size, min_size);

  for (const std::string* a : {&o.src, &o.src_base}) {
    if (a->empty()) continue;
    if (is_v6(*a) != v6) throw UsageError("the source and --dst are not the same address family");
    try {
      v6 ? (void)pkt::ipv6_bytes(*a) : (void)pkt::ipv4_bytes(*a);
    } catch (const std::exception& e) {
      throw UsageError(std::string("source: ") + e.what());
    }
  }
  SrcMode mode = SrcMode::Fixed;
  std::array<uint32_t, 4> rbase{}, rmask{};
  if (!o.random.empty()) {
    bool pv6 = false;
    try {
      parse_prefix(o.random, pv6, rbase, rmask);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--random: ") + e.what());
    }
    if (pv6 != v6) throw UsageError("--random and --dst are not the same address family");
    mode = SrcMode::Random;
  } else if (o.sources > 1) {
    if (o.src.empty() && o.src_base.empty()) throw UsageError("--sources needs --src-base");
    mode = SrcMode::RoundRobin;
  }

  // --- the interface --------------------------------------------------------------------
  if (!o.netns.empty()) enter_netns(o.netns);
  int ifindex = static_cast<int>(if_nametoindex(o.dev.c_str()));
  if (!ifindex) throw std::runtime_error("no interface " + o.dev + (o.netns.empty() ? "" : " in netns " + o.netns));
  auto link = get_link(ifindex);
  if (!link) throw std::runtime_error("cannot read interface " + o.dev + " over rtnetlink");
  if (!(link->flags & IFF_UP)) warn(o.dev + " is down: nothing will arrive");
  auto peer = get_peer(*link);
  size_t max_size = (link->mtu ? link->mtu : 1500) + 14 + (o.vlan >= 0 ? 4 : 0);
  if (size > max_size)
    throw std::runtime_error("--size " + std::to_string(size) + " exceeds the MTU of " + o.dev + " (at most " +
                             std::to_string(max_size) + " bytes)");

  FrameRequest req;
  req.v6 = v6;
  req.dst = o.dst;
  req.proto = proto;
  req.sport = o.sport;
  req.dport = o.dport;
  req.vlan = o.vlan;
  req.size = size;
  req.src_mac = link->mac.value_or(pkt::kSrcMac);
  if (!o.dst_mac.empty()) {
    try {
      req.dst_mac = parse_mac(o.dst_mac);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--dst-mac: ") + e.what());
    }
  } else if (peer && peer->mac) {
    req.dst_mac = *peer->mac;
  } else {
    req.dst_mac = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    note(o, "the peer's MAC is unknown: sending to ff:ff:ff:ff:ff:ff");
  }

  if (mode == SrcMode::Random) {
    req.src = format_addr(v6, rbase);
  } else {
    req.src = !o.src_base.empty() ? o.src_base : o.src;
    if (req.src.empty()) {
      auto a = first_address(o.dev, v6);
      if (!a) throw UsageError("give a source: --src, --sources with --src-base, or --random");
      req.src = *a;
    }
  }
  FloodSpec spec = build_spec(req);
  spec.mode = mode;
  spec.rr_count = o.sources;
  if (mode == SrcMode::Random) spec.mask = rmask;
  if (mode == SrcMode::RoundRobin) {
    uint32_t last = ntohl(spec.base[v6 ? 3 : 0]);
    if (static_cast<uint64_t>(last) + o.sources - 1 > 0xffffffffULL)
      throw UsageError("--src-base + --sources runs past the end of the address space" +
                       std::string(v6 ? " (the last 32 bits)" : ""));
  }
  note(o, "frame: " + std::to_string(spec.frame.size()) + " bytes, " + format_mac(req.src_mac) + " -> " +
              format_mac(req.dst_mac) + ", " + req.src + " -> " + o.dst);

  RunPlan plan;
  plan.duration = o.duration;
  plan.count = o.count;
  plan.rate = o.rate;
  plan.threads = o.threads;
  plan.batch = o.batch;
  plan.ifindex = ifindex;
  plan.cpus = allowed_cpus();
  if (o.threads > static_cast<int>(plan.cpus.size()))
    warn(std::to_string(o.threads) + " threads on " + std::to_string(plan.cpus.size()) + " CPUs: threads share CPUs");

  std::string method = o.method == "auto" ? (o.rate > 0 ? "packet" : "live") : o.method;

  // Signals go to the main thread only (the senders block them: a signal would cut a
  // live-frames call short and its frames could not be counted).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  auto stats_before = stats_of(ifindex);
  Outcome out;
  uint64_t probe_packets = 0;
  int64_t probe_ns = 0;  // how long the probe's call took
  std::unique_ptr<LiveSender> live;
  if (method == "live") {
    try {
      live = std::make_unique<LiveSender>(spec, ifindex, o.verbose);
    } catch (const std::exception& e) {
      if (o.method == "live") throw;
      warn(std::string(e.what()) + "; using --method packet");
      method = "packet";
    }
  }
  if (live) {
    // Each sender CPU feeds the peer's rx queue number cpu % (the peer's queues); the
    // peer's own count cannot be read from here, ours is the usual stand-in (pairs are
    // created symmetric).
    auto q = active_queues(o.dev);
    if (o.threads > 1 && q && o.threads > static_cast<int>(q->first))
      warn(o.dev + " has " + std::to_string(q->first) + " rx queue(s) in use for " + std::to_string(o.threads) +
           " threads: create the pair with numrxqueues/numtxqueues " + std::to_string(o.threads) +
           " on both ends, or the threads share one ring");
    uint32_t n = static_cast<uint32_t>(o.count ? std::min<uint64_t>(o.count, 4096) : 4096);
    int err = 0;
    // On thread 0's CPU, so that round robin continues from the same per-CPU counter.
    cpu_set_t all, one;
    sched_getaffinity(0, sizeof all, &all);
    CPU_ZERO(&one);
    CPU_SET(plan.cpus.empty() ? 0 : plan.cpus[0], &one);
    sched_setaffinity(0, sizeof one, &one);
    Probe p = live_probe(*live, *link, n, o.batch, err, probe_ns);
    sched_setaffinity(0, sizeof all, &all);
    if (err) throw std::runtime_error(std::string("BPF_PROG_TEST_RUN (live frames) failed: ") + std::strerror(-err));
    // A few frames are within the noise of the counters (the sender's own stack sends
    // some): only "vanished" is certain then.
    if (p == Probe::Delivered && n < 64 && !(peer && peer->xdp_attached)) p = Probe::Unknown;
    if (p == Probe::Vanished) {
      std::string why = "frames redirected to " + o.dev + " are dropped by the kernel: ";
      if (peer && !(peer->flags & IFF_UP))
        why += "its peer " + peer->name + " is down";
      else
        why += "its peer" + (peer ? " " + peer->name : std::string()) +
               " has no XDP program attached and GRO off (attach an XDP program to the peer, or enable GRO on it)";
      if (o.method == "live") throw std::runtime_error(why + ", or use --method packet");
      warn(why + "; using --method packet");
      method = "packet";
      live.reset();
      probe_ns = 0;
      stats_before = stats_of(ifindex);
    } else {
      if (p == Probe::Unknown)
        warn("could not tell whether the peer of " + o.dev +
             " takes live frames (it needs an XDP program or GRO; check the receiver's counts)");
      probe_packets = n;
      live->set_call_setup_ns(probe_ns);  // 4096 frames take about the fixed cost
    }
  }

  int64_t duration_ns = plan.duration > 0 ? static_cast<int64_t>(plan.duration * 1e9) : 0;
  uint64_t quota = plan.count ? plan.count - probe_packets : 0;
  if (plan.count && quota == 0) {
    out.per_thread.push_back(0);
  } else if (method == "live") {
    out = run_threads(
        plan, [&](int i) { return live->run(plan, i, quota ? share(quota, i, plan.threads) : 0, duration_ns); });
  } else {
    packet_check(ifindex);
    out = run_threads(plan, [&](int i) {
      return packet_run(spec, plan, i, quota ? share(quota, i, plan.threads) : 0, plan.rate / plan.threads,
                        duration_ns);
    });
  }
  // The probe's frames count, and so does the time its call took.
  out.packets += probe_packets;
  if (probe_packets && !out.per_thread.empty()) out.per_thread[0] += probe_packets;
  if (!out.start_ns) out.start_ns = out.end_ns = mono_ns();
  out.start_ns -= probe_ns;

  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the peer's counters settle
  auto stats_after = stats_of(ifindex);
  std::optional<uint64_t> dropped;
  if (stats_before && stats_after) dropped = stats_after->tx_dropped - stats_before->tx_dropped;

  double seconds = static_cast<double>(out.end_ns - out.start_ns) / 1e9;
  double pps = seconds > 0 ? static_cast<double>(out.packets) / seconds : 0;
  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  double now_unix = static_cast<double>(rt.tv_sec) + rt.tv_nsec / 1e9;
  double end_unix = now_unix - static_cast<double>(mono_ns() - out.end_ns) / 1e9;
  double start_unix = end_unix - seconds;

  const char* src_mode = mode == SrcMode::Fixed ? "single" : mode == SrcMode::RoundRobin ? "round-robin" : "random";
  if (o.json) {
    nlohmann::json j;
    j["packets"] = out.packets;
    j["seconds"] = seconds;
    j["pps"] = pps;
    j["method"] = method;
    j["threads"] = plan.threads;
    j["per_thread"] = out.per_thread;
    j["dev"] = o.dev;
    j["frame_size"] = spec.frame.size();
    j["bytes"] = out.packets * spec.frame.size();
    j["family"] = v6 ? "ipv6" : "ipv4";
    j["proto"] = o.proto;
    j["vlan"] = o.vlan >= 0 ? nlohmann::json(o.vlan) : nlohmann::json(nullptr);
    j["sources"] = src_mode;
    j["source_count"] = mode == SrcMode::RoundRobin ? nlohmann::json(o.sources) : nlohmann::json(nullptr);
    j["dst_mac"] = format_mac(req.dst_mac);
    j["rate"] = plan.rate;
    j["start_unix"] = start_unix;
    j["end_unix"] = end_unix;
    j["dev_tx_dropped"] = dropped ? nlohmann::json(*dropped) : nlohmann::json(nullptr);
    j["schedule_slipped"] = out.slipped;
    j["interrupted"] = g_stop.load();
    if (!out.errors.empty()) j["error"] = out.errors.front();
    std::printf("%s\n", j.dump().c_str());
  } else {
    char rate_s[64];
    if (pps >= 1e6)
      std::snprintf(rate_s, sizeof rate_s, "%.0f pps (%.2f Mpps)", pps, pps / 1e6);
    else
      std::snprintf(rate_s, sizeof rate_s, "%.0f pps", pps);
    std::printf("levee-flood: %llu packets in %.3f s = %s; %s, %d thread%s, %zu-byte %s/%s%s, %s source%s%s\n",
                static_cast<unsigned long long>(out.packets), seconds, rate_s, method.c_str(), plan.threads,
                plan.threads == 1 ? "" : "s", spec.frame.size(),
                o.proto == "syn"   ? "SYN"
                : o.proto == "udp" ? "UDP"
                                   : "ICMP",
                v6 ? "IPv6" : "IPv4", o.vlan >= 0 ? (", VLAN " + std::to_string(o.vlan)).c_str() : "", src_mode,
                mode == SrcMode::Fixed ? "" : "s",
                dropped ? (", " + o.dev + " dropped " + std::to_string(*dropped)).c_str() : "");
  }
  if (dropped && *dropped * 100 > out.packets && method == "live")
    warn(o.dev + " dropped " + std::to_string(*dropped) + " frames: the peer's ring was full (a slow receiver" +
         (plan.threads > 1 ? ", or fewer peer rx queues than threads" : std::string()) + ")");
  if (out.slipped) warn("the schedule slipped by " + std::to_string(out.slipped) + " packets (the sender stalled)");
  for (auto& e : out.errors) std::fprintf(stderr, "levee-flood: error: %s\n", e.c_str());
  return out.errors.empty() ? 0 : kExitError;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
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
  try {
    return run(o);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "levee-flood: %s (see --help)\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "levee-flood: error: %s\n", e.what());
    return kExitError;
  }
}
