// events_test.cpp - the event log without the kernel: times as RFC 3339 from the
// datapath's clock, events decoded with their class and address as the class keys it,
// ban ends found from successive reads of the ban records, the JSON; and the budget of
// [interface] events_per_second that compile() gives lv_policy.events: on by default,
// overridable, off with 0 or "off".
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "export/events.hpp"
#include "policy/class_ids.hpp"
#include "policy/compile.hpp"
#include "policy/config.hpp"
#include "policy/policy.hpp"
#include "unit.hpp"

namespace levee {
namespace {

constexpr uint64_t kNow = 5'000 * kSec;  // CLOCK_MONOTONIC, well after boot

TEST(Events, TimesAreRfc3339WithMilliseconds) {
  EXPECT_EQ(format_time(1'767'225'600'123'456'789ull, TimeDigits::Millis), "2026-01-01T00:00:00.123Z");
  EXPECT_EQ(format_time(1'767'225'600'000'000'000ull, TimeDigits::Millis), "2026-01-01T00:00:00.000Z");
  const Clocks c{0, 1'767'225'600 * kSec, 1000 * kSec};
  EXPECT_EQ(c.to_unix(1000 * kSec + 5 * kMs), 1'767'225'600 * kSec + 5 * kMs);
  EXPECT_EQ(c.to_unix(999 * kSec), 1'767'225'599 * kSec);  // before the reading, too
  // One reading of both clocks: monotonic now maps to about the wall clock now.
  const Clocks now = Clocks::read();
  const Clocks again = Clocks::read();
  const int64_t skew = static_cast<int64_t>(now.to_unix(again.now_mono_ns) - again.now_unix_ns);
  EXPECT_LT(std::llabs(skew), static_cast<long long>(5 * kMs));
}

// An event as the datapath writes it: at time_ns, about the source of `key`, for a drop
// for rate in class `class_id`.
lv_event event_of(uint64_t time_ns, const lv_key& key, uint8_t type, uint8_t class_id) {
  lv_event e{};
  e.time_ns = time_ns;
  std::memcpy(e.addr, key.addr, sizeof e.addr);
  e.type = type;
  e.family = key.family;
  e.class_id = class_id;
  e.reason = LV_R_RATE;
  return e;
}

TEST(Events, DecodeNamesTheClassAndMasksTheAddress) {
  Policy p;
  ClassSpec syn;
  syn.name = "ssh-syn";
  syn.match.protos = {Proto::Tcp};
  syn.match.syn = true;
  syn.packets = {2, 10};
  syn.prefix4 = 24;
  ClassSpec def;
  def.name = "default";
  def.packets = {100, 10};
  def.ban.ban_ns = 2 * kSec;
  p.classes = {syn, def};
  const lv_policy slot = compile(p, Clocks::read()).slot;
  const Clocks clocks{0, 1'767'225'600 * kSec, 1000 * kSec};

  lv_event e = event_of(1000 * kSec + 250 * kMs, v4_key("198.18.7.0"), LV_EV_LIMITED, class_order(slot)[0]);
  e.suppressed = 3;
  EventRecord r = decode_event(e, slot, clocks, "eth0");
  EXPECT_EQ(r.address, "198.18.7.0/24");
  EXPECT_EQ(r.class_name, "ssh-syn");
  nlohmann::json j = event_json(r);
  EXPECT_EQ(j, (nlohmann::json{{"time", "2026-01-01T00:00:00.250Z"},
                               {"interface", "eth0"},
                               {"type", "limited"},
                               {"address", "198.18.7.0/24"},
                               {"class", "ssh-syn"},
                               {"reason", "rate"},
                               {"suppressed", 3}}));
  EXPECT_EQ(
      event_text(r),
      "2026-01-01T00:00:00.250Z eth0 limited 198.18.7.0/24 class ssh-syn reason rate (3 events suppressed before)");

  lv_event b = event_of(1000 * kSec, v6_key("2001:db8:5::"), LV_EV_BANNED, class_order(slot)[1]);
  b.count = 2;
  b.value = 4 * kSec;
  nlohmann::json bj = event_json(decode_event(b, slot, clocks, "eth0"));
  EXPECT_EQ(bj["type"], "banned");
  EXPECT_EQ(bj["address"], "2001:db8:5::/64");
  EXPECT_EQ(bj["class"], "default");
  EXPECT_EQ(bj["duration_ms"], 4000);
  EXPECT_EQ(bj["offences"], 2);
  EXPECT_EQ(bj["scope"], "class");
  EXPECT_EQ(bj["suppressed"], 0);

  b.class_id = 40;  // no class has it now
  b.type = LV_EV_ADMISSION;
  nlohmann::json aj = event_json(decode_event(b, slot, clocks, "eth0"));
  EXPECT_TRUE(aj["class"].is_null());
  EXPECT_EQ(aj["address"], "2001:db8:5::");  // no class prefix known: as a host
  EXPECT_FALSE(aj.contains("duration_ms"));

  // SYN authentication's: the network of [syn_auth]'s prefix, and its answer rate.
  lv_event s = event_of(1000 * kSec, v4_key("198.18.9.0"), LV_EV_ANSWER_LIMITED, class_order(slot)[0]);
  s.reason = LV_R_ANSWER_LIMIT;
  s.value = 1000;
  const EventRecord sr = decode_event(s, slot, clocks, "eth0");
  EXPECT_EQ(sr.address, "198.18.9.0/24");
  EXPECT_EQ(event_json(sr)["limit_pps"], 1000);
  EXPECT_EQ(event_text(sr),
            "2026-01-01T00:00:00.000Z eth0 answer_limited 198.18.9.0/24 class ssh-syn reason answer_limit: SYN-ACKs "
            "towards this network over 1,000/s: SYNs from it refused an answer");
}

TEST(Events, BanEndsFromSuccessiveReads) {
  const lv_key a = v4_key("198.18.0.7"), b = v4_key("198.18.0.8"), c = v4_key("198.18.0.9");
  auto ban = [](uint64_t since, uint64_t until) {
    lv_ban x{};
    x.since_ns = since;
    x.until_ns = until;
    x.duration_ns = until - since;
    x.offences = 1;
    return x;
  };
  BanEnds ends;
  // First read: learns what bans now (a, b); c's ban is over already: never reported.
  EXPECT_TRUE(ends.update({{a, ban(kNow - kSec, kNow + kSec)},
                           {b, ban(kNow, kNow + 5 * kSec)},
                           {c, ban(kNow - 9 * kSec, kNow - 7 * kSec)}},
                          kNow)
                  .empty());
  EXPECT_EQ(ends.tracked(), 2u);
  // One second later: a's ban ran out at its until; b was extended and still bans.
  auto e1 = ends.update(
      {{a, ban(kNow - kSec, kNow + kSec)}, {b, ban(kNow, kNow + 9 * kSec)}, {c, ban(kNow - 9 * kSec, kNow - 7 * kSec)}},
      kNow + 2 * kSec);
  ASSERT_EQ(e1.size(), 1u);
  EXPECT_TRUE(std::memcmp(&e1[0].key, &a, sizeof a) == 0);
  EXPECT_EQ(e1[0].at_ns, kNow + kSec);
  EXPECT_FALSE(e1[0].lifted);
  // b's record disappears before its end: lifted (levee unban), reported at the read.
  auto e2 = ends.update({}, kNow + 3 * kSec);
  ASSERT_EQ(e2.size(), 1u);
  EXPECT_TRUE(e2[0].lifted);
  EXPECT_EQ(e2[0].at_ns, kNow + 3 * kSec);
  EXPECT_EQ(ends.tracked(), 0u);
  // A ban that ended and a new one that began between two reads: the first is reported.
  ends.update({{a, ban(kNow + 10 * kSec, kNow + 11 * kSec)}}, kNow + 10 * kSec);
  auto e3 = ends.update({{a, ban(kNow + 12 * kSec, kNow + 14 * kSec)}}, kNow + 13 * kSec);
  ASSERT_EQ(e3.size(), 1u);
  EXPECT_EQ(e3[0].at_ns, kNow + 11 * kSec);
  EXPECT_EQ(ends.tracked(), 1u);
}

TEST(Events, BanEndedJson) {
  const lv_policy p = two_class_policy();
  const uint8_t dns = class_order(p)[0];
  BanEnds::Ended e{v4_key("198.18.0.7", dns), {}, 1000 * kSec, false};
  e.ban.class_id = dns;
  e.ban.duration_ns = 2 * kSec;
  e.ban.offences = 1;
  const Clocks clocks{0, 1'767'225'600 * kSec, 1000 * kSec};
  nlohmann::json j = event_json(decode_ban_end(e, p, clocks, "eth0"));
  EXPECT_EQ(j["type"], "ban_ended");
  EXPECT_EQ(j["time"], "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(j["class"], "dns");
  EXPECT_TRUE(j["reason"].is_null());
  EXPECT_EQ(j["duration_ms"], 2000);
  EXPECT_EQ(j["offences"], 1);
  EXPECT_EQ(j["lifted"], false);
}

// ---- the event budget: [interface] events_per_second --------------------------------

lv_limit events_of(const Policy& p) { return compile(p, Clocks::read()).slot.events; }

TEST(EventsConfig, DefaultIsOneHundredPerSecondBurstOneHundred) {
  const lv_limit l = events_of(parse_ok(kDefault));
  EXPECT_EQ(l.rate, 100u);
  EXPECT_EQ(l.burst, 100u);
  EXPECT_EQ(l.cost, 10'000'000u);  // 10 ms between events
  EXPECT_EQ(l.tau_ns, 99u * 10'000'000u);
  // The --rate shorthand's policy gets it too.
  EXPECT_EQ(events_of(one_class_policy(Limits{500, 50, 32, 64})).rate, 100u);
}

TEST(EventsConfig, KeyOverridesAndBurstIsCapped) {
  EXPECT_EQ(events_of(parse_ok("[interface]\nevents_per_second = 20\n" + kDefault)).burst, 20u);
  EXPECT_EQ(events_of(parse_ok("[interface]\nevents_per_second = 20\n" + kDefault)).cost, 50'000'000u);
  const lv_limit big = events_of(parse_ok("[interface]\nevents_per_second = \"50k\"\n" + kDefault));
  EXPECT_EQ(big.rate, 50'000u);
  EXPECT_EQ(big.burst, kMaxEventsBurst);
}

TEST(EventsConfig, ZeroOrOffSendsNone) {
  for (const char* v : {"0", "\"off\""}) {
    SCOPED_TRACE(v);
    const Policy p = parse_ok(std::string("[interface]\nevents_per_second = ") + v + "\n" + kDefault);
    EXPECT_EQ(p.iface.events_per_second, 0u);
    EXPECT_EQ(events_of(p).cost, 0u);
  }
  // Not a setting of the attachment: a reload applies it, with no note.
  EXPECT_FALSE(parse_ok("[interface]\nevents_per_second = 0\n" + kDefault).iface.attach_only());
}

TEST(EventsConfig, BadValuesNameTheKey) {
  for (const char* v : {"\"fast\"", "-1", "200001", "true"}) {
    SCOPED_TRACE(v);
    auto r = parse_config(std::string("[interface]\nevents_per_second = ") + v + "\n" + kDefault, "t.toml");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message().find("t.toml:2: interface.events_per_second"), std::string::npos)
        << r.error().message();
  }
}

TEST(EventsConfig, ReloadCompilesTheFileValue) {
  const Policy first = parse_ok(kDefault);
  const CompiledPolicy a = compile(first, Clocks::read());
  const Policy second = parse_ok("[interface]\nevents_per_second = \"off\"\n" + kDefault);
  EXPECT_EQ(compile(second, Clocks::read(), &a.slot).slot.events.cost, 0u);
}

}  // namespace
}  // namespace levee
