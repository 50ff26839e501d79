#include "daemon/machine_client.hpp"

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/quote.hpp"
#include "core/version.hpp"

namespace levee::daemon {
namespace {

// A login or a batch of alerts is answered at once by a Local API nearby.
constexpr std::chrono::seconds kIdle{10};
// A login's reply is a few hundred bytes, an alerts' a list of ids.
constexpr size_t kMaxReplyBytes = size_t{1} << 20;
// LAPI's tokens last an hour: renewed in their last 5 minutes. A reply without a
// readable expiry is taken to last 30 minutes.
constexpr uint64_t kRenewBeforeNs = 5ull * 60 * 1'000'000'000;
constexpr uint64_t kAssumedLifeNs = 30ull * 60 * 1'000'000'000;
constexpr int kCreated = 201;
constexpr int kOk = 200;
constexpr int kUnauthorized = 401;
constexpr int kForbidden = 403;

const char* const kLoginHint =
    "check machine_id and machine_password_file against `cscli machines list` (`cscli machines add NAME --password "
    "...`), and that the machine is validated";

// LAPI refuses a machine's login unless its User-Agent is "name/version" (1.4.6: "bad
// user agent", answered as a wrong password).
std::string user_agent() { return std::string("levee/") + levee_version(); }

}  // namespace

MachineClient::MachineClient(const CrowdsecSpec& spec, std::string password)
    : machine_id_(spec.machine_id), password_(std::move(password)), lapi_(spec, kMaxReplyBytes, kIdle) {}

Status MachineClient::take_token(const std::string& what, int status, const std::string& body) {
  if (status == kUnauthorized || status == kForbidden)
    return Error{fmt::format("{}{}: the Local API refused machine {} ({})", lapi_.where(), what, machine_id_, status),
                 0, kLoginHint};
  if (status != kOk)
    return Error{fmt::format("{}{}: HTTP status {}", lapi_.where(), what, status), 0, "see the Local API's log"};
  auto l = parse_cs_login(body);
  if (!l) return Error{fmt::format("{}{}: {}", lapi_.where(), what, l.error().what), 0, l.error().hint};
  token_ = std::move(l->token);
  const uint64_t now = unix_now_ns();
  token_expire_unix_ns_ = l->expire_unix_ns > now ? l->expire_unix_ns : now + kAssumedLifeNs;
  return {};
}

Status MachineClient::login() {
  token_.clear();
  const std::string path = "/v1/watchers/login";
  LV_TRY_ASSIGN(const LapiReply r,
                lapi_.post(path, {{"User-Agent", user_agent()}}, cs_login_json(machine_id_, password_)));
  ++logins_;
  return take_token(path, r.status, r.body);
}

Status MachineClient::refresh() {
  const std::string path = "/v1/refresh_token";
  LV_TRY_ASSIGN(const LapiReply r,
                lapi_.get(path, {{"Authorization", "Bearer " + token_}, {"User-Agent", user_agent()}}));
  return take_token(path, r.status, r.body);
}

// A token valid for a while yet: renewed shortly before its expiry, else a new login.
Status MachineClient::authorize() {
  if (!token_.empty() && unix_now_ns() + kRenewBeforeNs < token_expire_unix_ns_) return {};
  if (!token_.empty() && refresh()) return {};
  return login();
}

Status MachineClient::post_alerts(const std::string& body) {
  const std::string path = "/v1/alerts";
  for (int attempt = 0;; ++attempt) {
    LV_TRY(authorize());
    LV_TRY_ASSIGN(const LapiReply r,
                  lapi_.post(path, {{"Authorization", "Bearer " + token_}, {"User-Agent", user_agent()}}, body));
    if (r.status == kCreated) return {};
    // A token the Local API no longer takes (it restarted with a new secret, or the
    // machine was re-registered): log in again, once.
    if (r.status == kUnauthorized && attempt == 0) {
      token_.clear();
      continue;
    }
    return Error{fmt::format("{}{}: HTTP status {}: {}", lapi_.where(), path, r.status, quote_value(r.body)), 0,
                 r.status == kUnauthorized ? kLoginHint : "see the Local API's log"};
  }
}

}  // namespace levee::daemon
