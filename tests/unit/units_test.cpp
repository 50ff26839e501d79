// units_test.cpp - userspace/core/units: counts and durations as operators type and read them.
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "core/units.hpp"
#include "unit.hpp"

namespace levee {
namespace {

struct ParseCase {
  const char* text;
  std::optional<uint64_t> want;
};

TEST(ParseCount, AcceptsPlainAndSuffixedCounts) {
  const ParseCase cases[] = {
      {"0", 0},
      {"1", 1},
      {"500", 500},
      {"10k", 10'000},
      {"10K", 10'000},
      {"1.5M", 1'500'000},
      {"1.5m", 1'500'000},  // m is mega: there are no millipackets
      {"2G", 2'000'000'000},
      {"2g", 2'000'000'000},
      {"1.5k", 1500},
      {"1.50k", 1500},
      {"0.5k", 500},
      {"1.234k", 1234},
      {"0.001G", 1'000'000},
      {"9223372036854775807", 9'223'372'036'854'775'807ull},
      {"9223372036854775808", 9'223'372'036'854'775'808ull},  // 2^63, the documented limit
      {"9223372036.854775808G", 9'223'372'036'854'775'808ull},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_count(c.text), c.want) << '"' << c.text << '"';
}

TEST(ParseCount, RejectsWhatIsNotACount) {
  for (const char* bad : {
           "",  // nothing
           "k",
           "M",
           "G",  // suffix alone
           ".",
           ".k",             // no digit
           "1.5",            // a fraction without a suffix is not a count
           "1.2345k",        // finer than the suffix: 1234.5 packets
           "1.0000000001G",  // likewise, at the G scale
           "-1",
           "+1",
           "-0",  // signs
           "1e3",
           "0x10",
           "1_000",  // other notations
           " 1",
           "1 ",
           "1 k",  // blanks
           "1kk",
           "1kM",
           "1T",
           "1p",  // unknown or doubled suffixes
           "1.2.3k",
           "1..2k",                 // two dots
           "99999999999999999999",  // > 2^64
           "18446744073709551616",  // 2^64
           "9223372036854775809",   // 2^63 + 1
           "9223372036854776k",     // > 2^63 only after scaling
           "9223372036.854775809G",
           "18446744073709552G",  // the multiplication would wrap 2^64
       })
    EXPECT_EQ(parse_count(bad), std::nullopt) << '"' << bad << '"';
}

TEST(FormatCount, ShortestExactForm) {
  const std::pair<uint64_t, const char*> cases[] = {
      {0, "0"},
      {1, "1"},
      {123, "123"},
      {999, "999"},
      {1000, "1k"},
      {1500, "1.5k"},
      {1230, "1.23k"},
      {1234, "1234"},
      {1010, "1.01k"},
      {10'000, "10k"},
      {999'990, "999.99k"},
      {1'005'000, "1005k"},
      {2'000'000, "2M"},
      {1'500'000, "1.5M"},
      {999'990'000, "999.99M"},
      {1'000'000'000, "1G"},
      {2'500'000'000, "2.5G"},
      {1'234'567'890, "1234567.89k"},
      {1'234'567'891, "1234567891"},
      {1'000'000'001, "1000000001"},
  };
  for (auto [v, want] : cases) EXPECT_EQ(format_count(v), want) << v;
}

TEST(FormatCount, ParsesBackToTheSameValue) {
  // format_count is the display inverse of parse_count. Checked for every value below
  // 100k and random values of every magnitude up to 2^53 (see the disabled test below
  // for larger ones).
  for (uint64_t v = 0; v < 100'000; ++v) ASSERT_EQ(parse_count(format_count(v)), v) << v;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200'000; ++i) {
    const int bits = static_cast<int>(rng() % 53) + 1;
    uint64_t v = rng() >> (64 - bits);
    if (rng() % 2) v -= v % 10;  // more values take the k/M/G path
    if (rng() % 4 == 0) v -= v % 10'000;
    ASSERT_EQ(parse_count(format_count(v)), v) << v << " -> " << format_count(v);
  }
}

// Above 2^53 a double skips integers: the suffixed form must still name the same number
// (counters of bytes reach that range: 2^53 B is ~80 days at 100 Gb/s).
TEST(FormatCount, ExactAbove2To53) {
  for (uint64_t v : {90'071'992'547'409'930ull, 1'000'000'000'000'000'010ull, 9'223'372'036'854'775'800ull})
    EXPECT_EQ(parse_count(format_count(v)), v) << v << " -> " << format_count(v);
}

TEST(FormatSi, ThreeSignificantDigits) {
  const std::pair<double, const char*> cases[] = {
      {0, "0"},          {950, "950"},      {999.4, "999"},       {1000, "1.00k"}, {1234, "1.23k"}, {12'345, "12.3k"},
      {99'949, "99.9k"}, {123'456, "123k"}, {7'311'069, "7.31M"}, {2e9, "2.00G"},  {1e12, "1.00T"}, {1e15, "1000T"},
  };
  for (auto [v, want] : cases) EXPECT_EQ(format_si(v), want) << v;
}

TEST(FormatNs, PicksTheLargestUnit) {
  const std::pair<uint64_t, const char*> cases[] = {
      {0, "0s"},
      {1, "1ns"},
      {999, "999ns"},
      {1000, "1us"},
      {1500, "1.5us"},
      {999'999, "999.999us"},
      {1'000'000, "1ms"},
      {1'500'000, "1.5ms"},
      {1'234'567, "1.235ms"},  // three decimals, rounded
      {4'000'000, "4ms"},
      {1'000'000'000, "1s"},
      {2'500'000'000, "2.5s"},
      {3'600'000'000'000, "3600s"},
  };
  for (auto [ns, want] : cases) EXPECT_EQ(format_ns(ns), want) << ns;
}

// Rounding to three decimals can carry into the next unit: 999999500 ns is "1s".
TEST(FormatNs, RoundingDoesNotOverflowTheUnit) {
  EXPECT_EQ(format_ns(999'999'999), "1s");
  EXPECT_EQ(format_ns(999'999'500), "1s");
}

// ---- durations ----------------------------------------------------------------------

TEST(Durations, MillisecondsSecondsMinutesHoursDaysWeeks) {
  const std::pair<const char*, uint64_t> cases[] = {
      {"500ms", 500 * kMs},     {"2s", 2 * kSec},          {"1m", 60 * kSec},       {"1h", 3600 * kSec},
      {"7d", 7 * 86400 * kSec}, {"1m30s", 90 * kSec},      {"1s500ms", 1500 * kMs}, {"0s", 0},
      {"1w", 7 * 86400 * kSec}, {"36500d", kMaxDurationNs}};
  for (auto [text, ns] : cases) EXPECT_EQ(parse_duration_ns(text), ns) << text;
  for (const char* bad : {"", "5", "ms", "1.5s", "2 s", "-1s", "1y", "5us", "1h30", "36501d", "1msx", "s5"})
    EXPECT_EQ(parse_duration_ns(bad), std::nullopt) << '"' << bad << '"';
}

// Digits past 2^64 must not wrap around into a small duration: 2^64 + 1 seconds is not 1s.
TEST(Durations, NumbersPastTheCounterAreRefusedNotWrapped) {
  for (const char* bad :
       {"18446744073709551617s", "18446744073709551616ms", "1844674407370955161600w", "1s18446744073709551617ms"})
    EXPECT_EQ(parse_duration_ns(bad), std::nullopt) << '"' << bad << '"';
}

TEST(Durations, FormatReadsBack) {
  EXPECT_EQ(format_duration(500 * kMs), "500ms");
  EXPECT_EQ(format_duration(2 * kSec), "2s");
  EXPECT_EQ(format_duration(90 * kSec), "1m30s");
  EXPECT_EQ(format_duration(3600 * kSec), "1h");
  EXPECT_EQ(format_duration(36 * 3600 * kSec), "1d12h");
  for (uint64_t ns : {kMs, 1500 * kMs, 61 * kSec, 86400 * kSec + kMs, kMaxDurationNs})
    EXPECT_EQ(parse_duration_ns(format_duration(ns)), ns) << ns;
}

}  // namespace
}  // namespace levee
