// signals.hpp - commands that run until interrupted (levee run, top --watch, events):
// SIGINT and SIGTERM end them cleanly, with their output complete, instead of killing
// them; levee run also takes SIGHUP (reload).
#pragma once

#include <chrono>

namespace levee {

class Signals {
 public:
  enum class Hangup { Default, Catch };

  // Installs handlers for SIGINT and SIGTERM, and for SIGHUP with Hangup::Catch (no
  // SA_RESTART: a blocking poll returns EINTR); the destructor restores the previous
  // ones. One instance at a time. Hangup::Catch (levee run) also ignores SIGPIPE: a
  // reader of its events or of its log that goes away costs those lines (EPIPE, counted),
  // never the daemon.
  explicit Signals(Hangup hangup = Hangup::Default);
  ~Signals();
  Signals(const Signals&) = delete;
  Signals& operator=(const Signals&) = delete;

  static bool stopped();
  // Whether a SIGHUP came since the last call (each is taken once).
  static bool take_hangup();
  // Sleeps until `deadline` or a signal, whichever comes first. Returns !stopped().
  static bool sleep_until(std::chrono::steady_clock::time_point deadline);

 private:
  bool hangup_;
};

}  // namespace levee
