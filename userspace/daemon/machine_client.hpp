// machine_client.hpp - levee as a CrowdSec machine, over HTTP (lapi_client.hpp: each
// request within [crowdsec] timeout, each reply at most 1 MiB): logs in
// (POST /v1/watchers/login: a JWT), renews the token before it expires
// (GET /v1/refresh_token) and logs in again after a 401, and pushes alerts
// (POST /v1/alerts with the bearer token). The password never appears in messages.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.hpp"
#include "daemon/crowdsec_publish.hpp"
#include "daemon/lapi_client.hpp"
#include "policy/crowdsec.hpp"

namespace levee::daemon {

class MachineClient {
 public:
  MachineClient(const CrowdsecSpec& spec, std::string password);
  ~MachineClient() = default;
  MachineClient(const MachineClient&) = delete;
  MachineClient& operator=(const MachineClient&) = delete;

  // The alerts (a JSON array, policy/crowdsec_publish.hpp) accepted by the Local API
  // (201), logging in first when needed.
  Status post_alerts(const std::string& body);
  // Logged in, with a token valid for a while yet (a login at the start says at once
  // whether the credentials work).
  Status authorize();
  // Ends a request in progress from another thread (the daemon's stop).
  void cancel() { lapi_.cancel(); }
  uint64_t logins() const { return logins_; }

 private:
  Status login();
  Status refresh();
  Status take_token(const std::string& what, int status, const std::string& body);

  std::string machine_id_, password_;
  std::string token_;
  uint64_t token_expire_unix_ns_ = 0;
  uint64_t logins_ = 0;
  LapiClient lapi_;
};

}  // namespace levee::daemon
