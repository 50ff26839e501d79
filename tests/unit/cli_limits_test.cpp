// cli_limits_test.cpp - the command line and the output of issue 5's features: would-be
// drops in monitor mode, bans, admission, network and class limits, in `levee stats`,
// `show`, `status`, `set`, `attach` and `unban`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/app.hpp"
#include "core/reasons.hpp"
#include "export/format.hpp"

namespace levee::cli {
namespace {

// ---- stats ------------------------------------------------------------------------

TEST(StatsMonitor, ReasonsOfIssue5AreCountedWhereTheyBelong) {
  Counters c;
  c.by_reason[LV_R_CONFORMING] = {10, 1000};
  c.by_reason[LV_R_MONITORED] = {7, 700};
  c.by_reason[LV_R_BAN] = {3, 180};
  c.by_reason[LV_R_ADMISSION] = {4, 240};
  c.by_reason[LV_R_NETWORK] = {5, 300};
  c.by_reason[LV_R_CLASS_LIMIT] = {6, 360};
  auto j = stats_json("eth0", c);
  EXPECT_EQ(j["passed"]["monitored"], 7) << "monitored packets pass";
  EXPECT_EQ(j["passed_packets"], 17);
  EXPECT_EQ(j["dropped"]["ban"], 3);
  EXPECT_EQ(j["dropped"]["admission"], 4);
  EXPECT_EQ(j["dropped"]["network"], 5);
  EXPECT_EQ(j["dropped"]["class_limit"], 6);
  EXPECT_EQ(j["dropped_packets"], 18);
  EXPECT_EQ(j["bytes"]["dropped"]["class_limit"], 360);
  EXPECT_FALSE(j["dropped"].contains("monitored"));
}

TEST(StatsMonitor, WouldDropHasEveryMonitorableReasonZerosToo) {
  Counters c;
  c.by_reason[LV_R_MONITORED] = {12, 1200};
  c.would[LV_R_RATE] = {9, 900};
  c.would[LV_R_BAN] = {3, 300};
  auto j = stats_json("eth0", c);
  ASSERT_TRUE(j.contains("would_drop"));
  ASSERT_TRUE(j.contains("would_drop_bytes"));
  const std::vector<std::string> want{"rate", "map_full", "contended", "bytes", "ban", "admission", "network",
                                      "class_limit"};
  EXPECT_EQ(j["would_drop"].size(), want.size()) << j["would_drop"].dump();
  for (const auto& r : want) {
    EXPECT_TRUE(j["would_drop"].contains(r)) << r;
    EXPECT_TRUE(j["would_drop"][r].is_number_unsigned()) << r;
    EXPECT_TRUE(j["would_drop_bytes"].contains(r)) << r;
  }
  // Not monitorable: always dropped, never "would".
  for (const char* r : {"malformed", "vlan_depth", "deny", "ext_depth", "conforming", "monitored"})
    EXPECT_FALSE(j["would_drop"].contains(r)) << r;
  EXPECT_EQ(j["would_drop"]["rate"], 9);
  EXPECT_EQ(j["would_drop"]["ban"], 3);
  EXPECT_EQ(j["would_drop"]["network"], 0);
  EXPECT_EQ(j["would_drop_bytes"]["rate"], 900);
  // Would-be drops passed: they are not in the drop counts.
  EXPECT_EQ(j["dropped_packets"], 0);
}

TEST(StatsMonitor, TextSectionWhenCountedOrMonitoring) {
  Counters none;
  EXPECT_EQ(stats_text("eth0", none).find("would drop"), std::string::npos);
  const std::string monitoring = stats_text("eth0", none, {}, true);
  EXPECT_NE(monitoring.find("would drop (monitor mode)"), std::string::npos) << monitoring;

  Counters c;
  c.would[LV_R_ADMISSION] = {1'234, 56'789};
  const std::string t = stats_text("eth0", c);
  const size_t section = t.find("would drop (monitor mode)\n");
  ASSERT_NE(section, std::string::npos) << t;
  const size_t row = t.find("  admission", section);
  ASSERT_NE(row, std::string::npos) << t;
  const std::string line = t.substr(row, t.find('\n', row) - row);
  EXPECT_NE(line.find("1,234"), std::string::npos) << line;
  EXPECT_NE(line.find("56,789"), std::string::npos) << line;
  // The reasons are the monitorable ones only.
  EXPECT_EQ(t.find("  deny", section), std::string::npos) << t;
}

TEST(StatsMonitor, RatesLineSaysWhatWouldBeDropped) {
  Counters a, b;
  b.by_reason[LV_R_MONITORED] = {5000, 0};
  b.would[LV_R_RATE] = {5000, 0};
  const std::string line = rates_line(a, b, 1.0);
  EXPECT_NE(line.find("would drop 5.00k pps"), std::string::npos) << line;
  EXPECT_EQ(rates_line(a, a, 1.0).find("would"), std::string::npos);
}

TEST(Reasons, EveryAbiReasonHasANameAndHelp) {
  for (unsigned r : {LV_R_MONITORED, LV_R_BAN, LV_R_ADMISSION, LV_R_NETWORK, LV_R_CLASS_LIMIT}) {
    auto it = std::find_if(kReasons.begin(), kReasons.end(), [&](const ReasonInfo& i) { return i.id == r; });
    ASSERT_NE(it, kReasons.end()) << r;
    EXPECT_FALSE(it->help.empty()) << it->name;
  }
  EXPECT_FALSE(monitorable(LV_R_DENY));
  EXPECT_FALSE(monitorable(LV_R_MALFORMED));
  EXPECT_TRUE(monitorable(LV_R_CLASS_LIMIT));
  for (size_t i = 1; i < kReasons.size(); ++i) EXPECT_LT(kReasons[i - 1].id, kReasons[i].id) << "ABI order";
}

}  // namespace
}  // namespace levee::cli
