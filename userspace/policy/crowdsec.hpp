// crowdsec.hpp - levee as a CrowdSec bouncer: the [crowdsec] settings, the key file, and
// the Local API's decision stream (GET /v1/decisions/stream) parsed into what the
// filter holds. Pure: no sockets, no maps (the daemon's bouncer does those).
//
// The filter keys follow CrowdSec's own bouncers (crowdsec-firewall-bouncer and the
// others): origins, scenarios_containing, scenarios_not_containing and
// supported_decisions_types (default ["ban"]).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "levee_abi.h"
#include "policy/cidr.hpp"
#include "policy/crowdsec_publish.hpp"

namespace levee {

inline constexpr uint64_t kDefaultCsPollNs = 1'000'000'000;
// The whole of one request to the Local API, its reply included (`timeout`): a startup
// pull of 100k decisions takes about a second; a reply still coming after this is a
// stuck or hostile server, whatever it sends meanwhile.
inline constexpr uint64_t kDefaultCsTimeoutNs = 30'000'000'000;
inline constexpr uint64_t kMinCsTimeoutNs = 1'000'000'000;
inline constexpr uint64_t kMaxCsTimeoutNs = 600'000'000'000;
// The bouncer key file: a key is 32 characters or so; anything larger is not one.
inline constexpr size_t kMaxCsKeyBytes = 4096;
// A stream reply: a startup pull of 100k decisions is about 20 MB of JSON.
inline constexpr size_t kMaxCsBodyBytes = 64u << 20;

struct CrowdsecSpec {
  bool enabled = false;  // the file has [crowdsec]
  std::string host;      // from url = "http://host:port"
  uint16_t port = 8080;
  std::string api_key_file;
  uint64_t poll_ns = kDefaultCsPollNs;
  uint64_t timeout_ns = kDefaultCsTimeoutNs;          // every request, the bouncer's and the machine's
  std::vector<std::string> origins;                   // empty: every origin
  std::vector<std::string> scenarios_containing;      // empty: every scenario
  std::vector<std::string> scenarios_not_containing;  // none refused
  std::vector<std::string> types{"ban"};              // supported_decisions_types
  // levee as a CrowdSec machine (crowdsec_publish.hpp): its own bans pushed as alerts.
  bool publish = false;
  std::string machine_id;             // as `cscli machines add NAME` registered it
  std::string machine_password_file;  // its password, alone in the file, mode 600
  uint64_t publish_min_ban_ns = kDefaultCsPublishMinBanNs;
  size_t publish_queue = kDefaultCsPublishQueue;
  bool operator==(const CrowdsecSpec&) const = default;
};

// Whether two [crowdsec] tables pull decisions alike: the bouncer's settings (the key
// file's path aside: what matters is its content, which the daemon compares).
bool same_pull(const CrowdsecSpec& a, const CrowdsecSpec& b);
// Whether two [crowdsec] tables publish alike (the password file's path aside, likewise).
bool same_publish(const CrowdsecSpec& a, const CrowdsecSpec& b);

// "http://host:port" (a trailing "/" allowed): host and port; https and paths refused.
Result<std::pair<std::string, uint16_t>> parse_cs_url(std::string_view url);

// The bouncer's API key from its file: trimmed of surrounding blanks, refused when it is
// unreadable, empty, larger than kMaxCsKeyBytes, not one line of printable characters, or
// readable by others (mode o+r: chmod 600).
Result<std::string> read_cs_key(const std::string& path);

// The machine's password from its file, by the same rules as the key file.
Result<std::string> read_cs_password(const std::string& path);

// One decision of the stream.
struct CsDecision {
  uint64_t id = 0;
  Cidr net;                 // scope Ip: a /32 or /128; Range: the network
  int64_t duration_ns = 0;  // negative in "deleted"
  std::string origin, scenario, type;
};

// A decision as the filter's maps hold it: its network and its expiry (the program's
// clock) and id.
struct CsEntry {
  Cidr net;
  lv_cs_value value{};
};

struct CsStream {
  std::vector<CsDecision> added, deleted;
  uint64_t skipped = 0;  // entries not understood (another scope, a bad value): counted, ignored
};

// The reply of /v1/decisions/stream: {"new": [...] | null, "deleted": [...] | null}.
// A reply that is not such an object is an error; a bad entry is skipped and counted.
Result<CsStream> parse_cs_stream(std::string_view body);

// A Go duration ("3h59m59.64s", "-1.5s", "59m0.3s", "300ms"): ns, or nothing.
std::optional<int64_t> parse_go_duration(std::string_view s);

// Does the spec's filter take this decision (type, origin, scenario)?
bool cs_wanted(const CrowdsecSpec& spec, const CsDecision& d);

}  // namespace levee
