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

}  // namespace levee
