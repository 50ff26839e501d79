#include "core/clock.hpp"

#include <fmt/format.h>
#include <time.h>

#include "core/quote.hpp"
#include "core/units.hpp"
#include "levee_abi.h"

namespace levee {
namespace {

uint64_t clock_ns(clockid_t id) {
  timespec t{};
  clock_gettime(id, &t);
  return static_cast<uint64_t>(t.tv_sec) * LV_NSEC_PER_SEC + static_cast<uint64_t>(t.tv_nsec);
}

// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool real_date(unsigned y, unsigned mo, unsigned d) {
  static constexpr unsigned kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return mo >= 1 && mo <= 12 && d >= 1 && d <= kDays[mo - 1] && !(mo == 2 && d == 29 && !leap);
}

// A cursor over RFC 3339 text.
struct Scan {
  std::string_view s;
  size_t i = 0;

  bool digits(size_t n, unsigned& out) {
    if (i + n > s.size()) return false;
    out = 0;
    for (size_t k = 0; k < n; ++k, ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + static_cast<unsigned>(s[i] - '0');
    }
    return true;
  }
  bool one_of(std::string_view any) {
    if (i >= s.size() || any.find(s[i]) == std::string_view::npos) return false;
    ++i;
    return true;
  }
  // ".5" -> 500'000'000 ns; nothing without a '.'.
  std::optional<uint64_t> fraction() {
    uint64_t ns = 0;
    if (!one_of(".")) return ns;
    uint64_t scale = LV_NSEC_PER_SEC;
    const size_t start = i;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
      if (scale /= 10) ns += static_cast<uint64_t>(s[i] - '0') * scale;
    if (i == start) return std::nullopt;
    return ns;
  }
  // "Z", "+02:00", "-05:30": minutes east of UTC.
  std::optional<int64_t> offset() {
    if (one_of("Zz")) return 0;
    if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return std::nullopt;
    const int64_t sign = s[i++] == '+' ? 1 : -1;
    unsigned oh = 0, om = 0;
    if (!digits(2, oh) || !one_of(":") || !digits(2, om) || oh > 23 || om > 59) return std::nullopt;
    return sign * static_cast<int64_t>(oh * 60 + om);
  }
};

}  // namespace

Clocks Clocks::read() {
  const uint64_t m0 = clock_ns(CLOCK_MONOTONIC);
  const uint64_t u = clock_ns(CLOCK_REALTIME);
  const uint64_t m1 = clock_ns(CLOCK_MONOTONIC);
  return Clocks{clock_tick_ns(), u, m0 + (m1 - m0) / 2};
}

uint64_t unix_now_ns() { return clock_ns(CLOCK_REALTIME); }
uint64_t mono_now_ns() { return clock_ns(CLOCK_MONOTONIC); }

uint64_t clock_tick_ns() {
  timespec ts{};
  if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts) != 0 || (ts.tv_sec == 0 && ts.tv_nsec == 0))
    return 10'000'000;  // HZ=100, the coarsest common tick
  return static_cast<uint64_t>(ts.tv_sec) * LV_NSEC_PER_SEC + static_cast<uint64_t>(ts.tv_nsec);
}

int64_t unix_seconds(int64_t year, unsigned month, unsigned day, unsigned hour, unsigned minute, unsigned second,
                     int64_t offset_minutes) {
  return days_from_civil(year, month, day) * 86400 + int64_t{hour} * 3600 + int64_t{minute} * 60 + second -
         offset_minutes * 60;
}

std::optional<uint64_t> parse_rfc3339(std::string_view s) {
  Scan c{s};
  unsigned y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!c.digits(4, y) || !c.one_of("-") || !c.digits(2, mo) || !c.one_of("-") || !c.digits(2, d) || !c.one_of("Tt ") ||
      !c.digits(2, h) || !c.one_of(":") || !c.digits(2, mi) || !c.one_of(":") || !c.digits(2, sec))
    return std::nullopt;
  const auto frac = c.fraction();
  const auto offset = frac ? c.offset() : std::nullopt;
  if (!offset || c.i != s.size()) return std::nullopt;
  if (!real_date(y, mo, d) || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  const int64_t t = unix_seconds(y, mo, d, h, mi, sec, *offset);
  if (t < 0) return 0;  // before 1970: the epoch, in the past for every use
  // After 2554 the nanoseconds do not fit: the end of time, later than any limit, rather
  // than a product wrapped around into a time in the next century.
  if (static_cast<uint64_t>(t) > (UINT64_MAX - *frac) / LV_NSEC_PER_SEC) return UINT64_MAX;
  return static_cast<uint64_t>(t) * LV_NSEC_PER_SEC + *frac;
}

std::string format_time(uint64_t unix_ns, TimeDigits digits) {
  const auto t = static_cast<time_t>(unix_ns / LV_NSEC_PER_SEC);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  if (digits == TimeDigits::Millis) return fmt::format("{}.{:03}Z", buf, unix_ns % LV_NSEC_PER_SEC / 1'000'000);
  return fmt::format("{}Z", buf);
}

Result<uint64_t> parse_expiry(std::string_view text, uint64_t now_unix_ns) {
  if (auto ns = parse_duration_ns(text)) {
    if (*ns == 0) return usage_error(fmt::format("{} is no time at all", quote_value(text)), "give e.g. 30m or 2h");
    return now_unix_ns + *ns;
  }
  if (auto t = parse_rfc3339(text)) {
    if (*t <= now_unix_ns)
      return usage_error(fmt::format("{} is in the past", quote_value(text)),
                         "give a later time, or a duration like 2h");
    if (*t - now_unix_ns > kMaxDurationNs)
      return usage_error(fmt::format("{} is more than 100 years away", quote_value(text)),
                         "leave the expiry out: never");
    return *t;
  }
  return usage_error(fmt::format("{} is neither a duration nor an RFC 3339 time", quote_value(text)),
                     "give e.g. 30m, 2h, 1d12h, 1w or 2026-12-01T00:00:00Z");
}

}  // namespace levee
