// events_config_test.cpp - [interface] events_per_second and the event budget compile()
// gives lv_policy.events: on by default, overridable, off with 0 or "off".
#include <gtest/gtest.h>

#include <string>

#include "policy/compile.hpp"
#include "policy/config.hpp"
#include "policy/policy.hpp"

namespace levee {
namespace {

const std::string kDefault = "[default]\nrate = 100\nburst = 10\n";

Policy parse_ok(const std::string& text) {
  auto r = parse_config(text, "t.toml");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message()) << "\n--- in:\n" << text;
  return r.ok() ? r.value() : Policy{};
}

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
