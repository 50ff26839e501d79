// crowdsec.hpp - the [crowdsec] settings: levee as a CrowdSec bouncer and machine, the
// Local API's address, the key and password files. Settings only: the wire formats, the
// held set and the publish queue are the daemon's (daemon/crowdsec_stream.hpp,
// crowdsec_held.hpp, crowdsec_publish.hpp), which speaks to the Local API.
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
// levee as a machine: bans shorter than this are not worth a fleet-wide decision by
// default (a source a minute's ban does not stop comes back and is banned longer).
inline constexpr uint64_t kDefaultCsPublishMinBanNs = 60ull * 1'000'000'000;
// While the Local API is away: 10,000 bans (about 2 MB) wait; more drop the oldest.
inline constexpr size_t kDefaultCsPublishQueue = 10'000;
inline constexpr size_t kMaxCsPublishQueue = 1'000'000;

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

}  // namespace levee
