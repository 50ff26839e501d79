// stats_output_test.cpp - what `levee stats` prints, text and JSON, from the counters:
// every reason under its verdict, the classes, would-be drops in monitor mode, the
// rates line of --watch; and the reason table all of them render from.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "core/reasons.hpp"
#include "export/render_stats.hpp"
#include "export/render_units.hpp"

namespace levee::cli {
namespace {

TEST(StatsOutput, GroupDigits) {
  EXPECT_EQ(group_digits(0), "0");
  EXPECT_EQ(group_digits(999), "999");
  EXPECT_EQ(group_digits(1000), "1,000");
  EXPECT_EQ(group_digits(1234567), "1,234,567");
  EXPECT_EQ(group_digits(18446744073709551615ull), "18,446,744,073,709,551,615");
}

TEST(StatsOutput, JsonHasTheContractFields) {
  Counters c;
  c.by_reason[LV_R_CONFORMING] = {10, 1000};
  c.by_reason[LV_R_NOT_IP] = {2, 84};
  c.by_reason[LV_R_RATE] = {30, 1920};
  c.by_reason[LV_R_MALFORMED] = {1, 20};
  auto j = stats_json("eth0", c);
  EXPECT_EQ(j["interface"], "eth0");
  EXPECT_EQ(j["rx_packets"], 43u);
  EXPECT_EQ(j["rx_bytes"], 3024u);
  EXPECT_EQ(j["passed_packets"], 12u);
  EXPECT_EQ(j["passed_bytes"], 1084u);
  EXPECT_EQ(j["dropped_packets"], 31u);
  EXPECT_EQ(j["dropped_bytes"], 1940u);
  EXPECT_EQ(j["dropped"]["rate"], 30u);
  EXPECT_EQ(j["dropped"]["malformed"], 1u);
  EXPECT_EQ(j["dropped"]["vlan_depth"], 0u);
  EXPECT_EQ(j["passed"]["conforming"], 10u);
  EXPECT_EQ(j["passed"]["not_ip"], 2u);
  EXPECT_EQ(j["bytes"]["dropped"]["rate"], 1920u);
  EXPECT_FALSE(j["passed"].contains("rate"));
  EXPECT_FALSE(j["dropped"].contains("conforming"));
  for (const char* f : {"rx_packets", "rx_bytes", "passed_packets", "passed_bytes", "dropped_packets", "dropped_bytes"})
    EXPECT_TRUE(j[f].is_number_unsigned()) << f;
}

// Monitored packets pass; bans, admission, network and class limits drop.
TEST(StatsOutput, DefenceReasonsAreCountedUnderTheirVerdict) {
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

TEST(StatsOutput, SeveralClasses) {
  Counters c;
  c.by_reason[LV_R_CONFORMING] = {10, 1000};
  c.by_reason[LV_R_DENY] = {5, 300};
  // Counters are kept by class id, which need not follow the match order.
  c.by_class[5] = {{4, 400}, {1, 60}};
  c.by_class[2] = {{6, 600}, {4, 240}};
  const ClassNames names{{"dns", 5}, {"a-very-long-class-name-here", 2}};
  auto j = stats_json("eth0", c, names);
  EXPECT_EQ(j["classes"]["dns"]["id"], 5);
  EXPECT_EQ(j["classes"]["dns"]["passed_packets"], 4);
  EXPECT_EQ(j["classes"]["a-very-long-class-name-here"]["id"], 2);
  EXPECT_EQ(j["classes"]["a-very-long-class-name-here"]["dropped_bytes"], 240);
  EXPECT_EQ(j["dropped"]["deny"], 5);
  const std::string t = stats_text("eth0", c, names);
  EXPECT_NE(t.find("  deny "), std::string::npos) << t;
  // The class rows line up under their header, whatever the name's length.
  const size_t header = t.find("\nclass ") + 1;  // the table's header, not the class_limit reason
  const size_t line = t.rfind('\n', header) + 1;
  const size_t col = t.find("passed packets", header) - line;
  const size_t dns = t.find("\ndns") + 1;
  EXPECT_EQ(t.find('\n', dns) - dns, t.find('\n', line) - line) << t;
  (void)col;
}

TEST(StatsOutput, WouldDropHasEveryMonitorableReasonZerosToo) {
  Counters c;
  c.by_reason[LV_R_MONITORED] = {12, 1200};
  c.would[LV_R_RATE] = {9, 900};
  c.would[LV_R_BAN] = {3, 300};
  auto j = stats_json("eth0", c);
  ASSERT_TRUE(j.contains("would_drop"));
  ASSERT_TRUE(j.contains("would_drop_bytes"));
  const std::vector<std::string> want{"rate",      "map_full",   "contended",  "deny",         "bytes",
                                      "ban",       "admission",  "network",    "class_limit",  "newcomer",
                                      "escalated", "challenged", "unverified", "answer_limit", "crowdsec",
                                      "martian",   "no_listener"};
  EXPECT_EQ(j["would_drop"].size(), want.size()) << j["would_drop"].dump();
  for (const auto& r : want) {
    EXPECT_TRUE(j["would_drop"].contains(r)) << r;
    EXPECT_TRUE(j["would_drop"][r].is_number_unsigned()) << r;
    EXPECT_TRUE(j["would_drop_bytes"].contains(r)) << r;
  }
  // Not monitorable: always dropped, never "would". (The deny list is, unless
  // deny_in_monitor = "drop".)
  for (const char* r : {"malformed", "vlan_depth", "ext_depth", "conforming", "monitored", "verified"})
    EXPECT_FALSE(j["would_drop"].contains(r)) << r;
  EXPECT_EQ(j["would_drop"]["rate"], 9);
  EXPECT_EQ(j["would_drop"]["ban"], 3);
  EXPECT_EQ(j["would_drop"]["network"], 0);
  EXPECT_EQ(j["would_drop_bytes"]["rate"], 900);
  // Would-be drops passed: they are not in the drop counts.
  EXPECT_EQ(j["dropped_packets"], 0);
}

// Sources SYN authentication proved but left unmarked known-good for their network's
// bound (lv_percpu.marks_capped, summed over CPUs).
TEST(StatsOutput, JsonHasTheKnownGoodMarksCapped) {
  Counters c;
  EXPECT_EQ(stats_json("eth0", c)["known_good"]["marks_capped"], 0);
  c.marks_capped = 1'234;
  EXPECT_EQ(stats_json("eth0", c)["known_good"]["marks_capped"], 1'234);
}

TEST(StatsOutput, WouldDropTextSectionWhenCountedOrMonitoring) {
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
  // The reasons monitor mode can count only.
  EXPECT_EQ(t.find("  malformed", section), std::string::npos) << t;
  EXPECT_NE(t.find("  deny", section), std::string::npos) << t;
}

TEST(StatsOutput, RatesLine) {
  Counters a, b;
  b.by_reason[LV_R_CONFORMING] = {1000, 0};
  b.by_reason[LV_R_RATE] = {7'310'000, 0};
  std::string line = rates_line(a, b, 1.0);
  EXPECT_NE(line.find("7.31M"), std::string::npos) << line;
  EXPECT_NE(line.find("(rate 7.31M)"), std::string::npos) << line;
  EXPECT_EQ(rates_line(a, a, 1.0).find('('), std::string::npos);
}

TEST(StatsOutput, RatesLineSaysWhatWouldBeDropped) {
  Counters a, b;
  b.by_reason[LV_R_MONITORED] = {5000, 0};
  b.would[LV_R_RATE] = {5000, 0};
  const std::string line = rates_line(a, b, 1.0);
  EXPECT_NE(line.find("would drop 5.00k pps"), std::string::npos) << line;
  EXPECT_EQ(rates_line(a, a, 1.0).find("would"), std::string::npos);
}

TEST(Reasons, EveryAbiReasonHasANameAndHelp) {
  // Every id the ABI uses, found by its end markers, so a new reason cannot miss the table.
  std::vector<unsigned> ids;
  for (unsigned r = 0; r < LV_R_PASS_END; ++r) ids.push_back(r);
  for (unsigned r = LV_R_FIRST_DROP; r < LV_R_DROP_END; ++r) ids.push_back(r);
  static_assert(LV_R_PASS_END <= LV_R_FIRST_DROP && LV_R_DROP_END <= LV_REASON_MAX);
  for (unsigned r : ids) {
    auto it = std::find_if(kReasons.begin(), kReasons.end(), [&](const ReasonInfo& i) { return i.id == r; });
    ASSERT_NE(it, kReasons.end()) << "reason id " << r << " has no row in kReasons";
    EXPECT_FALSE(it->help.empty()) << it->name;
  }
  EXPECT_EQ(kReasons.size(), ids.size()) << "a row in kReasons for an id the ABI does not use";
  EXPECT_FALSE(monitorable(LV_R_DENY));
  EXPECT_TRUE(would_drop_reason(LV_R_DENY));
  EXPECT_FALSE(would_drop_reason(LV_R_MALFORMED));
  EXPECT_FALSE(monitorable(LV_R_MALFORMED));
  EXPECT_TRUE(monitorable(LV_R_CLASS_LIMIT));
  for (size_t i = 1; i < kReasons.size(); ++i) EXPECT_LT(kReasons[i - 1].id, kReasons[i].id) << "ABI order";
}

}  // namespace
}  // namespace levee::cli
