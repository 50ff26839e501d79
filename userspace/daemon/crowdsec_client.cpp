#include "daemon/crowdsec_client.hpp"

#include <fmt/format.h>
#include <httplib.h>

namespace levee::daemon {
namespace {

constexpr time_t kConnectSeconds = 2;
// A startup pull of 100k decisions takes about a second to serialise.
constexpr time_t kReadSeconds = 20;

}  // namespace

std::unique_ptr<httplib::Client> lapi_client(const CrowdsecSpec& spec, time_t io_seconds) {
  auto c = std::make_unique<httplib::Client>(spec.host, spec.port);
  c->set_connection_timeout(kConnectSeconds, 0);
  c->set_read_timeout(io_seconds, 0);
  c->set_write_timeout(io_seconds, 0);
  c->set_keep_alive(true);
  return c;
}

std::string lapi_where(const CrowdsecSpec& spec) { return fmt::format("http://{}:{}", spec.host, spec.port); }

CrowdsecClient::CrowdsecClient(const CrowdsecSpec& spec, std::string key)
    : where_(lapi_where(spec)), key_(std::move(key)), client_(lapi_client(spec, kReadSeconds)) {}

CrowdsecClient::~CrowdsecClient() = default;

// cpp-httplib's stop() is meant for this: it shuts the socket of a request in progress.
void CrowdsecClient::cancel() { client_->stop(); }

Result<std::string> CrowdsecClient::pull(bool startup) {
  const std::string path = startup ? "/v1/decisions/stream?startup=true" : "/v1/decisions/stream";
  std::string body;
  bool too_large = false;
  const httplib::Headers headers{{"X-Api-Key", key_}, {"User-Agent", "levee-bouncer"}};
  auto res = client_->Get(
      path, headers, [](const httplib::Response&) { return true; },
      [&](const char* data, size_t len) {
        if (body.size() + len > kMaxCsBodyBytes) return too_large = true, false;
        body.append(data, len);
        return true;
      });
  if (too_large)
    return Error{fmt::format("{}{}: the reply is larger than {} MiB", where_, path, kMaxCsBodyBytes >> 20), 0,
                 "is the url that of a CrowdSec Local API?"};
  if (!res) return Error{fmt::format("{}{}: {}", where_, path, httplib::to_string(res.error())), 0, kLapiDownHint};
  if (res->status == 403)
    return Error{fmt::format("{}{}: the Local API refused the bouncer key (403)", where_, path), 0,
                 "check api_key_file against `cscli bouncers list`; add one with `cscli bouncers add levee`"};
  if (res->status != 200)
    return Error{fmt::format("{}{}: HTTP status {}", where_, path, res->status), 0, "see the Local API's log"};
  return body;
}

}  // namespace levee::daemon
