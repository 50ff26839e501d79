// crowdsec_publish_test.cpp - levee as a CrowdSec machine, its pure parts: the publish
// keys of [crowdsec], which datapath events are bans to share, the alerts' JSON as the
// Local API takes it, the login reply, and the bounded queue (policy/crowdsec_publish.hpp,
// daemon/publisher.hpp).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/crowdsec_publish.hpp"
#include "daemon/crowdsec_stream.hpp"
#include "daemon/publisher.hpp"
#include "policy/crowdsec.hpp"
#include "unit.hpp"

namespace levee {
namespace {

const std::string kBouncer = "[crowdsec]\nurl = \"http://127.0.0.1:8080\"\napi_key_file = \"/k\"\n";

std::string config_error(const std::string& extra) {
  auto r = parse_config(kDefault + kBouncer + extra, "t.toml", kConfigNow);
  return r.ok() ? "(accepted)" : r.error().message();
}

// ---- the publish keys ----------------------------------------------------------------

TEST(CrowdsecPublishConfig, OffByDefaultAndEveryKeyWhenOn) {
  Policy p = parse_ok(kDefault + kBouncer);
  EXPECT_FALSE(p.crowdsec.publish);
  p = parse_ok(kDefault + kBouncer + R"(publish = true
machine_id = "edge-1"
machine_password_file = "/etc/levee/crowdsec-machine.password"
)");
  EXPECT_TRUE(p.crowdsec.publish);
  EXPECT_EQ(p.crowdsec.machine_id, "edge-1");
  EXPECT_EQ(p.crowdsec.machine_password_file, "/etc/levee/crowdsec-machine.password");
  EXPECT_EQ(p.crowdsec.publish_min_ban_ns, 60 * kSec);
  EXPECT_EQ(p.crowdsec.publish_queue, 10'000u);
  p = parse_ok(kDefault + kBouncer + R"(publish = true
machine_id = "edge-1"
machine_password_file = "/p"
publish_min_ban = "5m"
publish_queue = "50k"
)");
  EXPECT_EQ(p.crowdsec.publish_min_ban_ns, 300 * kSec);
  EXPECT_EQ(p.crowdsec.publish_queue, 50'000u);
}

TEST(CrowdsecPublishConfig, EachMistakeIsOneLineNamingTheKeyAndTheFix) {
  const std::string on = "publish = true\n";
  const std::string id = "machine_id = \"edge-1\"\n", pw = "machine_password_file = \"/p\"\n";
  EXPECT_EQ(config_error(on + pw),
            "t.toml:4: crowdsec.machine_id: missing; give the NAME levee was registered with: `cscli machines add "
            "NAME --password ...`");
  EXPECT_EQ(config_error(on + id),
            "t.toml:4: crowdsec.machine_password_file: missing; give the file holding the machine's password (mode "
            "600), e.g. /etc/levee/crowdsec-machine.password");
  EXPECT_EQ(config_error(id),
            "t.toml:7: crowdsec.machine_id: given without publish = true; add publish = true to share levee's bans "
            "with the fleet, or remove it");
  EXPECT_NE(config_error("publish_min_ban = \"2m\"\n").find("crowdsec.publish_min_ban: given without publish = true"),
            std::string::npos);
  EXPECT_NE(config_error("publish = \"yes\"\n").find("crowdsec.publish"), std::string::npos);
  EXPECT_NE(config_error(on + pw + "machine_id = \"a b\"\n").find("crowdsec.machine_id: 'a b' is not a machine name"),
            std::string::npos)
      << config_error(on + pw + "machine_id = \"a b\"\n");
  EXPECT_NE(config_error(on + id + "machine_password_file = \"p\"\n")
                .find("crowdsec.machine_password_file: 'p' is not an absolute path"),
            std::string::npos);
  EXPECT_NE(config_error(on + id + pw + "publish_min_ban = \"500ms\"\n")
                .find("crowdsec.publish_min_ban: 500ms is shorter than a second; give 1s or more"),
            std::string::npos)
      << config_error(on + id + pw + "publish_min_ban = \"500ms\"\n");
  EXPECT_NE(config_error(on + id + pw + "publish_queue = 0\n").find("crowdsec.publish_queue"), std::string::npos);
  EXPECT_NE(config_error(on + id + pw + "publish_queue = \"2M\"\n").find("crowdsec.publish_queue"), std::string::npos);
  EXPECT_EQ(config_error(on + id + pw), "(accepted)");
  auto r = parse_config("[interface]\nevents_per_second = \"off\"\n" + kDefault + kBouncer + on + id + pw, "t.toml",
                        kConfigNow);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "t.toml:2: interface.events_per_second: off, but [crowdsec] publish = true shares the bans the events "
            "report; give events_per_second a rate (default 100), or publish = false");
}

TEST(CrowdsecPublishConfig, ThePasswordFileFollowsTheKeyFilesRules) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("lv-cspw-{}", getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir / "pw";
  std::ofstream(path) << "  s3cret-Pass\n";
  chmod(path.c_str(), 0600);
  auto pw = read_cs_password(path);
  ASSERT_TRUE(pw.ok()) << pw.error().message();
  EXPECT_EQ(*pw, "s3cret-Pass");
  chmod(path.c_str(), 0644);
  EXPECT_EQ(read_cs_password(path).error().message(),
            path + ": the CrowdSec machine password file is readable by everyone; chmod 600 " + path);
  std::ofstream(path, std::ios::trunc) << std::string(5000, 'x');
  chmod(path.c_str(), 0600);
  EXPECT_NE(read_cs_password(path).error().message().find("larger than 4096 bytes"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// ---- what is shared -------------------------------------------------------------------

EventRecord banned(const std::string& address, uint64_t ns, const std::string& cls = "web") {
  EventRecord r;
  r.type = LV_EV_BANNED;
  r.time_unix_ns = kConfigNow;
  r.address = address;
  r.class_name = cls;
  r.value = ns;
  r.count = 1;
  return r;
}

TEST(CrowdsecPublish, OnlyEnforcedBansOfAtLeastTheMinimumAreShared) {
  const auto b = daemon::ban_to_share(banned("198.18.0.7", 120 * kSec), 60 * kSec);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->value, "198.18.0.7");
  EXPECT_FALSE(b->range);
  EXPECT_EQ(b->scenario, "levee/web");
  EXPECT_EQ(b->until_unix_ns, kConfigNow + 120 * kSec);
  EXPECT_EQ(b->duration_ns, 120 * kSec);
  // A class keying a network bans the network: scope Range.
  const auto n = daemon::ban_to_share(banned("2001:db8:1::/64", 60 * kSec), 60 * kSec);
  ASSERT_TRUE(n);
  EXPECT_TRUE(n->range);

  EXPECT_FALSE(daemon::ban_to_share(banned("198.18.0.7", 59 * kSec), 60 * kSec)) << "shorter than the minimum";
  EventRecord monitor = banned("198.18.0.7", 120 * kSec);
  monitor.monitor = true;
  EXPECT_FALSE(daemon::ban_to_share(monitor, 60 * kSec)) << "a monitor class bans nothing";
  for (unsigned type : {LV_EV_LIMITED, LV_EV_BAN_ENDED, LV_EV_ADMISSION, LV_EV_ESCALATED}) {
    EventRecord r = banned("198.18.0.7", 120 * kSec);
    r.type = type;
    EXPECT_FALSE(daemon::ban_to_share(r, 60 * kSec)) << type;
  }
}

TEST(CrowdsecPublish, AlertsAreWhatTheLocalApiTakes) {
  const CsBan ip{"198.18.0.7", false, "levee/web", kConfigNow + 120 * kSec, 120 * kSec};
  const CsBan net{"2001:db8:1::/64", true, "levee/dns", kConfigNow + 600 * kSec, 600 * kSec};
  const CsBan ending{"198.18.0.8", false, "levee/web", kConfigNow + kSec / 2, 60 * kSec};
  const uint64_t now = kConfigNow + 200'000'000;  // 0.2 s after the bans began
  const CsAlerts a = cs_alerts({ip, net, ending}, now);
  EXPECT_EQ(a.alerts, 2u) << "a ban with less than a second left is not sent";
  const nlohmann::json j = nlohmann::json::parse(a.body);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  const nlohmann::json& first = j[0];
  EXPECT_EQ(first["scenario"], "levee/web");
  for (const char* k : {"scenario_hash", "scenario_version", "leakspeed", "message"})
    EXPECT_TRUE(first[k].is_string()) << k;
  EXPECT_EQ(first["events"], nlohmann::json::array()) << "LAPI refuses an alert without events";
  EXPECT_EQ(first["simulated"], false);
  EXPECT_EQ(first["start_at"], "2026-01-01T00:00:00.200Z");
  EXPECT_EQ(first["stop_at"], first["start_at"]) << "LAPI's expiry is stop_at + duration";
  EXPECT_EQ(first["source"], (nlohmann::json{{"scope", "Ip"}, {"value", "198.18.0.7"}}));
  ASSERT_EQ(first["decisions"].size(), 1u);
  EXPECT_EQ(first["decisions"][0], (nlohmann::json{{"duration", "119800ms"},
                                                   {"origin", "crowdsec"},
                                                   {"scenario", "levee/web"},
                                                   {"scope", "Ip"},
                                                   {"type", "ban"},
                                                   {"value", "198.18.0.7"}}));
  EXPECT_EQ(j[1]["source"]["scope"], "Range") << "scopes are case-sensitive in LAPI";
  EXPECT_EQ(j[1]["decisions"][0]["scope"], "Range");
  EXPECT_EQ(j[1]["decisions"][0]["duration"], "599800ms");
  EXPECT_EQ(parse_go_duration("599800ms"), 599'800'000'000) << "what levee reads, LAPI reads";
  EXPECT_EQ(cs_alerts({}, now).body, "[]");
}

TEST(CrowdsecPublish, LoginReplyAndBody) {
  auto l = parse_cs_login(R"({"code":200,"expire":"2026-01-01T01:00:00Z","token":"eyJ.x.y"})");
  ASSERT_TRUE(l.ok()) << l.error().message();
  EXPECT_EQ(l->token, "eyJ.x.y");
  EXPECT_EQ(l->expire_unix_ns, kConfigNow + 3600 * kSec);
  EXPECT_FALSE(parse_cs_login(R"({"code":200,"expire":"x"})").ok());
  EXPECT_FALSE(parse_cs_login("not json").ok());
  EXPECT_EQ(parse_cs_login(R"({"token":"t","expire":"garbage"})")->expire_unix_ns, 0u);
  // The token goes into a header: a line break there would write another header.
  EXPECT_EQ(parse_cs_login(R"({"token":"t\r\nX-Evil: 1"})").error().message(),
            "the Local API's login reply has a token of other than printable characters; is the url that of a "
            "CrowdSec Local API?");
  EXPECT_FALSE(parse_cs_login(R"({"token":"a b"})").ok());
  EXPECT_EQ(nlohmann::json::parse(cs_login_json("edge-1", "pw\"x")),
            (nlohmann::json{{"machine_id", "edge-1"}, {"password", "pw\"x"}, {"scenarios", nlohmann::json::array()}}));
}

// ---- the queue ----------------------------------------------------------------------

CsBan ban(int i, uint64_t until = kConfigNow + 3600 * kSec) {
  return {fmt::format("198.18.1.{}", i), false, "levee/web", until, 3600 * kSec};
}

TEST(CrowdsecPublishQueue, HoldsAtMostItsCapDroppingAndCountingTheOldest) {
  CsBanQueue q(3);
  for (int i = 1; i <= 5; ++i) q.push(ban(i));
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.dropped(), 2u);
  const CsBanQueue::Batch b = q.front(10);
  ASSERT_EQ(b.bans.size(), 3u);
  EXPECT_EQ(b.bans[0].value, "198.18.1.3") << "the oldest went first";
  EXPECT_EQ(b.bans[2].value, "198.18.1.5");
  q.set_cap(1);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.dropped(), 4u);
}

TEST(CrowdsecPublishQueue, ABatchInFlightIsTakenOffByNumberAndOnlyOnce) {
  CsBanQueue q(3);
  q.push(ban(1));
  q.push(ban(2));
  const CsBanQueue::Batch sent = q.front(2);  // in flight
  // Meanwhile: three more, one of which pushes ban 1 out.
  q.push(ban(3));
  q.push(ban(4));
  EXPECT_EQ(q.dropped(), 1u);
  q.pop_through(sent.last);  // accepted: 1 (already gone) and 2
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q.front(1).bans[0].value, "198.18.1.3") << "nothing sent twice, nothing unsent lost";
  q.pop_through(sent.last);
  EXPECT_EQ(q.size(), 2u) << "a repeated acknowledgement takes nothing more";
}

TEST(CrowdsecPublishQueue, BansThatEndWhileTheyWaitAreRemovedAndCounted) {
  CsBanQueue q(10);
  q.push(ban(1, kConfigNow + 10 * kSec));
  q.push(ban(2, kConfigNow + 100 * kSec));
  q.push(ban(3, kConfigNow + 10 * kSec + kSec / 2));
  EXPECT_EQ(q.expire(kConfigNow + 10 * kSec), 2u) << "ended, or less than a second left";
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q.front(1).bans[0].value, "198.18.1.2");
  EXPECT_EQ(q.dropped(), 0u) << "counted apart from a full queue's";
}

}  // namespace
}  // namespace levee
