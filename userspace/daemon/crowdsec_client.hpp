// crowdsec_client.hpp - one pull of the CrowdSec Local API's decision stream:
// GET /v1/decisions/stream[?startup=true] with the bouncer's X-Api-Key, over plain HTTP
// (lapi_client.hpp: the request's deadline, the reply's cap of kMaxCsBodyBytes, 64 MiB,
// never half read, and what an error says).
#pragma once

#include <string>

#include "core/result.hpp"
#include "daemon/crowdsec_stream.hpp"
#include "daemon/lapi_client.hpp"
#include "policy/crowdsec.hpp"

namespace levee::daemon {

class CrowdsecClient {
 public:
  CrowdsecClient(const CrowdsecSpec& spec, std::string key);

  // The stream's reply body; `startup`: every decision in force (a first pull, or after
  // an error), else what changed since the last pull.
  Result<std::string> pull(bool startup);
  // Ends a pull in progress, and any after, from another thread (the daemon's stop).
  void cancel() { lapi_.cancel(); }
  bool cancelled() const { return lapi_.cancelled(); }
  // The last pull: how long it took, and whether its deadline ended it.
  double last_seconds() const { return lapi_.last_seconds(); }
  bool last_timed_out() const { return lapi_.last_timed_out(); }

 private:
  std::string key_;
  LapiClient lapi_;
};

}  // namespace levee::daemon
