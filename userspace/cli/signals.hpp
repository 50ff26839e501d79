// signals.hpp - commands that run until interrupted (top --watch, events): SIGINT and
// SIGTERM end them cleanly, with their output complete, instead of killing them.
#pragma once

#include <chrono>

namespace levee::cli {

class StopOnSignal {
 public:
  // Installs handlers for SIGINT and SIGTERM (no SA_RESTART: a blocking poll returns
  // EINTR); the destructor restores the previous ones.
  StopOnSignal();
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  static bool stopped();
  // Sleeps until `deadline` or a signal, whichever comes first. Returns !stopped().
  static bool sleep_until(std::chrono::steady_clock::time_point deadline);
};

}  // namespace levee::cli
