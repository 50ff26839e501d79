#include "export/render_units.hpp"

#include <fmt/format.h>

namespace levee {

std::string group_digits(uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_span(uint64_t s) {
  struct Unit {
    uint64_t secs;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  if (s == 0) return "0s";
  // The two largest units: "9d 3h", "2h 5m", "42s".
  for (size_t i = 0; i < std::size(kUnits); ++i) {
    if (s < kUnits[i].secs) continue;
    std::string out = fmt::format("{}{}", s / kUnits[i].secs, kUnits[i].name);
    if (i + 1 < std::size(kUnits)) {
      const uint64_t rest = s % kUnits[i].secs / kUnits[i + 1].secs;
      if (rest) out += fmt::format(" {}{}", rest, kUnits[i + 1].name);
    }
    return out;
  }
  return "0s";
}

std::string format_expiry(uint64_t expires, uint64_t now) {
  if (expires > now) return "in " + format_span((expires - now + LV_NSEC_PER_SEC - 1) / LV_NSEC_PER_SEC);
  return "expired " + format_span((now - expires) / LV_NSEC_PER_SEC) + " ago";
}

std::string format_remaining(uint64_t ns) {
  if (ns < 60 * LV_NSEC_PER_SEC) return fmt::format("{:.1f} s", static_cast<double>(ns) / LV_NSEC_PER_SEC);
  return format_span((ns + LV_NSEC_PER_SEC - 1) / LV_NSEC_PER_SEC);
}

nlohmann::json counts_json(uint64_t passed_packets, uint64_t passed_bytes, uint64_t dropped_packets,
                           uint64_t dropped_bytes) {
  return {{"passed_packets", passed_packets},
          {"passed_bytes", passed_bytes},
          {"dropped_packets", dropped_packets},
          {"dropped_bytes", dropped_bytes}};
}

nlohmann::json counts_json(const lv_state& s) {
  return counts_json(LV_COUNT_PACKETS(s.passed), LV_COUNT_BYTES(s.passed), LV_COUNT_PACKETS(s.dropped),
                     LV_COUNT_BYTES(s.dropped));
}

std::string per_source_counters_note() {
  return fmt::format("  (per-source counters are 32-bit and wrap; up to {} drops per CPU are counted late)\n",
                     LV_HOT_MAX_HITS);
}

}  // namespace levee
