// flood_harness.hpp - the pieces of the flood scenarios: the levee-flood generator as a
// child process, nginx on a private config in the receiver namespace, wrk as its load
// client in the sender namespace, the loss of a numbered UDP flow, a tap counting the
// distinct flood sources that got past the filter, per-namespace kernel counters, and a
// poller of `levee status --json`.
//
// Everything runs inside the sandbox's namespaces, is bounded in time, and is stopped
// and removed by its destructor (nginx: SIGTERM, then SIGKILL; its files live in a
// TempDir).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e.hpp"
#include "sandbox.hpp"
#include "traffic.hpp"

namespace lvt {

// ---- levee-flood --------------------------------------------------------------------

struct FloodSpec {
  std::string ns;   // sender namespace (--netns)
  std::string dev;  // sender end of the veth
  std::string dst;  // destination address (family follows)
  // Sources: one of
  std::string random;    // --random PREFIX: a new random source in PREFIX every packet
  std::string src;       // --src ADDRESS
  uint32_t sources = 0;  // --sources N --src-base src_base: round robin
  std::string src_base;
  std::string proto = "udp";
  uint16_t dport = 9;
  double rate = 0;      // 0: full speed (live frames); else paced (AF_PACKET)
  double seconds = 30;  // --duration
  int threads = 1;
  size_t size = 0;  // frame bytes; 0: the generator's default (64)
  int cpu = -1;     // >= 0: run the generator on this CPU only (taskset)
};

struct FloodResult {
  RunResult run;
  nlohmann::json json;  // levee-flood --json
  bool ok = false;      // exit 0 and JSON parsed
  uint64_t packets = 0;
  double seconds = 0, pps = 0;
  uint64_t t_start = 0, t_end = 0;  // CLOCK_MONOTONIC ns
  int64_t dev_tx_dropped = -1;      // -1: unknown
  std::string describe() const;
};

// Starts levee-flood at once; wait() collects its report.
class Flood {
 public:
  explicit Flood(const FloodSpec& spec);
  FloodResult wait();
  static std::string binary();

 private:
  FloodSpec spec_;
  std::optional<Child> child_;
};

// ---- nginx --------------------------------------------------------------------------

// nginx from Debian in a namespace: private prefix, config, pid, temp and log paths
// under a TempDir, access log off, one process (master_process off), daemon off, a
// static file of `body_bytes` at /index.html. Started by the constructor, which waits
// until every listen address accepts connections (throws with nginx's own words if it
// does not); stopped by stop() or the destructor.
class Nginx {
 public:
  // listen: addresses ("198.18.0.2", "2001:db8::2"), port 80 on each.
  Nginx(const std::string& ns, const std::vector<std::string>& listen, size_t body_bytes = 600);
  ~Nginx();
  Nginx(const Nginx&) = delete;
  Nginx& operator=(const Nginx&) = delete;
  size_t body_bytes() const { return body_bytes_; }
  static std::string url(const std::string& address);  // http://ADDR:80/index.html
  // Stops nginx; returns what it printed plus its error log.
  std::string stop();
  std::string error_log() const;
  bool running();
  static bool available();

 private:
  TempDir dir_;
  size_t body_bytes_;
  std::optional<Child> child_;
};

// ---- wrk ----------------------------------------------------------------------------

struct WrkSpec {
  std::string ns;  // client namespace
  std::string url;
  int connections = 4;
  int seconds = 30;        // -d (whole seconds)
  unsigned delay_ms = 20;  // pause before each request (pacing)
  unsigned timeout_s = 2;  // --timeout
  size_t body_bytes = 0;   // a response counts as good if 200 with this body length
  int cpu = -1;            // >= 0: wrk runs on this CPU only (taskset)
};

struct WrkResult {
  RunResult run;
  bool ok = false;                                                     // exit 0 and its summary parsed
  uint64_t requests = 0;                                               // responses received
  uint64_t good = 0;                                                   // 200 with the expected body
  uint64_t bad = 0;                                                    // any other response
  uint64_t connect = 0, read = 0, write = 0, status = 0, timeout = 0;  // wrk's error counts
  double duration_s = 0, lat_mean_ms = 0, lat_p99_ms = 0, lat_max_ms = 0;
  uint64_t t_start = 0, t_end = 0;  // CLOCK_MONOTONIC ns around the run
  // Requests tried: responses plus requests lost to socket errors and timeouts.
  uint64_t attempts() const { return requests + connect + read + write + timeout; }
  std::string describe() const;
};

// Runs wrk in the client namespace: one new TCP connection per request (Connection:
// close), paced by a Lua delay(), summary as JSON from the script's done(). A request
// whose SYN is lost is not a wrk error (connect() just takes 1 s longer): count those
// with the client namespace's TcpExt.TCPSynRetrans (NetCounters).
class Wrk {
 public:
  explicit Wrk(const WrkSpec& spec);
  WrkResult wait();
  static bool available();

