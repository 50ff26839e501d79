// clock.hpp - the controller's clocks, and times as operators read and write them.
//
// The datapath keeps time on CLOCK_MONOTONIC; operators and files speak wall-clock time
// (RFC 3339, UTC). One Clocks reading converts between the two.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace levee {

// One reading of both clocks, and the kernel's tick.
struct Clocks {
  uint64_t tick_ns = 0;      // clock_tick_ns(): how stale the datapath's cached clock can be
  uint64_t now_unix_ns = 0;  // CLOCK_REALTIME
  uint64_t now_mono_ns = 0;  // CLOCK_MONOTONIC, the datapath's clock

  // Both clocks as close together as two reads can be: the monotonic one twice, around
  // the wall clock, and the middle taken.
  static Clocks read();

  // Conversions at this reading; unsigned arithmetic wraps right both ways.
  uint64_t to_unix(uint64_t mono_ns) const { return now_unix_ns + (mono_ns - now_mono_ns); }
  uint64_t to_mono(uint64_t unix_ns) const { return now_mono_ns + (unix_ns - now_unix_ns); }
};

// CLOCK_REALTIME and CLOCK_MONOTONIC now, in ns.
uint64_t unix_now_ns();
uint64_t mono_now_ns();

// The kernel's timer tick (CLOCK_MONOTONIC_COARSE resolution): bounds how stale the
// datapath's cached clock can be.
uint64_t clock_tick_ns();

// Seconds since the epoch of a civil time with a UTC offset (negative before 1970). The
// date is taken as given: the caller checks that it exists.
int64_t unix_seconds(int64_t year, unsigned month, unsigned day, unsigned hour, unsigned minute, unsigned second,
                     int64_t offset_minutes);

// RFC 3339 as operators type it: "2026-12-01T00:00:00Z", "2026-12-01T00:00:00.5+02:00".
// ns since the epoch (a time before 1970 reads as the epoch, one after 2554, past what
// the nanoseconds hold, as UINT64_MAX); nullopt if malformed or not a real date.
std::optional<uint64_t> parse_rfc3339(std::string_view s);

// RFC 3339 in UTC: "2026-12-01T00:00:00Z", or with milliseconds "2026-12-01T00:00:00.123Z".
enum class TimeDigits { Seconds, Millis };
std::string format_time(uint64_t unix_ns, TimeDigits digits = TimeDigits::Seconds);

// When something given an expiry stops: a duration from now ("90s", "2h", "1w", as
// parse_duration_ns reads them) or an RFC 3339 time, at most kMaxDurationNs away. Unix ns.
// The error says what is wrong with `text` without naming where it came from (the caller
// adds "--expires" or the file's line).
Result<uint64_t> parse_expiry(std::string_view text, uint64_t now_unix_ns);

}  // namespace levee
