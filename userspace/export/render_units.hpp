// render_units.hpp - numbers, spans and counters as every rendering writes them: digit
// groups, "2h 5m", "in 2h 5m" and "expired 3m ago", a source's four counters in JSON,
// and the note under every table of per-source counters.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "levee_abi.h"

namespace levee {

// 1234567 -> "1,234,567"
std::string group_digits(uint64_t v);

// Spans for expiries and bans: "2h 5m" (times: format_time() of core/clock.hpp).
std::string format_span(uint64_t seconds);
// "in 2h 5m", or "expired 3m ago" (such an entry stays in the trie, matching nothing,
// until the next change of the lists).
std::string format_expiry(uint64_t expires_unix_ns, uint64_t now_unix_ns);
// A span left for display: "1.2 s" under a minute, else "10m", "1h 5m".
std::string format_remaining(uint64_t ns);

// {"passed_packets", "passed_bytes", "dropped_packets", "dropped_bytes"}: of a class, or
// of a source's or network's state as the datapath packs it (32 bits each, wrapping).
nlohmann::json counts_json(uint64_t passed_packets, uint64_t passed_bytes, uint64_t dropped_packets,
                           uint64_t dropped_bytes);
nlohmann::json counts_json(const lv_state& s);

// A value, or null.
template <typename T>
nlohmann::json json_or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// The last line under per-source counters (show, top): what they do not count exactly.
std::string per_source_counters_note();

}  // namespace levee