 private:
  WrkSpec spec_;
  TempDir dir_;
  uint64_t t_start_ = 0;
  std::optional<Child> child_;
};

// Receive packet steering: the packets `ifname` receives are processed on the CPUs of
// `cpu_mask` (its rx-* queues' rps_cpus). Through `ip netns exec`, whose private sysfs
// shows the namespace's devices (it hides /sys/fs/bpf, which this does not need).
void set_rps(const std::string& ns, const std::string& ifname, unsigned cpu_mask);

// ---- kernel counters of a namespace -------------------------------------------------

// /proc/net/{netstat,snmp,snmp6} read inside a namespace: "TcpExt.TCPSynRetrans",
// "Tcp.RetransSegs", "Udp.RcvbufErrors", "Ip6InDiscards", ...
using NetCounters = std::map<std::string, int64_t>;
NetCounters net_counters(const std::string& ns);
// b - a for one counter (0 if absent in either).
int64_t counter_delta(const NetCounters& a, const NetCounters& b, const std::string& key);
// An interface's counters from `ip -s -j link show` in a namespace: rx/tx packets,
// bytes, dropped ("rx_dropped", "tx_dropped", ...).
std::map<std::string, int64_t> link_counters(const std::string& ns, const std::string& ifname);

// ---- loss of a numbered flow ------------------------------------------------------

// Loss of one seq flow in the window [from, to] of send times. A send the kernel
// refused (ENOBUFS: the veth's ring toward the filter was full, the datagram never left)
// is a lost packet too: a client on another machine would have lost it at the NIC.
struct SeqLoss {
  uint64_t sent = 0, received = 0, lost = 0;  // in the window: successful sends, and of them
  uint64_t refused = 0;                       // sends that failed in the window
  uint64_t sent_total = 0, received_total = 0, refused_total = 0;
  uint64_t tried() const { return sent + refused; }
  double loss() const { return tried() ? static_cast<double>(lost + refused) / static_cast<double>(tried()) : 0.0; }
  std::string describe() const;
};
SeqLoss seq_loss(const SendLog& log, const std::vector<uint64_t>& received, uint64_t from, uint64_t to);

// ---- distinct sources that got through ---------------------------------------------

// An AF_PACKET tap on the receiver's end of the veth (frames the filter passed), that
// counts the frames whose IP source lies in `prefix` and the distinct such sources,
// with the time each was first seen. A source is the address masked to `source_bits`
// (levee's prefix4/prefix6: an IPv6 source is a /64 by default); -1: the whole address.
// Frames are truncated to their headers.
class SourceTap {
 public:
  SourceTap(const std::string& ns, const std::string& ifname, const std::string& prefix, int source_bits = -1);
  void finish(unsigned quiet_ms = 200, unsigned max_ms = 3000) { rx_.finish(quiet_ms, max_ms); }
  uint64_t frames() const { return frames_.load(); }
  uint64_t distinct() const;
  // Distinct sources first seen before t (CLOCK_MONOTONIC ns).
  uint64_t distinct_before(uint64_t t) const;
  // When each distinct source was first seen (CLOCK_MONOTONIC ns, ascending).
  std::vector<uint64_t> first_seen() const;
  // Frames counted at or after t / in [from, to) (CLOCK_MONOTONIC ns, when the tap read
  // them, to the millisecond: it keeps a count per millisecond), e.g. from the flood's
  // third second on, or from an escalation on; known only afterwards, so asked afterwards.
  uint64_t frames_after(uint64_t t) const { return frames_between(t, UINT64_MAX); }
  uint64_t frames_between(uint64_t from, uint64_t to) const;
  int64_t tap_drops() const;  // frames the tap's socket dropped (PACKET_STATISTICS)

