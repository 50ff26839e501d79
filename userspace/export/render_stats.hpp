// render_stats.hpp - `levee stats`: an interface's counters by verdict and reason, by
// class, and monitor mode's would-be drops, as text or JSON; and the one line of rates
// `levee stats --watch` prints per interval.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "datapath/maps.hpp"

namespace levee {

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
nlohmann::json stats_json(const std::string& iface, const Counters& c, const ClassNames& class_names = {});
std::string stats_text(const std::string& iface, const Counters& c, const ClassNames& class_names = {},
                       bool monitoring = false);

// One line of rates between two samples `seconds` apart.
std::string rates_line(const Counters& a, const Counters& b, double seconds);

}  // namespace levee
