#include "core/signals.hpp"

#include <signal.h>
#include <time.h>

#include <algorithm>

namespace levee {
namespace {

volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_hup = 0;
struct sigaction g_old_int, g_old_term, g_old_hup, g_old_pipe;

void on_stop(int) { g_stop = 1; }
void on_hup(int) { g_hup = 1; }

void install(int sig, void (*handler)(int), struct sigaction* old) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, old);
}

}  // namespace

Signals::Signals(Hangup hangup) : hangup_(hangup == Hangup::Catch) {
  g_stop = 0;
  g_hup = 0;
  install(SIGINT, on_stop, &g_old_int);
  install(SIGTERM, on_stop, &g_old_term);
  if (hangup_) install(SIGHUP, on_hup, &g_old_hup);
  if (hangup_) install(SIGPIPE, SIG_IGN, &g_old_pipe);
}

Signals::~Signals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  if (hangup_) sigaction(SIGHUP, &g_old_hup, nullptr);
  if (hangup_) sigaction(SIGPIPE, &g_old_pipe, nullptr);
}

bool Signals::stopped() { return g_stop != 0; }

bool Signals::take_hangup() {
  if (!g_hup) return false;
  g_hup = 0;
  return true;
}

bool Signals::sleep_until(std::chrono::steady_clock::time_point deadline) {
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

}  // namespace levee