 private:
  bool on_read(const Received& m);
  struct Key {
    uint64_t hi, lo;
    bool operator==(const Key& o) const { return hi == o.hi && lo == o.lo; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.hi * 0x9e3779b97f4a7c15ull ^ k.lo); }
  };
  // Which frames count and what one source is.
  struct Match {
    int family = 0;
    uint8_t net[16] = {};
    int plen = 0;
    int source_bits = 0;
  };
  static Match match_of(const std::string& prefix, int source_bits);
  const Match match_;
  std::atomic<uint64_t> frames_{0};
  mutable std::atomic<int64_t> drops_{0};
  mutable std::mutex mu_;
  std::unordered_set<Key, KeyHash> seen_;
  std::vector<uint64_t> first_seen_;  // sorted by construction
  const uint64_t t0_;                 // when the tap began
  std::vector<uint32_t> per_ms_;      // [i]: frames read in millisecond i after t0_
  Receiver rx_;                       // last: its thread ends before the members it writes go
};

// ---- levee status, sampled ----------------------------------------------------------

// `tick` every `interval_ms` on a thread of its own, from construction until stop() (or
// destruction): what StatusPoller and OfferedWatch sample with. Declared last in its
// owner, so that it stops before what `tick` touches goes.
class Periodic {
 public:
  Periodic(unsigned interval_ms, std::function<void()> tick);
  ~Periodic() { stop(); }
  void stop();

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Polls `levee status --json` every interval on its own thread: the interface's
// "sources" (tracked) with the time of each sample.
class StatusPoller {
 public:
  struct Sample {
    uint64_t t0 = 0, t1 = 0;  // around the command
    int64_t sources = -1;     // -1: no "sources" field / the command failed
  };
  StatusPoller(const Sandbox& sb, unsigned interval_ms);
  std::vector<Sample> stop();
  std::string error() const;

 private:
  void sample();
  const Sandbox& sb_;
  mutable std::mutex mu_;
  std::vector<Sample> samples_;
  std::string error_;
  Periodic periodic_;
};

// The frames an interface has handed its veth peer (tx_packets, from the kernel's link
// statistics over rtnetlink), read every `interval_ms` from a thread: what a flood
// offered the filter and when, seen from the sender's side, not the filter's.
class OfferedWatch {
 public:
  struct Sample {
    uint64_t t = 0;       // CLOCK_MONOTONIC ns
    uint64_t frames = 0;  // tx_packets
  };
  OfferedWatch(const std::string& ns, const std::string& ifname, unsigned interval_ms);
  std::vector<Sample> stop();

