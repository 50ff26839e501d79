// limiter_model_test.cpp - the limiter shared by CPUs: read -> decide -> compare-and-swap.
//
// The datapath keeps one 64-bit word per source and updates it with a CAS only when a
// packet passes (levee.bpf.c: lv_new_source, lv_limit_source, lv_gcra_take). This file
// models two CPUs running that code as atomic steps and explores random interleavings
// of those steps on a shared clock, checking the limiter's promise: over any window of
// length t at most burst + floor(t / T) packets pass. A variant that stores instead of
// compare-and-swapping is run through the same checker to show the checker catches a
// broken limiter. A last test runs the same algorithm on two real threads.
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <array>
#include <atomic>
#include <iostream>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "gcra_sim.hpp"

namespace levee::test {
namespace {

constexpr int kCasTries = 4;  // LV_CAS_TRIES in levee.bpf.c

enum class Verdict { kPass, kRate, kContended };

// The shared state of one source: absent until inserted (an LRU entry), then one word.
struct Shared {
  std::optional<uint64_t> ready;
};

// One CPU's progress through one packet. Each call to step() is one atomic action of
// the datapath; between two steps the other CPU may run any number of its own.
class Cpu {
 public:
  Cpu(Shared& shared, const lv_limit& l, bool use_cas, bool fast_reject)
      : sh_(shared), l_(l), use_cas_(use_cas), fast_reject_(fast_reject) {}

