// packet_tx.cpp - the AF_PACKET method: sendmmsg() of prepared frames on a socket that
// bypasses the qdisc, at full speed or paced against absolute deadlines.
//
// Pacing: packet k of a thread is due at t0 + k / rate. The thread wakes up with
// clock_nanosleep(TIMER_ABSTIME) when a tick's worth of packets is due (one packet at
// low rates, ~100 us worth at high rates), sends everything due, and sleeps again, so
// a late wake-up is caught up at the next tick and the long-run rate is exact. Only a
// stall longer than kMaxDebt is not caught up (the schedule slips; reported).
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "run.hpp"

namespace levee::flood {
namespace {

constexpr double kTickSeconds = 100e-6;  // at high rates: one wake-up per 100 us
constexpr double kMaxDebtSeconds = 0.1;  // catch up at most 100 ms of missed schedule

int open_packet_socket(int ifindex) {
  int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);  // protocol 0: never receives
  if (fd < 0) throw std::runtime_error(std::string("AF_PACKET socket: ") + std::strerror(errno));
  int one = 1;
  if (::setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) != 0) {
    int e = errno;
    ::close(fd);
    throw std::runtime_error(std::string("PACKET_QDISC_BYPASS: ") + std::strerror(e));
  }
  int sndbuf = 4 << 20;
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf) != 0)
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_ifindex = ifindex;
  sll.sll_protocol = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0) {
    int e = errno;
    ::close(fd);
    throw std::runtime_error(std::string("bind AF_PACKET socket to the interface: ") + std::strerror(e));
  }
  return fd;
}

struct Sender {
  Sender(const FloodSpec& s, int ifindex, unsigned batch, uint64_t seed)
      : spec(s), fd(open_packet_socket(ifindex)), b(batch), gen(s, seed) {
    vary = spec.mode != SrcMode::Fixed;
    len = spec.frame.size();
    bufs.resize((vary ? b : 1) * len);
    for (size_t i = 0; i < (vary ? b : 1); ++i) std::memcpy(&bufs[i * len], spec.frame.data(), len);
    iov.resize(b);
    msgs.resize(b);
    for (unsigned i = 0; i < b; ++i) {
      iov[i].iov_base = &bufs[(vary ? i : 0) * len];
      iov[i].iov_len = len;
      msgs[i].msg_hdr = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
  }
  ~Sender() { ::close(fd); }
  Sender(const Sender&) = delete;
  Sender& operator=(const Sender&) = delete;

  // Send n (<= b) new frames; returns how many went out (less only on stop or error).
  uint64_t send(unsigned n) {
    if (vary) {
      std::array<uint32_t, 4> a;
      for (unsigned i = 0; i < n; ++i) {
        gen.next(a);
        rewrite_source(spec, static_cast<uint8_t*>(iov[i].iov_base), a);
      }
    }
    unsigned done = 0;
    int stalls = 0;
    while (done < n) {
      int k = ::sendmmsg(fd, &msgs[done], n - done, 0);
      if (k > 0) {
        done += static_cast<unsigned>(k);
        stalls = 0;
        continue;
      }
      if (k < 0 && errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
        throw std::runtime_error(std::string("sendmmsg: ") + std::strerror(errno));
      if (g_stop.load(std::memory_order_relaxed) || ++stalls > 100000) break;
      sched_yield();
    }
    return done;
  }

  const FloodSpec& spec;
  int fd;
  unsigned b;
  SourceGen gen;
  bool vary = false;
  size_t len = 0;
  std::vector<uint8_t> bufs;
  std::vector<iovec> iov;
  std::vector<mmsghdr> msgs;
};

void sleep_until(int64_t t_ns) {
  timespec ts{static_cast<time_t>(t_ns / 1000000000LL), static_cast<long>(t_ns % 1000000000LL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

void packet_check(int ifindex) { ::close(open_packet_socket(ifindex)); }

ThreadResult packet_run(const FloodSpec& spec, const RunPlan& plan, int thread, uint64_t quota, double rate,
                        int64_t duration_ns) {
  sender_thread_setup(plan.cpus.empty() ? -1 : plan.cpus[thread % plan.cpus.size()]);
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // wake up on time, not up to 50 us late
  ThreadResult r;
  try {
    unsigned b = std::clamp(plan.batch, 1u, 1024u);
    Sender s(spec, plan.ifindex, b, static_cast<uint64_t>(mono_ns()) * 0x9E3779B97F4A7C15ULL + thread);
    uint64_t limit = quota ? quota : UINT64_MAX;
    r.start_ns = mono_ns();
    const int64_t deadline_ns = duration_ns ? r.start_ns + duration_ns : 0;
    if (rate <= 0) {
      while (r.packets < limit && !g_stop.load(std::memory_order_relaxed)) {
        if (deadline_ns && mono_ns() >= deadline_ns) break;
        r.packets += s.send(static_cast<unsigned>(std::min<uint64_t>(b, limit - r.packets)));
      }
      r.end_ns = mono_ns();
      return r;
    }

    const double ns_per = 1e9 / rate;
    int64_t t0 = r.start_ns;
    if (deadline_ns) {  // packets due before the deadline
      double slots = static_cast<double>(deadline_ns - t0) / ns_per;
      limit = std::min<uint64_t>(limit, static_cast<uint64_t>(std::max(0.0, std::ceil(slots - 1e-6))));
    }
    const uint64_t tick = std::max<uint64_t>(1, static_cast<uint64_t>(rate * kTickSeconds));
    const uint64_t max_debt = std::max<uint64_t>(tick, static_cast<uint64_t>(rate * kMaxDebtSeconds));
    auto due_at = [&](uint64_t k) { return t0 + static_cast<int64_t>(static_cast<double>(k) * ns_per); };
    uint64_t slipped = 0;
    while (r.packets < limit && !g_stop.load(std::memory_order_relaxed)) {
      int64_t now = mono_ns();
      uint64_t due = std::min<uint64_t>(limit, static_cast<uint64_t>(static_cast<double>(now - t0) / ns_per) + 1);
      if (due > r.packets + max_debt) {  // a long stall: give up the missed part
        uint64_t skip = due - r.packets - tick;
        slipped += skip;
        t0 += static_cast<int64_t>(static_cast<double>(skip) * ns_per);
        due = r.packets + tick;
      }
      while (r.packets < due && !g_stop.load(std::memory_order_relaxed))
        r.packets += s.send(static_cast<unsigned>(std::min<uint64_t>(b, due - r.packets)));
      if (r.packets >= limit || (deadline_ns && now >= deadline_ns)) break;
      sleep_until(due_at(r.packets + tick - 1));
    }
    // The run lasts until the end of its last slot (or the deadline), so that
    // packets / seconds is the rate the packets were spread over.
    if (!g_stop.load()) {
      int64_t end = due_at(r.packets);
      if (deadline_ns) end = std::min(end, deadline_ns);
      sleep_until(end);
    }
    r.end_ns = mono_ns();
    r.slipped = slipped;
  } catch (const std::exception& e) {
    r.error = e.what();
    r.end_ns = mono_ns();
  }
  return r;
}

}  // namespace levee::flood
