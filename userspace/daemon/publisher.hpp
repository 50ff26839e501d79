// publisher.hpp - levee run as a CrowdSec machine ([crowdsec] publish = true): the bans
// levee's own policy imposes, as the datapath reports them (LV_EV_BANNED), pushed to the
// Local API as alerts with one decision each (policy/crowdsec_publish.hpp), so that the
// fleet's bouncers drop the source too.
//
// offer() is called by the daemon's loop for every event it reads, and never waits on
// the network: it takes a lock for a push onto a bounded queue (publish_queue bans; one
// more drops the oldest, counted) and wakes a thread of its own, which logs in, sends
// what is queued in batches and takes a batch off the queue only once the Local API
// accepted it (201). An error keeps the queue and backs off, 1 s doubling to 10 s; bans
// that end while they wait are dropped, counted apart. So a ban imposed while the Local
// API is away is published once it is back, and only once. Known gap: a request the
// Local API stored but whose reply was lost (the connection cut after the commit) is
// sent again.
//
// What is not levee's own ban is never offered: a source dropped for a CrowdSec decision
// (reason crowdsec) is dropped before any limit and never banned, so what came from the
// fleet never goes back to it; a class in monitor mode bans nothing (its "bans" only
// count) and is not published either.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "daemon/crowdsec_publish.hpp"
#include "daemon/error_fold.hpp"
#include "daemon/health.hpp"
#include "daemon/machine_client.hpp"
#include "datapath/events.hpp"
#include "policy/crowdsec.hpp"

namespace levee::daemon {

// A datapath event as a ban to share: a ban of levee's own, enforced, of at least
// `min_ban_ns`; nothing otherwise.
std::optional<CsBan> ban_to_share(const EventRecord& r, uint64_t min_ban_ns);

class Publisher {
 public:
  // `password`: the machine's, read from spec.machine_password_file by the caller.
  Publisher(std::string iface, const CrowdsecSpec& spec, std::string password, Health& health);
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  void start();
  // Ends the thread, a request in progress included; what is queued stays queued.
  void stop();
  // SIGHUP: the file's settings and password, the queue kept; unchanged ones change
  // nothing (a request in progress goes on, the token is kept).
  void reconfigure(const CrowdsecSpec& spec, std::string password);
  // An event of the datapath: queued if it is a ban to share. Never blocks on the network.
  void offer(const EventRecord& r);

 private:
  void run();
  // One batch sent; false after an error (said).
  bool turn();
  // Until `d` passed, stop() or (`on_offer`) a ban queued; false when stopping.
  bool wait(std::chrono::nanoseconds d, bool on_offer);
  void publish_health();  // under mu_

  const std::string iface_;
  Health& health_;

  std::mutex mu_;  // everything below
  CrowdsecSpec spec_;
  std::string password_;
  CsBanQueue queue_;
  PublisherHealth stats_;
  std::optional<PublisherHealth> written_;  // what the state file holds
  std::unique_ptr<MachineClient> client_;
  ErrorFold said_;  // the errors said (error_fold.hpp)
  std::condition_variable cv_;
  bool stopping_ = false, woken_ = false;
  std::thread thread_;
};

}  // namespace levee::daemon
