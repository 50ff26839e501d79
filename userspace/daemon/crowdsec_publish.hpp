// crowdsec_publish.hpp - levee as a CrowdSec machine (publish = true in [crowdsec]): the
// bans of levee's own policy pushed to the Local API as alerts, each with one decision,
// so that every bouncer of the fleet drops the source. Pure: what a ban to share is, the
// alert's JSON (POST /v1/alerts), the login reply (POST /v1/watchers/login), and the
// bounded queue the bans wait in while the Local API is away. The daemon's publisher
// (daemon/publisher.hpp) does the sockets and the thread.
//
// Only bans are shared: a source the filter drops for a CrowdSec decision is dropped
// before any limit (reason crowdsec), so it never starts a ban, and what came from the
// fleet never goes back to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace levee {

// The alert's scenario is "levee/<class>"; its decision's origin what CrowdSec gives the
// decisions of its own machines' alerts, so bouncers filtering on origins take them.
inline constexpr std::string_view kCsScenarioPrefix = "levee/";
inline constexpr std::string_view kCsMachineOrigin = "crowdsec";

// One ban of levee's own policy, to be shared.
struct CsBan {
  std::string value;     // the source: an address, or a network when its class keys one
  bool range = false;    // scope Range (a network) rather than Ip
  std::string scenario;  // levee/<class>
  uint64_t until_unix_ns = 0;
  uint64_t duration_ns = 0;  // the ban's whole length (what publish_min_ban is compared with)
  bool operator==(const CsBan&) const = default;
};

// The ban's remaining time at `now_unix_ns` as a Go duration in whole milliseconds
// ("119800ms": LAPI takes only Go units), rounded down so the fleet never bans longer
// than levee does.
std::string cs_go_duration_ms(uint64_t ns);

// The body of POST /v1/alerts for these bans at `now_unix_ns`: one alert per ban, each
// with one decision of its remaining time (LAPI's expiry is stop_at + duration, and
// stop_at is now). Bans with less than a second left are left out.
struct CsAlerts {
  std::string body;   // a JSON array
  size_t alerts = 0;  // how many it holds
};
CsAlerts cs_alerts(const std::vector<CsBan>& bans, uint64_t now_unix_ns);

// POST /v1/watchers/login's reply: {"code":200,"expire":"<RFC 3339>","token":"..."}.
struct CsLogin {
  std::string token;
  uint64_t expire_unix_ns = 0;
};
Result<CsLogin> parse_cs_login(std::string_view body);
// The login's body (the password is never logged).
std::string cs_login_json(const std::string& machine_id, const std::string& password);

// The bans waiting to be published, oldest first, at most `cap`: one more drops the
// oldest (the one closest to its end) and counts it. Each has a sequence number, so
// that a batch in flight is taken off by number: what a push dropped or expire()
// removed meanwhile is not mistaken for it. Not thread-safe: the publisher holds it
// under its lock.
class CsBanQueue {
 public:
  explicit CsBanQueue(size_t cap) : cap_(cap < 1 ? 1 : cap) {}
  void push(CsBan b);
  struct Batch {
    std::vector<CsBan> bans;
    uint64_t last = 0;  // the sequence number of the last
  };
  // Up to `n` from the front, copied: they stay queued until pop_through(last).
  Batch front(size_t n) const;
  // Removes every ban up to sequence number `last`: a batch the Local API accepted.
  void pop_through(uint64_t last);
  // Removes what ended by `now_unix_ns` (or has less than a second left): how many.
  size_t expire(uint64_t now_unix_ns);
  void set_cap(size_t cap);
  size_t size() const { return q_.size(); }
  bool empty() const { return q_.empty(); }
  uint64_t dropped() const { return dropped_; }

 private:
  struct Entry {
    uint64_t seq;
    CsBan ban;
  };
  size_t cap_;
  std::deque<Entry> q_;
  uint64_t next_seq_ = 1;
  uint64_t dropped_ = 0;
};

}  // namespace levee
