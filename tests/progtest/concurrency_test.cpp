// concurrency_test.cpp - one source flooded from two CPUs at once must still get at most
// burst + rate * t through.
//
// Two threads pinned to CPU 0 and CPU 1 each run BPF_PROG_TEST_RUN with a large repeat
// on a frame from the same source, at the same time. The bound is checked against the
// wall time around both runs; it holds for any interleaving of the CPUs' CASes, so it
// is asserted exactly (+1). The lower bound is loose: it only shows the limiter is not
// dropping conforming packets wholesale, measured against the time the kernel reports
// the program ran (it excludes time the thread was preempted).
#include <linux/bpf.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <iostream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "packet.hpp"

namespace levee::progtest {
namespace {

struct FloodCase {
  const char* name;
  uint64_t rate, burst;
  std::optional<bool> fast_reject;  // nullopt: as compile_class decides on this machine
  int repeat;                       // per CPU
};

void PrintTo(const FloodCase& c, std::ostream* os) { *os << c.name; }

class ConcurrentFlood : public ProgTest, public ::testing::WithParamInterface<FloodCase> {};

TEST_P(ConcurrentFlood, TwoCpusOnOneSourceStayWithinBurstPlusRateTimesT) {
  const FloodCase& fc = GetParam();
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs";
  const lv_class cls = make_class(fc.rate, fc.burst, 32, 64, fc.fast_reject);
  dp().set_class(cls);
  const std::vector<uint8_t> frame =
      pkt::Frame().eth().ipv4("198.18.100.1", "198.19.0.1").udp(4000, 53).payload(18).bytes();

  const TwoCpuRun two = run_on_two_cpus(dp(), frame, fc.repeat);
  for (int cpu = 0; cpu < 2; ++cpu) {
    ASSERT_EQ(two.pin_err[cpu], 0) << "pin to CPU " << cpu;
    ASSERT_EQ(two.run[cpu].err, 0) << "run on CPU " << cpu;
  }
  const Counters c = dp().counters();
  const uint64_t passed = c[LV_R_CONFORMING].packets;
  const uint64_t rate_drops = c[LV_R_RATE].packets;
  const uint64_t contended = c[LV_R_CONTENDED].packets;
  const uint64_t sent = 2 * static_cast<uint64_t>(fc.repeat);
  EXPECT_EQ(passed + rate_drops + contended, sent) << describe(c);

  // Every decision's clock reading lies in [begin, end].
  const uint64_t elapsed = two.end - two.begin;
  const uint64_t upper = fc.burst + elapsed / cls.pkt.cost + 1;
  // Thread i flooded the source for at least duration * repeat ns of its own CPU time.
  const uint64_t lower = std::max<uint64_t>(fc.burst, two.busy_ns() / cls.pkt.cost / 2);

  std::cout << fc.name << ": fast_reject=" << bool(cls.flags & LV_CLASS_FAST_REJECT) << " sent " << sent << " in "
            << elapsed / 1000 << " us (per-packet " << two.run[0].duration << " / " << two.run[1].duration
            << " ns); passed " << passed << ", bound " << upper << ", lower " << lower << "; contended " << contended
            << "\n";
  EXPECT_LE(passed, upper);
  EXPECT_GE(passed, lower);
  EXPECT_LE(contended * 10, passed) << "lost CAS races must stay rare";
  EXPECT_EQ(c[LV_R_MAP_FULL].packets, 0u);
}

INSTANTIATE_TEST_SUITE_P(Flood, ConcurrentFlood,
                         ::testing::Values(
                             // The brief's case: the burst is below two ticks, so the fine clock decides.
                             FloodCase{"Rate100kBurst100", 100'000, 100, std::nullopt, 4'000'000},
                             FloodCase{"Rate100kBurst100FastRejectForced", 100'000, 100, true, 4'000'000},
                             // A burst that covers two ticks: compile_class turns the fast reject on.
                             FloodCase{"Rate100kBurst1000", 100'000, 1000, std::nullopt, 4'000'000},
                             FloodCase{"Rate100kBurst1000FastRejectOff", 100'000, 1000, false, 4'000'000},
                             // One packet per second: what passes is the burst, to the packet, even though
                             // both CPUs race to create the source's state.
                             FloodCase{"Rate1Burst1000", 1, 1000, std::nullopt, 2'000'000},
                             FloodCase{"Rate1Burst1000FastRejectOff", 1, 1000, false, 2'000'000}),
                         [](const ::testing::TestParamInfo<FloodCase>& info) { return info.param.name; });

}  // namespace
}  // namespace levee::progtest
