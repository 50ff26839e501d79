// format.hpp - text and JSON renderings of counters and status.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bpf/loader.hpp"
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
nlohmann::json stats_json(const std::string& iface, const Counters& c,
                          const std::vector<std::string>& class_names = {});
std::string stats_text(const std::string& iface, const Counters& c,
                       const std::vector<std::string>& class_names = {});

// "500 pps, burst 100; 1M B/s, burst 100k; per /32 (IPv4), /64 (IPv6)"
std::string describe_limits(const ClassSpec& c);

// One line of rates between two samples `seconds` apart.
std::string rates_line(const Counters& before, const Counters& after, double seconds);

nlohmann::json status_json(const std::vector<IfaceStatus>& all);
std::string status_text(const std::vector<IfaceStatus>& all);

}  // namespace levee
