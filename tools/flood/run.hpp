// run.hpp - how long and how fast, and what each sender thread did.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spec.hpp"

namespace levee::flood {

struct RunPlan {
  double duration = 0;  // seconds, 0: no time limit
  uint64_t count = 0;   // packets in all, 0: no count limit
  double rate = 0;      // packets/s in all, 0: full speed
  int threads = 1;
  unsigned batch = 64;
  int ifindex = 0;
  std::vector<int> cpus;  // thread i runs on cpus[i % cpus.size()]
};

struct ThreadResult {
  uint64_t packets = 0;
  int64_t start_ns = 0, end_ns = 0;  // CLOCK_MONOTONIC
  uint64_t slipped = 0;              // paced: packets of the schedule given up after a stall
  std::string error;                 // empty: fine
};

// What the senders did, summed.
struct Outcome {
  uint64_t packets = 0, slipped = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::vector<uint64_t> per_thread;
  std::vector<std::string> errors;
};

// Set by the main thread on SIGINT/SIGTERM; senders stop at their next check.
extern std::atomic<bool> g_stop;

int64_t mono_ns();
// Pin the calling thread and block SIGINT/SIGTERM in it (the main thread takes them).
void sender_thread_setup(int cpu);

// Share of `total` for thread i of n (the first total % n threads get one more).
inline uint64_t share(uint64_t total, int i, int n) {
  return total / n + (static_cast<uint64_t>(i) < total % n ? 1 : 0);
}

// --- live: BPF_PROG_TEST_RUN + BPF_F_TEST_XDP_LIVE_FRAMES --------------------------
class LiveSender {
 public:
  // Loads flood.bpf.c configured for spec; throws std::runtime_error.
  LiveSender(const FloodSpec& spec, int ifindex, bool verbose);
  ~LiveSender();
  LiveSender(const LiveSender&) = delete;
  LiveSender& operator=(const LiveSender&) = delete;

  // One BPF_PROG_TEST_RUN of `repeat` frames; returns 0 or -errno.
  int call(uint32_t repeat, unsigned batch);
  // The fixed cost of a call (page pool setup), to size the last call of a timed run.
  void set_call_setup_ns(int64_t ns);
  // One sender thread's whole run (share `quota` packets, 0: unlimited; duration_ns
  // 0: unlimited, counted from the thread's own start).
  ThreadResult run(const RunPlan& plan, int thread, uint64_t quota, int64_t duration_ns);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int64_t setup_ns_ = 25'000'000;
};

// --- packet: AF_PACKET, PACKET_QDISC_BYPASS, sendmmsg -------------------------------
// One sender thread's run: its own socket, paced with absolute deadlines when
// rate > 0 (rate is this thread's share). Opens the socket in the calling thread.
// duration_ns (0: none) counts from the thread's own start.
ThreadResult packet_run(const FloodSpec& spec, const RunPlan& plan, int thread, uint64_t quota, double rate,
                        int64_t duration_ns);
// Open + close a socket on the interface to surface errors before starting threads.
void packet_check(int ifindex);

}  // namespace levee::flood
