#include "daemon/crowdsec_client.hpp"

#include <fmt/format.h>

namespace levee::daemon {
namespace {

// Between two parts of a reply: a startup pull of 100k decisions takes about a second
// to serialise.
constexpr std::chrono::seconds kIdle{20};

}  // namespace

CrowdsecClient::CrowdsecClient(const CrowdsecSpec& spec, std::string key)
    : key_(std::move(key)), lapi_(spec, kMaxCsBodyBytes, kIdle) {}

Result<std::string> CrowdsecClient::pull(bool startup) {
  const std::string path = startup ? "/v1/decisions/stream?startup=true" : "/v1/decisions/stream";
  LV_TRY_ASSIGN(LapiReply r, lapi_.get(path, {{"X-Api-Key", key_}, {"User-Agent", "levee-bouncer"}}));
  const std::string at = lapi_.where() + path;
  if (r.status == 403)
    return Error{fmt::format("{}: the Local API refused the bouncer key (403)", at), 0,
                 "check api_key_file against `cscli bouncers list`; add one with `cscli bouncers add levee`"};
  if (r.status != 200) return Error{fmt::format("{}: HTTP status {}", at, r.status), 0, "see the Local API's log"};
  return std::move(r.body);
}

}  // namespace levee::daemon
