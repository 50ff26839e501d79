// format.hpp - text and JSON renderings of counters, status, lists and `levee show`.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bpf/inspect.hpp"
#include "bpf/lists.hpp"
#include "bpf/maps.hpp"
#include "policy/policy.hpp"

namespace levee {

// 1234567 -> "1,234,567"
std::string group_digits(uint64_t v);

// {"interface", "rx_packets", "rx_bytes", "passed_packets", "passed_bytes",
//  "dropped_packets", "dropped_bytes", "passed": {reason: packets},
//  "dropped": {reason: packets}, "bytes": {"passed": {...}, "dropped": {...}}}
// With the active policy's class names: a "classes" object {name: {passed_packets,
// passed_bytes, dropped_packets, dropped_bytes}}, and rows per class in the text.
// Classes as (name, id) in first-match order; counters are kept by id.
// "would_drop" and "would_drop_bytes": monitor mode's would-be drops by reason, every
// reason monitor mode can count present (zeros too): the limiter's, and deny. The text has a "would drop (monitor
// mode)" section when any is counted or `monitoring` (some class monitors now).
using ClassNames = std::vector<std::pair<std::string, unsigned>>;
nlohmann::json stats_json(const std::string& iface, const Counters& c, const ClassNames& classes = {});
std::string stats_text(const std::string& iface, const Counters& c, const ClassNames& classes = {},
                       bool monitoring = false);

// "500 pps, burst 100; 1M B/s, burst 100k; per /32 (IPv4), /64 (IPv6)", then the
// class's other limits and its mode (describe_extras).
std::string describe_limits(const ClassSpec& c);
// "new sources 100/s, burst 10; per network /24, /48: 10k pps, burst 1k; class total
// 50k pps, burst 5k; ban 2s, doubling up to 1h, forgotten after 1h; monitor mode", or
// "" for a class with none of them.
std::string describe_extras(const ClassSpec& c);

// The interface's mode as status shows it: "enforce", "monitor", or "mixed: 2 classes
// monitor" (JSON: "enforce", "monitor", "mixed").
std::string monitor_mode(const IfaceStatus& s, bool json = false);

// A span left for display: "1.2 s" under a minute, else "10m", "1h 5m".
std::string format_remaining(uint64_t ns);

// One line of rates between two samples `seconds` apart.
std::string rates_line(const Counters& before, const Counters& after, double seconds);

nlohmann::json status_json(const std::vector<IfaceStatus>& all);
std::string status_text(const std::vector<IfaceStatus>& all);

// "udp port 53", "tcp syn ports 80,443,8000-8999", "any" (the default class).
std::string describe_match(const Match& m);

// What attach and reload print under their first line: one line per class (match and
// limits), per override, and (with_lists) the list entries by kind.
std::string policy_text(const Policy& p, bool with_lists = true);

// Spans for expiries and bans: "2h 5m" (times: format_time() of core/clock.hpp).
std::string format_span(uint64_t seconds);
// "in 2h 5m", or "expired 3m ago" (such an entry stays in the trie, matching nothing,
// until the next change of the lists).
std::string format_expiry(uint64_t expires_unix_ns, uint64_t now_unix_ns);

// `levee allow|deny|override list`: the rows of one kind, as given (callers sort).
// JSON: {"interface", "kind", "entries": [{"cidr", "family", "override", "expires",
//        "expires_unix", "expires_in", "origin"}]} (see README).
std::string list_text(const std::string& iface, lv_list_kind kind, const std::vector<ListRow>& rows,
                      uint64_t now_unix_ns);
nlohmann::json list_json(const std::string& iface, lv_list_kind kind, const std::vector<ListRow>& rows,
                         uint64_t now_unix_ns);
nlohmann::json list_row_json(const ListRow& r, uint64_t now_unix_ns);

// `levee show`: for each class the address has state in, what the limiter would do
// now, computed with bpf/limiter.h from the state and the limits that apply.
struct ShowLimiter {
  std::optional<uint64_t> tokens;       // packets it could send at once (packet limit only)
  std::optional<uint64_t> byte_tokens;  // bytes likewise (byte limit only)
  uint64_t wait_ns = 0;                 // until its next packet would pass; 0: now
};
ShowLimiter show_limiter(const ShowClass& c);
// Its network's state as the limiter sees it (the class's network limits), if known.
std::optional<ShowLimiter> show_network_limiter(const ShowClass& c);
// The ban that applies to the address in a class: the class's record or the
// every-class one, whichever bans now (the one ending later), else the class's, else
// the every-class one; nullptr if neither exists.
const lv_ban* show_ban(const ShowClass& c);
// The class's key as the datapath builds it: the address masked to the class prefix.
std::string show_source(const ShowResult& r, const ShowClass& c);

// JSON field names are a contract (README, "levee show").
nlohmann::json show_json(const std::string& iface, const ShowResult& r, uint64_t now_unix_ns);
std::string show_text(const std::string& iface, const ShowResult& r, uint64_t now_unix_ns);

}  // namespace levee
