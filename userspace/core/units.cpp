#include "core/units.hpp"

#include <fmt/format.h>

#include <cctype>
#include <iterator>

namespace levee {

std::optional<uint64_t> parse_count(std::string_view s) {
  if (s.empty()) return std::nullopt;
  uint64_t mult = 1;
  switch (s.back()) {
    case 'k':
    case 'K':
      mult = 1000;
      break;
    case 'm':
    case 'M':
      mult = 1000000;
      break;
    case 'g':
    case 'G':
      mult = 1000000000;
      break;
    default:
      break;
  }
  if (mult != 1) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;

  // Integer part and optional fraction, in exact integer arithmetic.
  constexpr uint64_t kMax = uint64_t{1} << 63;
  uint64_t whole = 0, frac = 0, frac_scale = 1;
  bool seen_dot = false, seen_digit = false;
  for (char c : s) {
    if (c == '.' && !seen_dot) {
      seen_dot = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    seen_digit = true;
    auto d = static_cast<uint64_t>(c - '0');
    if (!seen_dot) {
      if (whole > (kMax - d) / 10) return std::nullopt;
      whole = whole * 10 + d;
    } else {
      if (frac_scale >= mult) return std::nullopt;  // finer than the suffix allows
      frac = frac * 10 + d;
      frac_scale *= 10;
    }
  }
  if (!seen_digit || (seen_dot && mult == 1)) return std::nullopt;
  if (whole > kMax / mult) return std::nullopt;
  uint64_t v = whole * mult;
  if (seen_dot) {
    if ((frac * mult) % frac_scale) return std::nullopt;
    v += frac * mult / frac_scale;
  }
  if (v > kMax) return std::nullopt;
  return v;
}

std::string format_count(uint64_t v) {
  // Integer arithmetic throughout: counters can exceed 2^53, where doubles skip values.
  struct Unit {
    uint64_t mult;
    const char* suffix;
  };
  for (Unit u : {Unit{1000000000, "G"}, Unit{1000000, "M"}, Unit{1000, "k"}}) {
    const uint64_t step = u.mult / 100;  // two decimals at most
    if (v < u.mult || v % step) continue;
    uint64_t whole = v / u.mult, hundredths = v % u.mult / step;
    if (hundredths == 0) return fmt::format("{}{}", whole, u.suffix);
    if (hundredths % 10 == 0) return fmt::format("{}.{}{}", whole, hundredths / 10, u.suffix);
    return fmt::format("{}.{:02}{}", whole, hundredths, u.suffix);
  }
  return std::to_string(v);
}

std::string format_si(double v) {
  if (v < 999.5) return fmt::format("{:.0f}", v);
  const char* suffix[] = {"k", "M", "G", "T"};
  int i = -1;
  while (v >= 999.5 && i < 3) v /= 1000, ++i;
  int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
  return fmt::format("{:.{}f}{}", v, decimals, suffix[i]);
}

std::string format_ns(uint64_t ns) {
  struct Unit {
    uint64_t mult;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {{1000000000, "s"}, {1000000, "ms"}, {1000, "us"}};
  if (ns == 0) return "0s";
  for (size_t i = 0; i < std::size(kUnits); ++i) {
    const Unit& u = kUnits[i];
    if (ns < u.mult) continue;
    std::string s = fmt::format("{:.3f}", static_cast<double>(ns) / static_cast<double>(u.mult));
    // Rounding may carry into the next unit: 999.9996 ms is "1s", not "1000ms".
    if (i > 0 && s.rfind("1000.", 0) == 0) return fmt::format("1{}", kUnits[i - 1].suffix);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s + u.suffix;
  }
  return fmt::format("{}ns", ns);
}

std::optional<uint64_t> parse_duration_ns(std::string_view s) {
  constexpr uint64_t kMs = 1'000'000, kS = 1000 * kMs;
  if (s.empty()) return std::nullopt;
  uint64_t total = 0;
  while (!s.empty()) {
    size_t digits = 0;
    uint64_t n = 0;
    for (; digits < s.size() && s[digits] >= '0' && s[digits] <= '9'; ++digits) {
      const auto d = static_cast<uint64_t>(s[digits] - '0');
      // Checked before the multiplication: past 2^64 it would wrap into a small number.
      if (n > (kMaxDurationNs - d) / 10) return std::nullopt;
      n = n * 10 + d;
    }
    if (digits == 0 || digits == s.size()) return std::nullopt;  // a unit needs digits, digits need a unit
    s.remove_prefix(digits);
    uint64_t unit;
    size_t len = 1;
    if (s.substr(0, 2) == "ms")
      unit = kMs, len = 2;  // before 'm': "5ms" is not five minutes
    else if (s[0] == 's')
      unit = kS;
    else if (s[0] == 'm')
      unit = 60 * kS;
    else if (s[0] == 'h')
      unit = 3600 * kS;
    else if (s[0] == 'd')
      unit = 86400 * kS;
    else if (s[0] == 'w')
      unit = 7ull * 86400 * kS;
    else
      return std::nullopt;
    s.remove_prefix(len);
    if (n > (kMaxDurationNs - total) / unit) return std::nullopt;
    total += n * unit;
  }
  return total;
}

std::string format_duration(uint64_t ns) {
  struct Unit {
    uint64_t ns;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86400'000'000'000, "d"},
                                    {3600'000'000'000, "h"},
                                    {60'000'000'000, "m"},
                                    {1'000'000'000, "s"},
                                    {1'000'000, "ms"}};
  if (ns == 0) return "0s";
  if (ns % 1'000'000) return format_ns(ns);  // finer than a millisecond: not typed by anyone
  std::string out;
  for (const Unit& u : kUnits) {
    if (ns < u.ns) continue;
    out += fmt::format("{}{}", ns / u.ns, u.name);
    ns %= u.ns;
  }
  return out;
}

}  // namespace levee
