// bouncer.hpp - levee run as a CrowdSec bouncer ([crowdsec]): a thread of its own pulls
// the Local API's decision stream every `poll` and writes the changes into the filter's
// CrowdSec maps (datapath/crowdsec_maps.hpp), never in the way of the datapath (which reads
// the maps), the metrics server or a reload (which leave them alone).
//
// The first pull, and the first after any error, asks for every decision in force
// (startup=true) and reconciles: what the filter holds and the Local API no longer does
// is removed. An error backs off, 1 s doubling to 30 s; meanwhile the filter keeps the
// decisions it has, each until its own expiry, which the datapath enforces even if this
// thread or the whole daemon is gone. Expired entries are removed here too. Every 5
// minutes a startup pull reconciles anyway: the incremental stream can miss a decision
// committed while a pull ran (a Local API race), never a full one.
//
// Every pull has a deadline ([crowdsec] timeout, lapi_client.hpp): a Local API that
// answers slowly, or not at all, fails the pull like one that is down. How the pulls go is
// in the metrics and, for `levee status`, in /run/levee/<iface>.crowdsec (state_file.hpp).
//
// A daemon adopting a running filter starts from what its maps hold, so a restart drops
// nothing in between. When the filter is replaced (attached again), its new maps are
// empty: resync() makes the thread reopen them and pull everything again.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "daemon/crowdsec_client.hpp"
#include "daemon/crowdsec_held.hpp"
#include "daemon/error_fold.hpp"
#include "daemon/health.hpp"
#include "datapath/crowdsec_maps.hpp"

namespace levee::daemon {

class Bouncer {
 public:
  // `key`: the bouncer's API key, read from spec.api_key_file by the caller.
  Bouncer(std::string iface, const CrowdsecSpec& spec, std::string key, Health& health);
  ~Bouncer();
  Bouncer(const Bouncer&) = delete;
  Bouncer& operator=(const Bouncer&) = delete;

  void start();
  // Whether it pulls as these settings and key would (SIGHUP: unchanged, it goes on).
  bool pulls_as(const CrowdsecSpec& spec, const std::string& key) const {
    return same_pull(spec_, spec) && key == key_;
  }
  // Ends the thread, a pull in progress included; the maps keep what they hold.
  void stop();
  // The filter's maps were replaced: reopen them and pull every decision again.
  void resync();

 private:
  void run();
  // One turn: a pull and its changes written; false after an error (said).
  bool turn();
  Status apply(const CsPlan& plan);
  // Expired entries out of the maps, whether the Local API answers or not.
  void expire();
  void publish(bool up);
  void error(const Error& e);
  // Until `d` passed, stop() or resync(); false when stopping.
  bool wait(std::chrono::nanoseconds d);

  const std::string iface_;
  const CrowdsecSpec spec_;
  const std::string key_;
  Health& health_;
  CrowdsecClient client_;
  std::optional<CrowdsecMaps> maps_;  // opened by the thread; reset by resync
  CsHeldSet held_;
  BouncerHealth stats_;
  bool startup_ = true;
  std::chrono::steady_clock::time_point next_full_{};  // the next periodic startup pull
  uint32_t present_ = 0;                               // the lv_cs_present bits last stored
  ErrorFold said_;                                     // the errors said (error_fold.hpp)
  ErrorFold said_full_;                                // "maps full", said once per window
  std::string last_error_what_;                        // the last without its hint, for levee status
  std::string state_;                                  // what the state file holds ("": none yet)
  bool stats_up_ = false;
  uint64_t since_unix_ns_ = 0;  // when the pulls last went from failing to working or back

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false, resync_ = false;
  std::thread thread_;
};

}  // namespace levee::daemon
