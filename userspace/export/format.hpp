// format.hpp - text and JSON renderings of counters and status.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bpf/loader.hpp"
#include "bpf/maps.hpp"

namespace levee {

// 1234567 -> "1,234,567"
std::string group_digits(uint64_t v);

// {"interface", "rx_packets", "rx_bytes", "passed_packets", "passed_bytes",
//  "dropped_packets", "dropped_bytes", "passed": {reason: packets},
//  "dropped": {reason: packets}, "bytes": {"passed": {...}, "dropped": {...}}}
nlohmann::json stats_json(const std::string& iface, const Counters& c);
std::string stats_text(const std::string& iface, const Counters& c);

// One line of rates between two samples `seconds` apart.
std::string rates_line(const Counters& before, const Counters& after, double seconds);

nlohmann::json status_json(const std::vector<IfaceStatus>& all);
std::string status_text(const std::vector<IfaceStatus>& all);

}  // namespace levee
