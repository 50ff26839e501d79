// units.hpp - numbers as operators type them: "500", "10k", "1.5M", "2G".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace levee {

// A non-negative integer with an optional SI suffix (k, M, G: powers of 1000).
// Fractions are allowed with a suffix if the result is whole ("1.5k" = 1500).
// Returns nullopt for anything else, including overflow of 2^63.
std::optional<uint64_t> parse_count(std::string_view s);

// 1500 -> "1.5k", 2000000 -> "2M", 123 -> "123": the inverse for display.
std::string format_count(uint64_t v);

// Measured rates for display, three significant digits: 950 -> "950", 7311069 -> "7.31M".
std::string format_si(double v);

// Durations for display: 0 -> "0s", 1500000 ns -> "1.5ms".
std::string format_ns(uint64_t ns);

// The longest duration levee takes anywhere (list expiries, bans): 100 years.
inline constexpr uint64_t kMaxDurationNs = 36500ull * 86400 * 1'000'000'000;

// A duration as operators type it: groups of digits and a unit, "500ms", "90s", "30m",
// "2h", "7d", "1w", "1h30m". Units ms, s, m, h, d, w. In ns; nullopt if malformed (no
// unit, an unknown unit, a fraction, blanks) or over kMaxDurationNs. Zero is a duration
// ("0s"). The one reader of durations: the command line and the config file both use it.
std::optional<uint64_t> parse_duration_ns(std::string_view s);

// The inverse for display, in the units an operator would write: "500ms", "2s", "1h",
// "1h30m", "1d12h" (weeks as days). Exact: what parse_duration_ns reads back is the same duration.
std::string format_duration(uint64_t ns);

}  // namespace levee