  // Advance by one step at time `now`; returns a verdict when the packet is finished.
  std::optional<Verdict> step(uint64_t clock) {
    switch (pc_) {
      case Pc::kLookup:  // bpf_map_lookup_elem
        if (!sh_.ready) {
          now_ = fine(clock);  // lv_new_source reads the clock before inserting
          pc_ = Pc::kInsert;
          return std::nullopt;
        }
        seen_ = *sh_.ready;  // READ_ONCE(st->ready_ns)
        tries_ = 0;
        if (fast_reject_) {
          // lv_clock_cached: an earlier reading of this CPU, refreshed every 16 packets.
          uint64_t cached = ++uses_ >= LV_CLOCK_REFRESH_PKTS ? fine(clock) : cached_;
          if (!lv_gcra_conforms(seen_, cached)) return finish(Verdict::kRate);
          now_ = uses_ == 0 ? cached : fine(clock);
        } else {
          now_ = fine(clock);
        }
        pc_ = Pc::kCas;
        return std::nullopt;
      case Pc::kInsert:  // bpf_map_update_elem(BPF_NOEXIST)
        if (!sh_.ready) {
          sh_.ready = lv_gcra_first(now_, &l_);
          return finish(Verdict::kPass);
        }
        seen_ = *sh_.ready;  // -EEXIST: take from the winner's state, same `now`
        tries_ = 0;
        pc_ = Pc::kCas;
        return std::nullopt;
      case Pc::kCas: {  // one iteration of lv_gcra_take
        if (!lv_gcra_conforms(seen_, now_)) return finish(Verdict::kRate);
        const uint64_t next = lv_gcra_after_pass(seen_, now_, &l_);
        if (!use_cas_ || *sh_.ready == seen_) {
          sh_.ready = next;
          return finish(Verdict::kPass);
        }
        seen_ = *sh_.ready;
        if (++tries_ == kCasTries) return finish(Verdict::kContended);
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  uint64_t decided_at() const { return now_; }

 private:
  enum class Pc { kLookup, kInsert, kCas };

  uint64_t fine(uint64_t clock) {
    cached_ = clock;
    uses_ = 0;
    return clock;
  }
  std::optional<Verdict> finish(Verdict v) {
    pc_ = Pc::kLookup;
    return v;
  }

  Shared& sh_;
  const lv_limit& l_;
  bool use_cas_, fast_reject_;
  Pc pc_ = Pc::kLookup;
  uint64_t seen_ = 0, now_ = 0;
  int tries_ = 0;
  uint64_t cached_ = 0, uses_ = LV_CLOCK_REFRESH_PKTS;
};

struct ModelRun {
  std::vector<uint64_t> pass_times;
  uint64_t packets = 0, contended = 0, start = 0, end = 0;
};

ModelRun run_model(uint64_t seed, const lv_limit& l, bool use_cas, bool fast_reject) {
  std::mt19937_64 rng(seed);
  Shared shared;
  std::array<Cpu, 2> cpus{Cpu(shared, l, use_cas, fast_reject), Cpu(shared, l, use_cas, fast_reject)};
  ModelRun run;
  uint64_t clock = 1'000'000'000'000 + rng() % LV_NSEC_PER_SEC;
  run.start = clock;
  // Small clock steps against T so that decisions of both CPUs often see the same
  // state and time; sometimes a long pause so the bucket refills.
  std::uniform_int_distribution<uint64_t> tick(0, l.cost / 8 + 1);
  for (int s = 0; s < 60'000; ++s) {
    if (rng() % 5 == 0) clock += tick(rng);
    if (rng() % 20'000 == 0) clock += l.cost * (rng() % 50);
    Cpu& cpu = cpus[rng() % 2];
    if (auto v = cpu.step(clock)) {
      ++run.packets;
      if (*v == Verdict::kPass) run.pass_times.push_back(cpu.decided_at());
      if (*v == Verdict::kContended) ++run.contended;
    }
  }
  run.end = clock;
  return run;
}

TEST(GcraConcurrentModel, CasNeverExceedsBurstPlusRateTimesT) {
  uint64_t contended = 0, passed = 0, packets = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const uint64_t burst = 1 + seed % 5;
    const uint64_t rate = std::array<uint64_t, 3>{1000, 100'000, 3}[seed % 3];
    const lv_limit l = make_limit(rate, burst);
    for (bool fast_reject : {false, true}) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " rate " << rate << " burst " << burst << " fast_reject "
                                      << fast_reject);
      const ModelRun run = run_model(seed, l, true, fast_reject);
      ASSERT_GT(run.pass_times.size(), burst);
      EXPECT_EQ(check_window_bound(run.pass_times, l), "");
      // The whole run is one window too: the bound in the brief's form.
      EXPECT_LE(run.pass_times.size(), burst + (run.end - run.start) / l.cost);
      contended += run.contended;
      passed += run.pass_times.size();
      packets += run.packets;
    }
  }
  // Four lost CASes in a row need four passes by the other CPU while this one retries:
  // possible in the model, but rare.
  std::cout << "model: " << packets << " packets, " << passed << " passed, " << contended << " contended\n";
  EXPECT_LT(contended * 100, passed) << contended << " contended of " << packets << " packets";
}

TEST(GcraConcurrentModel, CheckerCatchesAStoreInsteadOfCas) {
  // Same interleavings, but "ready = after_pass(seen)" without comparing: two CPUs that
  // read the same state both pass. The window check must notice in most runs.
  int broken = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const lv_limit l = make_limit(1000, 1 + seed % 5);
    if (!check_window_bound(run_model(seed, l, false, false).pass_times, l).empty()) ++broken;
  }
  std::cout << "store instead of CAS: bound broken in " << broken << " of 20 runs\n";
  EXPECT_GE(broken, 15);
}

// ---- two real threads ----------------------------------------------------------------

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * LV_NSEC_PER_SEC + static_cast<uint64_t>(ts.tv_nsec);
}

TEST(GcraConcurrentThreads, TwoThreadsOnOneWordStayWithinTheBound) {
  const lv_limit l = make_limit(100'000, 20);
  alignas(64) uint64_t word = monotonic_ns() - l.tau_ns - LV_NSEC_PER_SEC;  // a full bucket
  std::atomic<bool> go{false};
  constexpr uint64_t kRunNs = 60'000'000;
  std::array<std::vector<uint64_t>, 2> passes;
  std::array<uint64_t, 2> contended{};

  auto worker = [&](int idx) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(idx % std::max(1u, std::thread::hardware_concurrency()), &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // best effort
    while (!go.load()) {
    }
    std::atomic_ref<uint64_t> ready(word);
    const uint64_t stop = monotonic_ns() + kRunNs;
    for (;;) {
      uint64_t seen = ready.load(std::memory_order_relaxed);
      const uint64_t now = monotonic_ns();
      if (now >= stop) break;
      int tries = 0;
      while (lv_gcra_conforms(seen, now)) {
        if (ready.compare_exchange_strong(seen, lv_gcra_after_pass(seen, now, &l))) {
          passes[idx].push_back(now);
          break;
        }
        if (++tries == kCasTries) {
          ++contended[idx];
          break;
        }
      }
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  go = true;
  a.join();
  b.join();

  std::vector<uint64_t> all = passes[0];
  all.insert(all.end(), passes[1].begin(), passes[1].end());
  std::cout << "two threads: " << passes[0].size() << " + " << passes[1].size() << " passes, "
            << contended[0] + contended[1] << " contended\n";
  ASSERT_GT(all.size(), 20u);
  EXPECT_EQ(check_window_bound(all, l), "");
}

}  // namespace
}  // namespace levee::test
