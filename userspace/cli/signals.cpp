#include "cli/signals.hpp"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>

namespace levee::cli {
namespace {

volatile sig_atomic_t g_stop = 0;
struct sigaction g_old_int, g_old_term;

void on_signal(int) { g_stop = 1; }

}  // namespace

StopOnSignal::StopOnSignal() {
  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

StopOnSignal::~StopOnSignal() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

bool StopOnSignal::stopped() { return g_stop != 0; }

bool StopOnSignal::sleep_until(std::chrono::steady_clock::time_point deadline) {
  // In slices: a signal that lands between the check and the sleep is noticed within one.
  constexpr auto kSlice = std::chrono::milliseconds(100);
  while (!stopped()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::min<std::chrono::steady_clock::duration>(deadline - now, kSlice));
    timespec ts{static_cast<time_t>(ns.count() / 1'000'000'000), static_cast<long>(ns.count() % 1'000'000'000)};
    nanosleep(&ts, nullptr);  // EINTR: the loop looks at the flag
  }
  return !stopped();
}

}  // namespace levee::cli
