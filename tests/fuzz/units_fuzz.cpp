// units_fuzz.cpp - counts, durations and times as the command line and the config file
// read them (core/units, core/clock): parse_count, parse_duration_ns, parse_rfc3339 and
// parse_expiry.
//
// Properties: each parser agrees with a reference written here from its documented
// grammar in 128-bit arithmetic (so that overflow cannot hide in both); what it accepts
// formats and reads back as the same value; an expiry lies after now and at most 100
// years away.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.hpp"
#include "core/units.hpp"
#include "fuzz.hpp"

namespace levee {
namespace {

using fuzz::escaped;
using u128 = unsigned __int128;

constexpr u128 kSaturated = ~u128{0} >> 1;

bool digit(char c) { return c >= '0' && c <= '9'; }

// Decimal digits into a number that stops growing past 2^126: big enough to tell any
// uint64_t apart from what overflows it.
u128 accumulate(u128 n, char c) {
  if (n > (kSaturated - 9) / 10) return kSaturated;
  return n * 10 + static_cast<u128>(c - '0');
}

// parse_count's grammar: DIGITS[.DIGITS]SUFFIX or DIGITS, SUFFIX one of k M G (either
// case, powers of 1000); at most as many decimals as the suffix has zeros; the value
// whole and at most 2^63.
std::optional<uint64_t> count_reference(std::string_view s) {
  u128 mult = 1;
  unsigned max_decimals = 0;
  if (!s.empty()) {
    switch (s.back()) {
      case 'k':
      case 'K':
        mult = 1000, max_decimals = 3;
        break;
      case 'm':
      case 'M':
        mult = 1000000, max_decimals = 6;
        break;
      case 'g':
      case 'G':
        mult = 1000000000, max_decimals = 9;
        break;
      default:
        break;
    }
  }
  if (mult != 1) s.remove_suffix(1);
  const size_t dot = s.find('.');
  const std::string_view whole = s.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? std::string_view{} : s.substr(dot + 1);
  if (whole.empty() && frac.empty()) return std::nullopt;
  if (dot != std::string_view::npos && (mult == 1 || frac.size() > max_decimals)) return std::nullopt;
  u128 w = 0, f = 0, scale = 1;
  for (char c : whole) {
    if (!digit(c)) return std::nullopt;
    w = accumulate(w, c);
  }
  for (char c : frac) {
    if (!digit(c)) return std::nullopt;
    f = accumulate(f, c);
    scale *= 10;
  }
  if (w >= kSaturated / mult) return std::nullopt;
  if (f * mult % scale) return std::nullopt;
  const u128 v = w * mult + f * mult / scale;
  if (v > u128{1} << 63) return std::nullopt;
  return static_cast<uint64_t>(v);
}

// parse_duration_ns's grammar: one or more DIGITS UNIT, UNIT one of ms s m h d w ("ms"
// before "m"), the sum at most kMaxDurationNs.
std::optional<uint64_t> duration_reference(std::string_view s) {
  constexpr u128 kMs = 1'000'000, kS = 1000 * kMs;
  if (s.empty()) return std::nullopt;
  u128 total = 0;
  while (!s.empty()) {
    u128 n = 0;
    size_t i = 0;
    for (; i < s.size() && digit(s[i]); ++i) n = accumulate(n, s[i]);
    if (i == 0 || i == s.size()) return std::nullopt;
    s.remove_prefix(i);
    u128 unit = 0;
    if (s.substr(0, 2) == "ms")
      unit = kMs, s.remove_prefix(1);
    else if (s[0] == 's')
      unit = kS;
    else if (s[0] == 'm')
      unit = 60 * kS;
    else if (s[0] == 'h')
      unit = 3600 * kS;
    else if (s[0] == 'd')
      unit = 86400 * kS;
    else if (s[0] == 'w')
      unit = 7 * 86400 * kS;
    else
      return std::nullopt;
    s.remove_prefix(1);
    if (n > kMaxDurationNs) return std::nullopt;  // also keeps n * unit within 128 bits
    total += n * unit;
    if (total > kMaxDurationNs) return std::nullopt;
  }
  return static_cast<uint64_t>(total);
}

void check_count(std::string_view text) {
  const auto got = parse_count(text);
  const auto want = count_reference(text);
  LV_PROPERTY(got == want, "parse_count({}) = {}, the grammar says {}", escaped(text),
              got ? fmt::format("{}", *got) : "none", want ? fmt::format("{}", *want) : "none");
  if (got) {
    const std::string shown = format_count(*got);
    LV_PROPERTY(parse_count(shown) == got, "parse_count({}) = {}, shown as {}, which reads back otherwise",
                escaped(text), *got, shown);
  }
}

void check_duration(std::string_view text) {
  const auto got = parse_duration_ns(text);
  const auto want = duration_reference(text);
  LV_PROPERTY(got == want, "parse_duration_ns({}) = {}, the grammar says {}", escaped(text),
              got ? fmt::format("{}", *got) : "none", want ? fmt::format("{}", *want) : "none");
  if (got) {
    const std::string shown = format_duration(*got);
    LV_PROPERTY(parse_duration_ns(shown) == got,
                "parse_duration_ns({}) = {} ns, shown as {}, which reads back otherwise", escaped(text), *got, shown);
  }
}

// A wall-clock time in 2026: expiries are judged against it.
constexpr uint64_t kNow = 1'767'225'600'000'000'000ull;

void check_times(std::string_view text) {
  // A time before 1970 reads as the epoch, 0: nothing to compare.
  if (const auto t = parse_rfc3339(text); t && *t > 0) {
    const std::string shown = format_time(*t, TimeDigits::Millis);
    const uint64_t millis = *t - *t % 1'000'000;
    const auto back = parse_rfc3339(shown);
    LV_PROPERTY(back == millis, "parse_rfc3339({}) = {}, shown as {}, which reads back as {}", escaped(text), *t, shown,
                back ? fmt::format("{}", *back) : "none");
    // The same year, give or take the day a UTC offset moves it by: a time that does not
    // fit the nanosecond counter must not wrap around into another.
    const int typed = std::stoi(std::string(text.substr(0, 4)));
    const int read = std::stoi(shown.substr(0, shown.find('-')));
    const bool too_late = *t == UINT64_MAX;  // after 2554: past every time levee holds
    LV_PROPERTY(too_late ? typed >= 2553 : read >= typed - 1 && read <= typed + 1,
                "parse_rfc3339({}) = {}, which is {}", escaped(text), *t, shown);
  }
  if (auto e = parse_expiry(text, kNow)) {
    LV_PROPERTY(*e > kNow && *e - kNow <= kMaxDurationNs, "parse_expiry({}) = {}, not within 100 years after {}",
                escaped(text), *e, kNow);
    if (const auto d = parse_duration_ns(text))
      LV_PROPERTY(*e == kNow + *d, "parse_expiry({}) = {}, but the duration is {} ns from {}", escaped(text), *e, *d,
                  kNow);
  }
}

// Numbers no text gives: every count and duration levee shows must read back.
void check_formats(const uint8_t* data, size_t size) {
  if (size < sizeof(uint64_t)) return;
  uint64_t v = 0;
  std::memcpy(&v, data, sizeof v);
  const uint64_t count = v % ((uint64_t{1} << 63) + 1);
  LV_PROPERTY(parse_count(format_count(count)) == count, "format_count({}) = {} reads back otherwise", count,
              format_count(count));
  const uint64_t ms = v % (kMaxDurationNs / 1'000'000 + 1) * 1'000'000;  // durations are whole milliseconds
  LV_PROPERTY(parse_duration_ns(format_duration(ms)) == ms, "format_duration({}) = {} reads back otherwise", ms,
              format_duration(ms));
}

}  // namespace
}  // namespace levee

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  levee::check_count(text);
  levee::check_duration(text);
  levee::check_times(text);
  levee::check_formats(data, size);
  return 0;
}