 private:
  std::optional<uint64_t> read_frames();
  levee::Fd nl_;
  std::string ifname_;
  std::mutex mu_;
  std::vector<Sample> samples_;
  Periodic periodic_;
};

// ---- a flood scenario ---------------------------------------------------------------

// An integer or a number from the environment, or dflt when unset.
int env_int(const char* name, int dflt);
double env_double(const char* name, double dflt);

// Generator threads (LVT_FLOOD_THREADS, default 1: the second core stays with the
// server side); the veth has one queue per thread.
int flood_threads();

// Where the traffic toward the filter is made: the generator's thread, the UDP client,
// wrk, and (by RPS) the sender side's own receive processing, all on one CPU, the first
// this process may use; the server side (nginx, the receivers) has the others.
//
// Why: the veth's receive ring (256 frames) is drained by its NAPI poll on the CPU that
// last scheduled it. The live-frame generator schedules it on its own CPU and then runs
// it itself, in step: it sends only as fast as the filter drops, and the ring does not
// overflow. A packet toward the filter sent from another CPU (the client, or the sender
// side's TCP ACKs in its softirq) may find the poll idle and schedule it there: from
// then on the generator fills the ring from one CPU while the filter drains it on the
// other, with the freed frames' pages going back across CPUs, and whenever the drain
// falls behind, the ring is full and the client's sends are refused (ENOBUFS), whatever
// the filter decides. Measured: 1-66% of the client's datagrams refused, 6-35% of the
// flood dropped by the veth, depending on the other load of the machine (a bare XDP_DROP
// program kept up there: 0-0.4% of the flood dropped); with everything on one CPU, none.
// A NIC's ring is filled by the wire, not by a CPU of the host, so the one-CPU
// arrangement is the closer model. LVT_WIRE_CPU=-1 leaves placement to the
// scheduler (and is the only choice with two generator threads).
int wire_cpu();

// The flood tests' fixture: a sandbox whose veth has one queue per generator thread.
// TEST_F or, with a family, TEST_P (E2eFamily).
class FloodE2e : public E2eFamily {
 protected:
  void SetUp() override {
    if (!running_as_root()) GTEST_SKIP() << "end-to-end tests need root (netns, XDP, bpffs)";
    sb_ = std::make_unique<Sandbox>(flood_threads());
  }
};

struct ScenarioSpec {
  Family family = kIpv4;
  std::string flood_prefix;  // --random
  std::string flood_proto = "udp";
  uint16_t flood_dport = 9;
  double flood_seconds = 30;
  int flood_threads = 1;
  double client_pps = 200;    // the paced UDP client
  bool web = true;            // nginx in the receiver namespace, wrk in the sender's
  int wrk_connections = 4;    // wrk's load: its connections,
  unsigned wrk_gap_ms = 20;   // each pausing this long before a request
  bool tap = true;            // count the flood sources that got through
  int source_bits = -1;       // what one source is (levee's prefix4/prefix6); -1: an address
  double tap_after_s = 2;     // flood_frames_after: the frames through from this long after the flood's start
  unsigned status_ms = 3000;  // levee status --json every ... (0: never)
  // CPU placement: the generator, the UDP client and wrk (the traffic arriving on the
  // wire) on one CPU, -1 to leave them to the scheduler. See wire_cpu().
  int wire_cpu = -1;
};

// What levee and the veth said at one moment of a scenario.
struct ScenarioSnapshot {
  nlohmann::json stats;                             // levee stats --json
  int64_t sources = -1;                             // levee status: the interface's "sources" (-1: not reported)
  int64_t admitted = -1;                            // levee status: the default class's "admitted" (-1: not reported)
  std::map<std::string, int64_t> tx_link, rx_link;  // link_counters() of both ends of the veth
};

struct ScenarioResult {
  std::string client_src;  // the client's address
  FloodResult flood;
  SendLog client;
  SeqLoss loss;         // the client's, over the flood
  double coverage = 0;  // share of the flood's span the client covered
  int64_t client_socket_drops = 0;
  WrkResult wrk;
  int64_t syn_retrans = 0, retrans_segs = 0, listen_drops = 0;
  int wire_cpu = -1;
  uint64_t admitted = 0, flood_frames_passed = 0;
  uint64_t flood_frames_after = 0;            // of them, those from spec.tap_after_s after the flood's start on
  std::vector<uint64_t> admitted_at;          // when each flood source got through first
  std::vector<OfferedWatch::Sample> offered;  // the sender's frames to the filter, every 20 ms (spec.tap)
  int64_t tap_drops = 0;
  ScenarioSnapshot before, after;  // just before the flood, and after everything
  std::vector<StatusPoller::Sample> samples;
  std::string status_error;
  std::string nginx_log;
  // The most sources levee status reported during the flood (-1: none sampled).
  int64_t peak_sources() const;
  // Frames the veth dropped meanwhile: the sender's end sending (its ring full, before
  // the filter), the receiver's end receiving. -1: unknown.
  int64_t tx_veth_dropped() const;
  int64_t rx_veth_dropped() const;
};

// nginx + wrk through the flood: >= 99% of the requests succeed. A request counts as
// failed on any wrk error, any response other than 200 with the whole file, and when its
// SYN had to be sent again (the request waited >= 1 s; wrk itself does not see it).
void expect_nginx_through(const ScenarioResult& r);

// Runs one flood of random sources beside the paced client and nginx + wrk, all of
// them started a second before the flood (so they are known sources when it starts)
// and ended shortly after it. levee must already be attached (or not: the harness
// works without it as long as the receiver takes live frames).
ScenarioResult run_scenario(Sandbox& sb, const ScenarioSpec& spec);
// Every figure of a run to the test log, each name prefixed with tag.
void report_scenario(const std::string& tag, const ScenarioResult& r);

}  // namespace lvt
