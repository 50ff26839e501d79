// crowdsec_test.cpp - levee as a CrowdSec bouncer, its pure parts: the [crowdsec] table,
// the key file, the decision stream's JSON (Go durations, null lists, bad entries), the
// filters, and what the bouncer holds after each pull (policy/crowdsec*.hpp).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "daemon/crowdsec_held.hpp"
#include "daemon/crowdsec_stream.hpp"
#include "daemon/error_fold.hpp"
#include "unit.hpp"

namespace levee {
namespace {

Cidr net(const char* s) { return Cidr::parse(s).value(); }

std::string config_error(const std::string& crowdsec) {
  auto r = parse_config(kDefault + "[crowdsec]\n" + crowdsec, "t.toml", kConfigNow);
  return r.ok() ? "(accepted)" : r.error().message();
}

// ---- [crowdsec] -----------------------------------------------------------------

TEST(CrowdsecConfig, EveryKeyAndTheDefaults) {
  Policy p = parse_ok(kDefault + R"([crowdsec]
url = "http://127.0.0.1:8080"
api_key_file = "/etc/levee/crowdsec.key"
)");
  ASSERT_TRUE(p.crowdsec.enabled);
  EXPECT_EQ(p.crowdsec.host, "127.0.0.1");
  EXPECT_EQ(p.crowdsec.port, 8080);
  EXPECT_EQ(p.crowdsec.poll_ns, kSec);
  EXPECT_EQ(p.crowdsec.timeout_ns, 30 * kSec);
  EXPECT_EQ(p.crowdsec.types, std::vector<std::string>{"ban"});
  EXPECT_TRUE(p.crowdsec.origins.empty());

  p = parse_ok(kDefault + R"([crowdsec]
url = "http://[::1]:9090/"
api_key_file = "/k"
poll = "250ms"
timeout = "5s"
origins = ["crowdsec", "cscli"]
scenarios_containing = ["ssh"]
scenarios_not_containing = ["http"]
supported_decisions_types = ["ban", "captcha"]
)");
  EXPECT_EQ(p.crowdsec.host, "::1");
  EXPECT_EQ(p.crowdsec.port, 9090);
  EXPECT_EQ(p.crowdsec.poll_ns, 250 * kMs);
  EXPECT_EQ(p.crowdsec.timeout_ns, 5 * kSec);
  EXPECT_EQ(p.crowdsec.origins, (std::vector<std::string>{"crowdsec", "cscli"}));
  EXPECT_EQ(p.crowdsec.scenarios_containing, std::vector<std::string>{"ssh"});
  EXPECT_EQ(p.crowdsec.scenarios_not_containing, std::vector<std::string>{"http"});
  EXPECT_EQ(p.crowdsec.types, (std::vector<std::string>{"ban", "captcha"}));
  EXPECT_FALSE(parse_ok(kDefault).crowdsec.enabled);
}

TEST(CrowdsecConfig, EachMistakeIsOneLineNamingTheKey) {
  const std::string key = "api_key_file = \"/k\"\n";
  EXPECT_EQ(config_error(key),
            R"(t.toml:4: crowdsec.url: missing; give the Local API's address, e.g. url = "http://127.0.0.1:8080")");
  EXPECT_EQ(config_error("url = \"http://h:1\"\n"),
            "t.toml:4: crowdsec.api_key_file: missing; give the file holding the key of `cscli bouncers add levee`, "
            "e.g. /etc/levee/crowdsec.key");
  EXPECT_NE(config_error(key + "url = \"https://h:1\"\n")
                .find("t.toml:6: crowdsec.url: 'https://h:1': https is not "
                      "supported"),
            std::string::npos)
      << config_error(key + "url = \"https://h:1\"\n");
  EXPECT_NE(config_error(key + "url = \"h:1\"\n").find("crowdsec.url: 'h:1' is not an http:// URL"), std::string::npos);
  EXPECT_NE(config_error(key + "url = \"http://h:99999\"\n").find("has no valid port"), std::string::npos);
  EXPECT_NE(config_error(key + "url = \"http://h/path:1\"\n").find("is not a host and port"), std::string::npos);
  EXPECT_NE(config_error("url = \"http://h:1\"\napi_key_file = \"k\"\n")
                .find("crowdsec.api_key_file: 'k' is not an "
                      "absolute path"),
            std::string::npos);
  EXPECT_NE(config_error(key + "url = \"http://h:1\"\npoll = \"10ms\"\n")
                .find("crowdsec.poll: 10ms is out of range; "
                      "give 100ms to 1m"),
            std::string::npos);
  EXPECT_EQ(config_error(key + "url = \"http://h:1\"\ntimeout = \"500ms\"\n"),
            "t.toml:7: crowdsec.timeout: 500ms is out of range; give 1s to 10m");
  EXPECT_EQ(config_error(key + "url = \"http://h:1\"\ntimeout = \"11m\"\n"),
            "t.toml:7: crowdsec.timeout: 11m is out of range; give 1s to 10m");
  EXPECT_NE(config_error(key + "url = \"http://h:1\"\norigins = []\n").find("crowdsec.origins: empty array"),
            std::string::npos);
  EXPECT_NE(config_error(key + "url = \"http://h:1\"\norigins = [\"\"]\n").find("crowdsec.origins[0]: empty string"),
            std::string::npos);
  EXPECT_NE(config_error(key + "url = \"http://h:1\"\nscenario = [\"x\"]\n").find("crowdsec"), std::string::npos)
      << "unknown keys are errors";
  EXPECT_EQ(config_error(key + "url = \"http://h:1\"\n"), "(accepted)");
}

// What starts the bouncer or the publisher again on SIGHUP: their own settings only.
TEST(CrowdsecConfig, SamePullAndSamePublishCompareOnlyTheirOwnSettings) {
  const std::string base = kDefault + "[crowdsec]\nurl = \"http://h:1\"\napi_key_file = \"/k\"\n";
  const Policy a = parse_ok(base + "publish = true\nmachine_id = \"m\"\nmachine_password_file = \"/p\"\n");
  const auto with = [&](const std::string& extra) {
    return parse_ok(base + extra + "publish = true\nmachine_id = \"m\"\nmachine_password_file = \"/p\"\n").crowdsec;
  };
  EXPECT_TRUE(same_pull(a.crowdsec, with("")));
  EXPECT_TRUE(same_publish(a.crowdsec, with("")));
  CrowdsecSpec moved = with("");
  moved.api_key_file = "/elsewhere";
  moved.machine_password_file = "/elsewhere";
  EXPECT_TRUE(same_pull(a.crowdsec, moved)) << "a key file's path is not a setting: its content is";
  EXPECT_TRUE(same_publish(a.crowdsec, moved));
  EXPECT_FALSE(same_pull(a.crowdsec, with("poll = \"2s\"\n")));
  EXPECT_TRUE(same_publish(a.crowdsec, with("poll = \"2s\"\n")));
  EXPECT_FALSE(same_pull(a.crowdsec, with("origins = [\"cscli\"]\n")));
  EXPECT_FALSE(same_pull(a.crowdsec, with("timeout = \"5s\"\n")));
  EXPECT_FALSE(same_publish(a.crowdsec, with("timeout = \"5s\"\n")));
  const CrowdsecSpec min_ban =
      parse_ok(base + "publish = true\nmachine_id = \"m\"\nmachine_password_file = \"/p\"\npublish_min_ban = \"2m\"\n")
          .crowdsec;
  EXPECT_TRUE(same_pull(a.crowdsec, min_ban));
  EXPECT_FALSE(same_publish(a.crowdsec, min_ban));
}

// ---- the key file ------------------------------------------------------------------

class CrowdsecKey : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / fmt::format("lv-cskey-{}", getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& text, mode_t mode) {
    const std::string path = dir_ / "key";
    std::ofstream(path, std::ios::trunc) << text;
    chmod(path.c_str(), mode);
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(CrowdsecKey, ReadsOneWordTrimmedAndRefusesTheRest) {
  auto k = read_cs_key(write("  abc123XYZ\n", 0600));
  ASSERT_TRUE(k.ok()) << k.error().message();
  EXPECT_EQ(*k, "abc123XYZ");
  EXPECT_NE(read_cs_key(write("", 0600)).error().message().find("is empty"), std::string::npos);
  EXPECT_NE(read_cs_key(write("\n \n", 0600)).error().message().find("is empty"), std::string::npos);
  EXPECT_NE(read_cs_key(write("two words", 0600)).error().message().find("more than one printable word"),
            std::string::npos);
  EXPECT_NE(read_cs_key(write("k", 0644)).error().message().find("readable by everyone; chmod 600"), std::string::npos);
  EXPECT_NE(read_cs_key(write(std::string(kMaxCsKeyBytes + 1, 'a'), 0600)).error().message().find("larger than"),
            std::string::npos);
  EXPECT_NE(read_cs_key((dir_ / "none").string()).error().message().find("cannot open the CrowdSec key file"),
            std::string::npos);
  EXPECT_NE(read_cs_key(dir_.string()).error().message().find("is a directory, not a regular file"), std::string::npos);
}

// ---- Go durations and the stream -----------------------------------------------------

TEST(CrowdsecStream, GoDurations) {
  EXPECT_EQ(parse_go_duration("3h59m59.64s"), int64_t{(3 * 3600 + 59 * 60 + 59) * 1'000'000'000LL + 640'000'000});
  EXPECT_EQ(parse_go_duration("59.3s"), int64_t{59'300'000'000});
  EXPECT_EQ(parse_go_duration("-1h2m3.5s"), int64_t{-3'723'500'000'000});
  EXPECT_EQ(parse_go_duration("1.5ms"), int64_t{1'500'000});
  EXPECT_EQ(parse_go_duration("300us"), int64_t{300'000});
  EXPECT_EQ(parse_go_duration("300\xc2\xb5s"), int64_t{300'000});
  EXPECT_EQ(parse_go_duration("7ns"), int64_t{7});
  EXPECT_EQ(parse_go_duration("0"), int64_t{0});
  EXPECT_EQ(parse_go_duration(".5s"), int64_t{500'000'000});
  for (const char* bad : {"", "-", "1", "1d", "s", "1.s.", "1h-2m", " 1s", "1s ", "99999999999999999999h", "."})
    EXPECT_FALSE(parse_go_duration(bad).has_value()) << bad;
}

TEST(CrowdsecStream, EntriesNullListsAndBadEntriesSkippedAndCounted) {
  auto s = parse_cs_stream(R"({"deleted":null,"new":null})");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_TRUE(s->added.empty() && s->deleted.empty());
  EXPECT_EQ(s->skipped, 0u);

  s = parse_cs_stream(R"({"new":[
    {"duration":"59.3s","id":3,"origin":"cscli","scenario":"manual 'ban' from 'x'","scope":"Ip","type":"ban","value":"2001:db8::5"},
    {"duration":"4h","id":4,"origin":"crowdsec","scenario":"crowdsecurity/ssh-bf","scope":"Range","type":"ban","value":"198.18.5.0/24"},
    {"duration":"4h","id":5,"origin":"crowdsec","scope":"Country","type":"ban","value":"FR"},
    {"duration":"4h","id":6,"scope":"Ip","type":"ban","value":"198.18.0.0/16"},
    {"duration":"4h","id":7,"scope":"Ip","type":"ban","value":"not an address"},
    {"duration":"4 hours","id":8,"scope":"Ip","type":"ban","value":"198.18.0.1"},
    {"duration":"4h","id":9,"scope":"Range","type":"ban","value":"0.0.0.0/0"},
    {"duration":"4h","id":10,"scope":"ip","type":"ban","value":"198.18.0.2"},
    {"id":11,"scope":"Ip","type":"ban","value":"198.18.0.3"},
    42,
    {"duration":"4h","id":12,"scope":"Range","type":"ban","value":"198.18.1.1/24"}],
   "deleted":[{"duration":"-2m3.4s","id":1,"origin":"cscli","scenario":"x","scope":"Ip","type":"ban","value":"198.18.0.9"}]})");
  ASSERT_TRUE(s.ok()) << s.error().message();
  ASSERT_EQ(s->added.size(), 2u);
  EXPECT_EQ(s->added[0].net, net("2001:db8::5/128"));
  EXPECT_EQ(s->added[0].id, 3u);
  EXPECT_EQ(s->added[0].duration_ns, int64_t{59'300'000'000});
  EXPECT_EQ(s->added[0].origin, "cscli");
  EXPECT_EQ(s->added[0].type, "ban");
  EXPECT_EQ(s->added[1].net, net("198.18.5.0/24"));
  EXPECT_EQ(s->added[1].scenario, "crowdsecurity/ssh-bf");
  ASSERT_EQ(s->deleted.size(), 1u);
  EXPECT_EQ(s->deleted[0].duration_ns, int64_t{-123'400'000'000});
  EXPECT_EQ(s->skipped, 9u) << "Country, an Ip with a prefix, a bad address, a bad duration, /0, scope 'ip', "
                               "no duration, not an object, host bits set";
}

TEST(CrowdsecStream, ARepliesThatIsNotTheStreamIsAnError) {
  for (const char* bad : {"", "nope", "[]", "null", R"({"new":{}})", R"({"new":[],"deleted":"x"})", "{\"new\":["})
    EXPECT_FALSE(parse_cs_stream(bad).ok()) << bad;
  EXPECT_TRUE(parse_cs_stream("{}").ok());
}

// ---- filters -------------------------------------------------------------------------

TEST(CrowdsecFilter, TypesOriginsAndScenarios) {
  CrowdsecSpec spec;
  CsDecision d;
  d.type = "ban";
  d.origin = "crowdsec";
  d.scenario = "crowdsecurity/ssh-bf";
  EXPECT_TRUE(cs_wanted(spec, d));
  d.type = "captcha";
  EXPECT_FALSE(cs_wanted(spec, d)) << "only bans by default";
  spec.types = {"ban", "captcha"};
  EXPECT_TRUE(cs_wanted(spec, d));
  spec.origins = {"cscli", "CAPI"};
  EXPECT_FALSE(cs_wanted(spec, d));
  spec.origins.push_back("crowdsec");
  EXPECT_TRUE(cs_wanted(spec, d));
  spec.scenarios_containing = {"http"};
  EXPECT_FALSE(cs_wanted(spec, d));
  spec.scenarios_containing = {"http", "ssh"};
  EXPECT_TRUE(cs_wanted(spec, d));
  spec.scenarios_not_containing = {"-bf"};
  EXPECT_FALSE(cs_wanted(spec, d));
}

// ---- what is held after each pull ---------------------------------------------------------

CsDecision dec(uint64_t id, const char* cidr, int64_t seconds, const char* type = "ban") {
  CsDecision d;
  d.id = id;
  d.net = net(cidr);
  d.duration_ns = seconds * static_cast<int64_t>(kSec);
  d.type = type;
  d.origin = "cscli";
  return d;
}

constexpr uint64_t kNow = 1000 * kSec;

TEST(CrowdsecHeld, StartupHoldsWhatIsInForceAndReconcilesTheRest) {
  CsHeldSet h;
  const CrowdsecSpec spec;
  CsStream s;
  s.added = {dec(1, "198.18.0.1/32", 60), dec(2, "198.18.1.0/24", 60), dec(3, "2001:db8::1/128", 60),
             dec(4, "198.18.0.2/32", 60, "captcha"), dec(5, "198.18.0.3/32", -1)};
  s.deleted = {dec(6, "198.18.0.1/32", -5)};  // an older decision of a held address: nothing
  CsPlan p = h.plan(spec, s, true, kNow);
  ASSERT_EQ(p.put.size(), 3u);
  EXPECT_TRUE(p.remove.empty());
  EXPECT_EQ(h.size(), 3u);
  EXPECT_EQ(p.put[0].value.expires_ns, kNow + 60 * kSec);
  CsCounts c = h.counts();
  EXPECT_EQ(c.n[0][0], 1u);
  EXPECT_EQ(c.n[0][1], 1u);
  EXPECT_EQ(c.n[1][0], 1u);

  // Again, later (a reconnect): the same decisions are not written again; one the Local
  // API no longer has is removed; a new id for a held network is written.
  s.added = {dec(1, "198.18.0.1/32", 50), dec(7, "2001:db8::1/128", 90)};
  s.deleted.clear();
  p = h.plan(spec, s, true, kNow + 10 * kSec);
  ASSERT_EQ(p.put.size(), 1u);
  EXPECT_EQ(p.put[0].net, net("2001:db8::1/128"));
  EXPECT_EQ(p.put[0].value.id, 7u);
  ASSERT_EQ(p.remove.size(), 1u);
  EXPECT_EQ(p.remove[0], net("198.18.1.0/24"));
  EXPECT_EQ(h.size(), 2u);
}

TEST(CrowdsecHeld, IncrementalDeletesOnlyTheDecisionHeldAndIgnoresTheRest) {
  CsHeldSet h;
  const CrowdsecSpec spec;
  CsStream s;
  s.added = {dec(1, "198.18.0.1/32", 60), dec(2, "198.18.0.2/32", 60)};
  h.plan(spec, s, true, kNow);
  s.added.clear();
  s.deleted = {dec(9, "198.18.0.1/32", -1), dec(2, "198.18.0.2/32", -1), dec(3, "198.18.0.3/32", -1),
               dec(2, "198.18.0.2/32", -1)};  // repeated, as the stream does
  CsPlan p = h.plan(spec, s, false, kNow + kSec);
  EXPECT_TRUE(p.put.empty());
  ASSERT_EQ(p.remove.size(), 1u);
  EXPECT_EQ(p.remove[0], net("198.18.0.2/32"));
  EXPECT_EQ(h.size(), 1u);

  // Deleted and added again in one reply: written, not removed.
  s.deleted = {dec(1, "198.18.0.1/32", -1)};
  s.added = {dec(5, "198.18.0.1/32", 30)};
  p = h.plan(spec, s, false, kNow + 2 * kSec);
  EXPECT_TRUE(p.remove.empty());
  ASSERT_EQ(p.put.size(), 1u);
  EXPECT_EQ(p.put[0].value.id, 5u);
  EXPECT_EQ(p.put[0].value.expires_ns, kNow + 32 * kSec);
}

TEST(CrowdsecHeld, ExpiredEntriesLeaveAndAdoptionStartsFromTheMaps) {
  CsHeldSet h;
  h.adopt(std::vector<CsEntry>{CsEntry{net("198.18.0.1/32"), {kNow + kSec, 1}},
                               CsEntry{net("198.18.0.2/32"), {kNow + 5 * kSec, 2}}});
  EXPECT_TRUE(h.expire(kNow).empty());
  EXPECT_EQ(h.expire(kNow + kSec), std::vector<Cidr>{net("198.18.0.1/32")});
  EXPECT_TRUE(h.expire(kNow + 2 * kSec).empty());
  EXPECT_EQ(h.size(), 1u);
  // An adopted entry the startup pull does not have goes.
  CsStream s;
  CsPlan p = h.plan(CrowdsecSpec{}, s, true, kNow + 2 * kSec);
  EXPECT_EQ(p.remove, std::vector<Cidr>{net("198.18.0.2/32")});
  EXPECT_EQ(h.size(), 0u);
}

// Each map holds at most its cap: a new network of a full map is not held, only counted,
// what is held keeps its place, and room that frees up is taken by the next pull.
TEST(CrowdsecHeld, AFullMapHoldsWhatFitsAndCountsTheRest) {
  CsHeldSet h(2);
  const CrowdsecSpec spec;
  CsStream s;
  s.added = {dec(1, "198.18.0.1/32", 60), dec(2, "198.18.0.2/32", 60), dec(3, "198.18.0.3/32", 60),
             dec(4, "198.18.1.0/24", 60), dec(5, "2001:db8::1/128", 60)};
  CsPlan p = h.plan(spec, s, true, kNow);
  EXPECT_EQ(p.over, 1u) << "the third IPv4 address";
  EXPECT_EQ(p.put.size(), 4u);
  EXPECT_EQ(h.counts().n[0][0], 2u);
  EXPECT_EQ(h.counts().n[0][1], 1u) << "ranges have a map of their own";
  // Incremental: a new address of the full map is counted, one of another map is held.
  s.added = {dec(6, "198.18.0.6/32", 60), dec(7, "2001:db8::7/128", 60)};
  p = h.plan(spec, s, false, kNow + kSec);
  EXPECT_EQ(p.over, 1u);
  ASSERT_EQ(p.put.size(), 1u);
  EXPECT_EQ(p.put[0].net, net("2001:db8::7/128"));
  // A delete makes room, which the next new address takes.
  s.added.clear();
  s.deleted = {dec(1, "198.18.0.1/32", -1)};
  h.plan(spec, s, false, kNow + 2 * kSec);
  s.deleted.clear();
  s.added = {dec(8, "198.18.0.8/32", 60)};
  p = h.plan(spec, s, false, kNow + 3 * kSec);
  EXPECT_EQ(p.over, 0u);
  EXPECT_EQ(h.counts().n[0][0], 2u);
  // A startup pull keeps what the maps hold before it takes new networks.
  s.added = {dec(9, "198.18.0.0/32", 60), dec(2, "198.18.0.2/32", 60), dec(8, "198.18.0.8/32", 60)};
  p = h.plan(spec, s, true, kNow + 4 * kSec);
  EXPECT_EQ(p.over, 1u);
  EXPECT_TRUE(p.put.empty()) << "198.18.0.0 would have come first by address";
  EXPECT_EQ(h.counts().n[0][0], 2u);
}

// ---- what the bouncer and the publisher say ------------------------------------------

// A new error is said at once, whatever came before; the same one again is counted and
// said once per window, with its count; a success ends it.
TEST(ErrorFold, TheFirstOccurrenceAtOnceRepeatsFoldedPerWindow) {
  daemon::ErrorFold f(60 * kSec);
  const std::string big = "http://h:1/v1/decisions/stream: the reply is larger than 64 MiB, the most levee reads";
  EXPECT_EQ(f.error(big, 0), big);
  EXPECT_EQ(f.error(big, 1 * kSec), std::nullopt);
  EXPECT_EQ(f.error(big, 30 * kSec), std::nullopt);
  EXPECT_EQ(f.error(big, 60 * kSec), big + " (again; 2 more times in the last 1m)");
  EXPECT_EQ(f.error(big, 62 * kSec), std::nullopt);
  // Another error is news at once, and so is the first one again after it.
  EXPECT_EQ(f.error("cut short", 63 * kSec), "cut short");
  EXPECT_EQ(f.error(big, 64 * kSec), big);
  EXPECT_TRUE(f.failing());
  EXPECT_TRUE(f.recovered());
  EXPECT_FALSE(f.recovered());
  EXPECT_EQ(f.error(big, 65 * kSec), big) << "the first after a success is said";
  // Said again after the window with nothing folded: as it is.
  EXPECT_EQ(f.error(big, 200 * kSec), big);
}

}  // namespace
}  // namespace levee
