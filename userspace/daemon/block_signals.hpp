// block_signals.hpp - signals reach levee run's main loop only: threads started in the
// scope of a BlockDaemonSignals (the metrics server's, the CrowdSec bouncer's) inherit
// the mask and never take SIGHUP, SIGINT or SIGTERM, so a signal always interrupts the
// main thread's wait.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <initializer_list>

namespace levee::daemon {

class BlockDaemonSignals {
 public:
  BlockDaemonSignals() {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : {SIGHUP, SIGINT, SIGTERM}) sigaddset(&s, sig);
    pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~BlockDaemonSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  BlockDaemonSignals(const BlockDaemonSignals&) = delete;
  BlockDaemonSignals& operator=(const BlockDaemonSignals&) = delete;

 private:
  sigset_t old_;
};

}  // namespace levee::daemon
