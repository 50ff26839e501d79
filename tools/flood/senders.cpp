// senders.cpp - the sender threads of a run and their outcome (senders.hpp).
#include "senders.hpp"

#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace levee::flood {
namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t cs;
  CPU_ZERO(&cs);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof cs, &cs) == 0)
    for (int i = 0; i < CPU_SETSIZE; ++i)
      if (CPU_ISSET(i, &cs)) out.push_back(i);
  return out;
}

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// Runs fn(i) on plan.threads threads while the main thread waits for SIGINT/SIGTERM.
template <typename Fn>
Outcome run_threads(const RunPlan& plan, Fn fn) {
  std::vector<ThreadResult> res(plan.threads);
  std::atomic<int> done{0};
  std::vector<std::thread> ts;
  ts.reserve(plan.threads);
  for (int i = 0; i < plan.threads; ++i)
    ts.emplace_back([&, i] {
      res[i] = fn(i);
      done.fetch_add(1);
    });
  sigset_t set = stop_signals();
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

}  // namespace

RunPlan make_plan(const Options& o, int ifindex) {
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
  return plan;
}

void block_stop_signals() {
  sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

Outcome send_flood(const FloodSpec& spec, const RunPlan& plan, const Method& m) {
  Outcome out;
  int64_t duration_ns = plan.duration > 0 ? static_cast<int64_t>(plan.duration * 1e9) : 0;
  uint64_t quota = plan.count ? plan.count - m.probe_packets : 0;
  if (plan.count && quota == 0) {
    out.per_thread.push_back(0);
  } else if (m.name == "live") {
    out = run_threads(
        plan, [&](int i) { return m.live->run(plan, i, quota ? share(quota, i, plan.threads) : 0, duration_ns); });
  } else {
    packet_check(plan.ifindex);
    out = run_threads(plan, [&](int i) {
      return packet_run(spec, plan, i, quota ? share(quota, i, plan.threads) : 0, plan.rate / plan.threads,
                        duration_ns);
    });
  }
  // The probe's frames count, and so does the time its call took.
  out.packets += m.probe_packets;
  if (m.probe_packets && !out.per_thread.empty()) out.per_thread[0] += m.probe_packets;
  if (!out.start_ns) out.start_ns = out.end_ns = mono_ns();
  out.start_ns -= m.probe_ns;
  return out;
}

}  // namespace levee::flood
