// events_test.cpp - `levee events` against real traffic: a source over its limit is
// reported once (limited), then its ban (banned, with its length and offences) and the
// ban's end (ban_ended), as JSON lines or text; --count and SIGTERM end the stream.
#include <time.h>

#include <algorithm>
#include <cstdio>

#include "e2e.hpp"

namespace lvt {
namespace {

using nlohmann::json;
using Events = E2e;

uint64_t realtime_now_ms() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000 + static_cast<uint64_t>(t.tv_nsec) / 1'000'000;
}

// "2026-01-01T00:00:00.250Z" as Unix ms; -1 if it is not that.
int64_t parse_rfc3339_ms(const std::string& s) {
  struct tm tm {};
  int ms = 0;
  if (sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
             &tm.tm_sec, &ms) != 7)
    return -1;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

// events: a source over its limit is reported once (limited), its ban (banned, with its
// length and offences) and the ban's end (ban_ended), as JSON lines; SIGTERM ends it.
TEST_F(Events, ReportLimitedBannedAndBanEnded) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", "[default]\nrate = 100\nburst = 10\nban = \"1s\"\n")});
  Child ev = sb().levee_start({"events", sb().rx_if(), "--json", "--duration", "15"});
  usleep(500'000);
  const std::string src = Addrs::src4()[0];
  const uint64_t t0 = realtime_now_ms();
  send_udp(sb(), src, 2000, 0.5);
  send_udp(sb(), Addrs::src4()[1], 20, 0.2);  // within its limit: no event
  usleep(3'000'000);                          // the ban ends 1 s after the flood's last packet; polled every second
  RunResult r = ev.stop();
  EXPECT_EQ(r.code, 0) << "SIGTERM should end it cleanly: " << r.describe();
  const auto lines = json_lines(r.out);
  const json* limited = nullptr;
  const json* banned = nullptr;
  const json* ended = nullptr;
  for (const json& l : lines) {
    EXPECT_EQ(l.at("interface"), sb().rx_if());
    EXPECT_NE(l.at("address"), Addrs::src4()[1]) << "an event for a source within its limit";
    if (l.at("address") != src) continue;
    if (l.at("type") == "limited" && !limited) limited = &l;
    if (l.at("type") == "banned" && !banned) banned = &l;
    if (l.at("type") == "ban_ended" && !ended) ended = &l;
  }
  ASSERT_NE(limited, nullptr) << r.out;
  EXPECT_EQ(limited->at("class"), "default");
  EXPECT_EQ(limited->at("reason"), "rate");
  // The time is the wall clock's, within a second of when we sent.
  const std::string time = limited->at("time");
  ASSERT_EQ(time.size(), 24u) << time;  // 2026-01-01T00:00:00.000Z
  EXPECT_EQ(time.back(), 'Z');
  const int64_t at = parse_rfc3339_ms(time);
  EXPECT_GE(at, static_cast<int64_t>(t0) - 1000) << time;
  EXPECT_LE(at, static_cast<int64_t>(t0) + 2000) << time;
  ASSERT_NE(banned, nullptr) << r.out;
  EXPECT_EQ(banned->at("duration_ms"), 1000);
  EXPECT_EQ(banned->at("offences"), 1);
  EXPECT_EQ(banned->at("reason"), "rate");
  ASSERT_NE(ended, nullptr) << r.out;
  EXPECT_EQ(ended->at("duration_ms"), 1000);
  EXPECT_EQ(ended->at("lifted"), false);
  EXPECT_GT(parse_rfc3339_ms(ended->at("time")), parse_rfc3339_ms(banned->at("time")) + 900) << r.out;

  // --count ends it after that many events; text lines name the type and address.
  Child one = sb().levee_start({"events", sb().rx_if(), "--count", "1", "--duration", "10"});
  usleep(300'000);
  send_udp(sb(), Addrs::src4()[2], 2000, 0.3);
  RunResult o = one.wait();
  ASSERT_EQ(o.code, 0) << o.describe();
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << o.out;
  // Its first offence: the ban is sent before the drop it causes.
  EXPECT_NE(o.out.find(" banned " + Addrs::src4()[2] + " class default reason rate: banned for 1s, 1 offence"),
            std::string::npos)
      << o.out;
}

}  // namespace
}  // namespace lvt
