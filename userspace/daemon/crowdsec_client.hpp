// crowdsec_client.hpp - one pull of the CrowdSec Local API's decision stream:
// GET /v1/decisions/stream[?startup=true] with the bouncer's X-Api-Key, over plain HTTP
// (cpp-httplib). The reply is capped at kMaxCsBodyBytes (64 MiB): a larger one is an
// error, never half read.
#pragma once

#include <ctime>
#include <memory>
#include <string>

#include "core/result.hpp"
#include "policy/crowdsec.hpp"

namespace httplib {
class Client;
}

namespace levee::daemon {

// A client of the Local API at the spec's url, for the bouncer and the machine alike:
// connected within 2 s (a LAPI nearby answers at once), each read and write within
// `io_seconds` (longer means it is stuck: give up and back off), kept alive.
std::unique_ptr<httplib::Client> lapi_client(const CrowdsecSpec& spec, time_t io_seconds);
// "http://host:port", for messages.
std::string lapi_where(const CrowdsecSpec& spec);
inline constexpr const char* kLapiDownHint =
    "is the CrowdSec Local API running there? (crowdsec, or systemctl status crowdsec)";

class CrowdsecClient {
 public:
  CrowdsecClient(const CrowdsecSpec& spec, std::string key);
  ~CrowdsecClient();
  CrowdsecClient(const CrowdsecClient&) = delete;
  CrowdsecClient& operator=(const CrowdsecClient&) = delete;

  // The stream's reply body; `startup`: every decision in force (a first pull, or after
  // an error), else what changed since the last pull.
  Result<std::string> pull(bool startup);
  // Ends a pull in progress from another thread (the daemon's stop).
  void cancel();

 private:
  std::string where_;  // "http://host:port", for errors
  std::string key_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace levee::daemon
