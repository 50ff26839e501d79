// live.cpp - the live-frames method: the kernel runs flood.bpf.c `repeat` times per
// BPF_PROG_TEST_RUN call on fresh copies of the template, and every XDP_REDIRECT goes
// out of the sender veth as a real frame.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "flood.skel.h"
#include "run.hpp"

namespace levee::flood {

std::atomic<bool> g_stop{false};

int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void sender_thread_setup(int cpu) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  if (cpu >= 0) {
    cpu_set_t cs;
    CPU_ZERO(&cs);
    CPU_SET(cpu, &cs);
    pthread_setaffinity_np(pthread_self(), sizeof cs, &cs);
  }
}

namespace {

bool g_verbose = false;

int libbpf_print(enum libbpf_print_level level, const char* fmt, va_list ap) {
  if (!g_verbose && level != LIBBPF_WARN) return 0;
  return std::vfprintf(stderr, fmt, ap);
}

}  // namespace

struct LiveSender::Impl {
  ::flood* skel = nullptr;
  int prog_fd = -1;
  std::vector<uint8_t> frame;
};

LiveSender::LiveSender(const FloodSpec& spec, int ifindex, bool verbose) : impl_(std::make_unique<Impl>()) {
  g_verbose = verbose;
  libbpf_set_print(libbpf_print);
  impl_->frame = spec.frame;
  ::flood* skel = ::flood__open();
  if (!skel) throw std::runtime_error(std::string("cannot open the flood BPF object: ") + std::strerror(errno));
  impl_->skel = skel;
  auto* ro = skel->rodata;
  ro->cfg_ifindex = static_cast<__u32>(ifindex);
  ro->cfg_mode = static_cast<__u32>(spec.mode);
  ro->cfg_v6 = spec.v6 ? 1 : 0;
  ro->cfg_src_off = static_cast<__u32>(spec.src_off);
  ro->cfg_ip_csum_off = static_cast<__u32>(spec.ip_csum_off);
  ro->cfg_l4_csum_off = static_cast<__u32>(spec.l4_csum_off);
  ro->cfg_l4_udp = spec.l4_udp ? 1 : 0;
  ro->cfg_rr_count = spec.rr_count ? spec.rr_count : 1;
  for (int i = 0; i < 4; ++i) {
    ro->cfg_base[i] = spec.base[i];
    ro->cfg_mask[i] = spec.mask[i];
  }
  // Restore the whole frame when it is small, else the headers (payload left as is).
  size_t copy = spec.frame.size() <= sizeof ro->cfg_tmpl ? spec.frame.size() : (spec.hdr_len + 7) & ~size_t{7};
  ro->cfg_copy_len = static_cast<__u32>(copy);
  std::memcpy(const_cast<__u64*>(ro->cfg_tmpl), spec.frame.data(), copy);
  ro->cfg_ip_csum_base = spec.ip_csum_base;
  ro->cfg_l4_csum_base = spec.l4_csum_base;
  if (int err = ::flood__load(skel); err)
    throw std::runtime_error(std::string("cannot load the flood XDP program: ") + std::strerror(-err) +
                             (verbose ? "" : " (-v shows the verifier log)"));
  impl_->prog_fd = bpf_program__fd(skel->progs.flood_xmit);
}

LiveSender::~LiveSender() {
  if (impl_ && impl_->skel) ::flood__destroy(impl_->skel);
}

void LiveSender::set_call_setup_ns(int64_t ns) { setup_ns_ = std::clamp<int64_t>(ns, 0, 200'000'000); }

int LiveSender::call(uint32_t repeat, unsigned batch) {
  LIBBPF_OPTS(bpf_test_run_opts, opts);
  opts.data_in = impl_->frame.data();
  opts.data_size_in = static_cast<__u32>(impl_->frame.size());
  opts.repeat = static_cast<int>(repeat);
  opts.flags = BPF_F_TEST_XDP_LIVE_FRAMES;
  opts.batch_size = batch;
  int err = bpf_prog_test_run_opts(impl_->prog_fd, &opts);
  return err < 0 ? -errno : 0;
}

ThreadResult LiveSender::run(const RunPlan& plan, int thread, uint64_t quota, int64_t duration_ns) {
  constexpr uint64_t kFirst = 1u << 20;       // ~70 ms at full speed: measures the speed
  constexpr uint64_t kMax = 1u << 30;         // repeat is 32 bits
  constexpr double kCallSeconds = 1.0;        // each call has ~25 ms of setup: keep calls long
  constexpr int64_t kMinLeftNs = 10'000'000;  // not worth a call

  sender_thread_setup(plan.cpus.empty() ? -1 : plan.cpus[thread % plan.cpus.size()]);
  ThreadResult r;
  r.start_ns = mono_ns();
  const int64_t deadline_ns = duration_ns ? r.start_ns + duration_ns : 0;
  const int64_t setup_ns = setup_ns_;  // a call's fixed cost (measured by the probe)
  uint64_t left = quota ? quota : UINT64_MAX;
  double per_ns = 0;  // frames per ns once set up, measured over the last long call
  while (left && !g_stop.load(std::memory_order_relaxed)) {
    int64_t now = mono_ns();
    uint64_t rep = per_ns > 0 ? static_cast<uint64_t>(per_ns * kCallSeconds * 1e9) : kFirst;
    if (deadline_ns) {
      int64_t tl = deadline_ns - now - setup_ns;  // the last call ends near the deadline
      if (tl < kMinLeftNs) break;
      // Aim short of the deadline: the speed of the next call is only an estimate
      // (the other thread, the receiver and everything else share two CPUs).
      if (per_ns > 0) rep = std::min<uint64_t>(rep, static_cast<uint64_t>(per_ns * 0.8 * static_cast<double>(tl)));
    }
    rep = std::clamp<uint64_t>(rep, 1, kMax);
    rep = std::min(rep, left);
    int err = call(static_cast<uint32_t>(rep), plan.batch);
    int64_t done = mono_ns();
    if (err) {
      r.error = std::string("BPF_PROG_TEST_RUN (live frames) failed: ") + std::strerror(-err);
      break;
    }
    r.packets += rep;
    left -= rep;
    // Speed once set up; from a short call, where the setup estimate would dominate,
    // the plain (pessimistic) average instead.
    int64_t took = done - now;
    int64_t busy = took > 4 * setup_ns ? took - setup_ns : took;
    if (rep >= (1u << 16) && busy > 0) per_ns = static_cast<double>(rep) / static_cast<double>(busy);
  }
  r.end_ns = mono_ns();
  return r;
}

}  // namespace levee::flood
