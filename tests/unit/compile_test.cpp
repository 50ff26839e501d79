// compile_test.cpp - userspace/policy/policy: what compile() makes of a policy for the
// datapath: each class's limits (admission, network and class totals, bans), its
// autopilot (lv_auto), their flags and leases, the policy's flags and monitor modes,
// validation of what the command line can get wrong, a class read back from the slot
// (its autopilot included), and the keys levee show and unban look up as the datapath
// builds them.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>

#include "policy/compile.hpp"
#include "policy/config.hpp"
#include "policy/keys.hpp"
#include "policy/policy.hpp"
#include "policy/validate.hpp"
#include "unit.hpp"

namespace levee {
namespace {

const Clocks kClocks{kTick, kConfigNow, 1000 * kSec};

ClassSpec spec(const std::string& name) {
  ClassSpec c;
  c.name = name;
  c.packets = {1000, 100};  // T = 1 ms, tau = 99 ms
  return c;
}

TEST(CompileLimits, AdmissionNetworkTotalAndTheirFlags) {
  ClassSpec c = spec("c");
  c.prefix4 = 32;
  c.prefix6 = 64;
  c.new_sources = {200, 20};
  c.network.prefix4 = 24;
  c.network.prefix6 = 48;
  c.network.packets = {10'000, 1'000};
  c.network.bytes = {1'000'000, 100'000};
  c.total.packets = {50'000, 5'000};
  const lv_class k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.admit.cost, 5'000'000u) << "1e9 / 200";
  EXPECT_EQ(k.admit.tau_ns, 19 * 5'000'000u);
  EXPECT_EQ(k.admit.rate, 200u);
  EXPECT_EQ(k.admit.burst, 20u);
  const lv_limit np = compile_packet_limit({10'000, 1'000});
  EXPECT_EQ(std::memcmp(&k.net_pkt, &np, sizeof np), 0);
  const lv_limit nb = compile_byte_limit({1'000'000, 100'000});
  EXPECT_EQ(std::memcmp(&k.net_bytes, &nb, sizeof nb), 0);
  const lv_limit tp = compile_packet_limit({50'000, 5'000});
  EXPECT_EQ(std::memcmp(&k.total_pkt, &tp, sizeof tp), 0);
  EXPECT_EQ(k.total_bytes.cost, 0u);
  EXPECT_EQ(k.net_prefix4, 24);
  EXPECT_EQ(k.net_prefix6, 48);
  EXPECT_EQ(bytes_of<4>(&k.net_mask4), (std::array<uint8_t, 4>{0xff, 0xff, 0xff, 0}));
  EXPECT_EQ(bytes_of<16>(k.net_mask6),
            (std::array<uint8_t, 16>{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bytes_of<4>(&k.mask4), (std::array<uint8_t, 4>{0xff, 0xff, 0xff, 0xff})) << "the source's own prefix";
  // An explicit budget: no admission autopilot; the network watch is on by default.
  const uint32_t want = LV_CLASS_ADMIT | LV_CLASS_NETWORK | LV_CLASS_TOTAL | LV_CLASS_FAST_REJECT | LV_CLASS_ESCALATE;
  EXPECT_EQ(k.flags, want);
  EXPECT_EQ(k.ban_ns, 0u);

  // Each kind alone sets its flag alone (a burst of one keeps the fast reject off).
  ClassSpec only = spec("o");
  only.admission = Admission::Off;
  only.escalate = false;
  only.packets = {1000, 1};
  only.new_sources = {10, 1};
  EXPECT_EQ(compile_class(only, kTick, 2).flags, uint32_t{LV_CLASS_ADMIT});
  only.new_sources = {};
  only.network.bytes = {1000, 1000};
  EXPECT_EQ(compile_class(only, kTick, 2).flags, uint32_t{LV_CLASS_NETWORK});
  only.network.bytes = {};
  only.total.bytes = {1000, 1000};
  EXPECT_EQ(compile_class(only, kTick, 2).flags, uint32_t{LV_CLASS_TOTAL});
}

TEST(CompileLimits, FastRejectNeedsEveryLimitToCoverTwoTicks) {
  ClassSpec c = spec("c");  // per-source tau 99 ms: fast on its own
  ASSERT_TRUE(compile_class(c, kTick, 2).flags & LV_CLASS_FAST_REJECT);
  struct Case {
    const char* what;
    void (*set)(ClassSpec&, bool wide);
  };
  // For each kind: a tau of 2 ticks exactly keeps it, one ns less loses it.
  const Case cases[] = {
      {"admission",
       [](ClassSpec& s, bool w) {
         s.new_sources = {1000, w ? 9u : 8u};
       }},  // tau 8 ms / 7 ms
      {"network packets",
       [](ClassSpec& s, bool w) {
         s.network.packets = {1000, w ? 9u : 8u};
       }},
      {"network bytes",
       [](ClassSpec& s, bool w) {
         s.network.bytes = {1'000'000, w ? 8'000u : 7'999u};
       }},
      {"total packets",
       [](ClassSpec& s, bool w) {
         s.total.packets = {1000, w ? 9u : 8u};
       }},
      {"total bytes",
       [](ClassSpec& s, bool w) {
         s.total.bytes = {1'000'000, w ? 8'000u : 7'999u};
       }},
  };
  for (const Case& k : cases) {
    ClassSpec wide = c, narrow = c;
    k.set(wide, true);
    k.set(narrow, false);
    EXPECT_TRUE(compile_class(wide, kTick, 2).flags & LV_CLASS_FAST_REJECT) << k.what;
    EXPECT_FALSE(compile_class(narrow, kTick, 2).flags & LV_CLASS_FAST_REJECT) << k.what;
  }
}

TEST(CompileLimits, LeaseIsAMillisecondAtMostAndAShareOfTheTotalsTau) {
  ClassSpec c = spec("c");
  EXPECT_EQ(compile_class(c, kTick, 4).lease_ns, 0u) << "no total";
  c.total.packets = {1000, 100};  // tau 99 ms: 99 ms / 8 is over a millisecond
  EXPECT_EQ(compile_class(c, kTick, 4).lease_ns, kMs);
  c.total.packets = {1000, 2};  // tau 1 ms
  EXPECT_EQ(compile_class(c, kTick, 4).lease_ns, kMs / 8);
  EXPECT_EQ(compile_class(c, kTick, 1).lease_ns, kMs / 2);
  c.total.packets = {1000, 1};  // tau 0: no lease at all, every packet asks the shared budget
  EXPECT_EQ(compile_class(c, kTick, 4).lease_ns, 0u);
  // Both limits: the smaller share. Bytes: 1 MB/s, burst 1500 B: tau 1.5 ms.
  c.total.packets = {1000, 100};
  c.total.bytes = {1'000'000, 1'500};
  EXPECT_EQ(compile_class(c, kTick, 4).lease_ns, 1'500'000u / 8);
  c.total.packets = {};
  EXPECT_EQ(compile_class(c, kTick, 2).lease_ns, 1'500'000u / 4);
  // The machine's CPUs by default.
  EXPECT_EQ(compile_class(c, kTick).lease_ns, std::min<uint64_t>(kMs, 1'500'000u / (2 * possible_cpus())));
}

TEST(CompileLimits, Bans) {
  ClassSpec c = spec("c");
  c.ban.ban_ns = 2 * kSec;
  lv_class k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.ban_ns, 2 * kSec);
  EXPECT_EQ(k.ban_max_ns, 3600 * kSec);
  EXPECT_EQ(k.forget_ns, 3600 * kSec);
  EXPECT_EQ(k.flags & (LV_CLASS_BAN | LV_CLASS_BAN_ALL), uint32_t{LV_CLASS_BAN});
  c.ban.max_ns = 60 * kSec;
  c.ban.forget_ns = 10 * kSec;
  c.ban.all_classes = true;
  k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.ban_max_ns, 60 * kSec);
  EXPECT_EQ(k.forget_ns, 10 * kSec);
  EXPECT_EQ(k.flags & (LV_CLASS_BAN | LV_CLASS_BAN_ALL), uint32_t{LV_CLASS_BAN | LV_CLASS_BAN_ALL});
}

// ---- the autopilot (struct lv_auto) ------------------------------------------------

TEST(CompileAutopilot, OnByDefaultWithTheDefaultNumbers) {
  const lv_class k = compile_class(spec("c"), kTick, 2);  // 1000 pps, burst 100, per /32 and /64
  EXPECT_EQ(k.flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE | LV_CLASS_ADMIT),
            uint32_t{LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE});
  EXPECT_TRUE(k.flags & LV_CLASS_FAST_REJECT);
  EXPECT_EQ(k.admit.cost, 0u) << "no budget";
  const lv_auto& a = k.autop;
  EXPECT_EQ(a.floor, 1000u);
  EXPECT_EQ(a.floor_cost, 1'000'000u) << "1e9 / 1000 new sources/s";
  EXPECT_EQ(a.burst_ns, 100 * kMs);
  EXPECT_EQ(a.sustain_ns, 250 * kMs);
  EXPECT_EQ(a.release_ns, 30 * kSec);
  EXPECT_EQ(a.margin, 4u);
  EXPECT_EQ(a.sample_shift, kWatchSampleShift);
  EXPECT_EQ(a.sample_shift, 5u) << "one passed packet in 32";
  // A network: 64 sources' worth of the per-source limit, per /16 and /48.
  EXPECT_EQ(a.network_sources, 64u);
  const lv_limit w = compile_packet_limit({64'000, 6'400});
  EXPECT_EQ(std::memcmp(&a.watch, &w, sizeof w), 0);
  EXPECT_EQ(a.watch_prefix4, 16);
  EXPECT_EQ(a.watch_prefix6, 48);
  EXPECT_EQ(bytes_of<4>(&a.watch_mask4), (std::array<uint8_t, 4>{0xff, 0xff, 0, 0}));
  EXPECT_EQ(bytes_of<16>(a.watch_mask6),
            (std::array<uint8_t, 16>{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  // The floor's cost rounds up: never looser than the floor.
  ClassSpec c = spec("c");
  c.autop.floor = 3;
  EXPECT_EQ(compile_class(c, kTick, 2).autop.floor_cost, 333'333'334u);
}

TEST(CompileAutopilot, OffABudgetAndEscalateOff) {
  ClassSpec c = spec("c");
  c.admission = Admission::Off;
  lv_class k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ADMIT), 0u);
  EXPECT_TRUE(k.flags & LV_CLASS_ESCALATE) << "escalation is a setting of its own";
  EXPECT_EQ(k.autop.floor_cost, 0u) << "the threshold stays 0 without the flag";
  EXPECT_EQ(k.autop.floor, 0u);
  EXPECT_EQ(k.autop.burst_ns, 0u);
  EXPECT_EQ(k.autop.margin, 0u);
  EXPECT_EQ(k.autop.release_ns, 30 * kSec) << "release serves the escalation too";

  // An explicit budget wins, whatever the mode.
  c = spec("c");
  c.new_sources = {500, 50};
  ASSERT_EQ(c.admission, Admission::Auto);
  EXPECT_EQ(c.admission_in_force(), Admission::Budget);
  k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ADMIT | LV_CLASS_ESCALATE),
            uint32_t{LV_CLASS_ADMIT | LV_CLASS_ESCALATE});
  EXPECT_EQ(k.admit.rate, 500u);
  EXPECT_EQ(k.autop.floor_cost, 0u);
  // A budget taken away (`levee set --new-sources off`) leaves no admission at all.
  c.admission = Admission::Budget;
  c.new_sources = {};
  EXPECT_EQ(c.admission_in_force(), Admission::Off);
  EXPECT_EQ(compile_class(c, kTick, 2).flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ADMIT), 0u);

  c = spec("c");
  c.escalate = false;
  k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE), uint32_t{LV_CLASS_AUTO_ADMIT});
  EXPECT_EQ(k.autop.watch.cost, 0u);
  EXPECT_EQ(k.autop.network_sources, 0u);
  EXPECT_EQ(k.autop.watch_prefix4, 0);
  EXPECT_EQ(k.autop.sample_shift, 0u);

  c.admission = Admission::Off;  // neither: nothing of the autopilot is left
  k = compile_class(c, kTick, 2);
  const lv_auto none{};
  EXPECT_EQ(std::memcmp(&k.autop, &none, sizeof none), 0);
  EXPECT_EQ(k.flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE | LV_CLASS_ADMIT), 0u);
}

TEST(CompileAutopilot, TheWatchIsNetworkSourcesOfThePacketLimitOrNetworkRate) {
  ClassSpec c = spec("c");  // 1000 pps, burst 100
  c.autop.network_sources = 10;
  lv_class k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.autop.watch.rate, 10'000u);
  EXPECT_EQ(k.autop.watch.burst, 1'000u);
  EXPECT_EQ(k.autop.watch.cost, 100'000u);
  EXPECT_EQ(k.autop.network_sources, 10u);
  EXPECT_EQ(watch_rate(c), (Rate{10'000, 1'000}));

  // An explicit network limit: network_sources does not apply.
  c.autop.network_rate = Rate{5'000, 500};
  k = compile_class(c, kTick, 2);
  const lv_limit w = compile_packet_limit({5'000, 500});
  EXPECT_EQ(std::memcmp(&k.autop.watch, &w, sizeof w), 0);
  EXPECT_EQ(k.autop.network_sources, 0u);

  // A rate past one packet a nanosecond is capped there.
  c = spec("fast");
  c.packets = {kMaxRatePps, 10};
  c.autop.network_sources = 1'000;
  EXPECT_EQ(watch_rate(c), (Rate{kMaxWatchRate, 10'000}));
  EXPECT_EQ(compile_class(c, kTick, 2).autop.watch.cost, 1u);

  // Bytes alone are no network's limit: no escalation, unless network_rate gives one.
  c = spec("bytes");
  c.packets = {};
  c.bytes = {1'000'000, 100'000};
  EXPECT_FALSE(c.escalates());
  k = compile_class(c, kTick, 2);
  EXPECT_FALSE(k.flags & LV_CLASS_ESCALATE);
  EXPECT_EQ(k.autop.watch.cost, 0u);
  EXPECT_EQ(k.autop.network_sources, 64u) << "the escalation it asks for, kept for class_of()";
  EXPECT_TRUE(class_of(k).escalate);
  c.autop.network_rate = Rate{20'000, 2'000};
  k = compile_class(c, kTick, 2);
  EXPECT_TRUE(k.flags & LV_CLASS_ESCALATE);
  EXPECT_EQ(k.autop.watch.rate, 20'000u);
}

TEST(CompileAutopilot, ASampleFitsTheWatchsTolerance) {
  // The datapath charges one sample 2^shift packets' cost at once: tau >= cost << shift.
  constexpr uint64_t kSample = uint64_t{1} << kWatchSampleShift;
  ClassSpec c = spec("c");
  c.autop.network_rate = Rate{1000, 1};
  lv_class k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.autop.watch.burst, kSample + 1);
  EXPECT_EQ(k.autop.watch.tau_ns, k.autop.watch.cost << kWatchSampleShift);
  c.autop.network_rate = {};
  c.autop.network_sources = 1;
  c.packets = {100, 1};
  EXPECT_EQ(watch_rate(c), (Rate{100, kSample + 1}));
  for (uint64_t rate : {uint64_t{1}, uint64_t{7}, uint64_t{1000}, uint64_t{123'457}, kMaxRatePps})
    for (uint64_t burst : {uint64_t{1}, uint64_t{2}, uint64_t{16}, uint64_t{17}, uint64_t{1000}})
      for (uint64_t sources : {uint64_t{1}, uint64_t{3}, uint64_t{64}, kMaxNetworkSources}) {
        c.packets = {rate, burst};
        c.autop.network_sources = sources;
        k = compile_class(c, kTick, 2);
        ASSERT_TRUE(k.flags & LV_CLASS_ESCALATE);
        EXPECT_GE(k.autop.watch.tau_ns, k.autop.watch.cost << k.autop.sample_shift)
            << rate << " pps, burst " << burst << ", " << sources << " sources";
      }
}

TEST(CompileAutopilot, AWatchedNetworkIsNoNarrowerThanASource) {
  ClassSpec c = spec("c");
  c.prefix4 = 8;
  c.prefix6 = 24;
  lv_class k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.autop.watch_prefix4, 8);
  EXPECT_EQ(k.autop.watch_prefix6, 24);
  EXPECT_EQ(bytes_of<4>(&k.autop.watch_mask4), (std::array<uint8_t, 4>{0xff, 0, 0, 0}));
  EXPECT_EQ(bytes_of<16>(k.autop.watch_mask6),
            (std::array<uint8_t, 16>{0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  c = spec("c");
  c.autop.network_prefix4 = 24;
  c.autop.network_prefix6 = 56;
  k = compile_class(c, kTick, 2);
  EXPECT_EQ(k.autop.watch_prefix4, 24);
  EXPECT_EQ(k.autop.watch_prefix6, 56);
  EXPECT_EQ(bytes_of<4>(&k.autop.watch_mask4), (std::array<uint8_t, 4>{0xff, 0xff, 0xff, 0}));
}

TEST(CompileAutopilot, FastRejectNeedsTheAutopilotsTolerancesToCoverTwoTicks) {
  ClassSpec c = spec("c");  // tau 99 ms; the watch's ~100 ms
  c.autop.burst_ns = 10 * kMs;
  EXPECT_TRUE(compile_class(c, 5 * kMs, 2).flags & LV_CLASS_FAST_REJECT);
  EXPECT_FALSE(compile_class(c, 5 * kMs + 1, 2).flags & LV_CLASS_FAST_REJECT) << "sources on probation";
  c.admission = Admission::Off;
  EXPECT_TRUE(compile_class(c, 5 * kMs + 1, 2).flags & LV_CLASS_FAST_REJECT);
  c.autop.network_rate = Rate{1000, 33};  // tau 32 ms
  EXPECT_TRUE(compile_class(c, 16 * kMs, 2).flags & LV_CLASS_FAST_REJECT);
  EXPECT_FALSE(compile_class(c, 16 * kMs + 1, 2).flags & LV_CLASS_FAST_REJECT) << "an escalated network";
}

Policy two_classes() {
  Policy p;
  ClassSpec dns = spec("dns");
  dns.match.protos = {Proto::Udp};
  dns.match.ports = {{53, 53}};
  dns.prefix4 = 24;
  dns.prefix6 = 48;
  p.classes = {dns, spec("default")};
  return p;
}

TEST(CompilePolicy, MonitorModesFoldIntoEveryClass) {
  Policy p = two_classes();
  p.classes[0].monitor = true;
  auto c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  const lv_policy& s = c->slot;
  EXPECT_EQ(s.flags & LV_POL_MONITOR, 0u);
  EXPECT_EQ(s.classes[0].flags & (LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN),
            uint32_t{LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN});
  EXPECT_EQ(s.classes[1].flags & (LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN), 0u);

  // The interface's switch: every class monitors, their own modes are kept apart.
  p.monitor = true;
  c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  EXPECT_TRUE(c->slot.flags & LV_POL_MONITOR);
  EXPECT_EQ(c->slot.classes[0].flags & (LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN),
            uint32_t{LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN});
  EXPECT_EQ(c->slot.classes[1].flags & (LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN), uint32_t{LV_CLASS_MONITOR});

  // Switched off again (levee set --mode enforce): only the class's own mode is left.
  lv_policy next = c->slot;
  next.flags &= ~uint32_t{LV_POL_MONITOR};
  apply_interface(next);
  EXPECT_TRUE(next.classes[0].flags & LV_CLASS_MONITOR);
  EXPECT_FALSE(next.classes[1].flags & LV_CLASS_MONITOR);
}

TEST(CompilePolicy, PolicyFlags) {
  Policy p = two_classes();
  auto c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  EXPECT_EQ(c->slot.flags, 0u);
  p.deny_in_monitor = true;
  p.iface.refuse_full = true;
  p.iface.max_sources = 10'000;
  c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  EXPECT_EQ(c->slot.flags, uint32_t{LV_POL_MONITOR_DENY | LV_POL_REFUSE_FULL});
  EXPECT_EQ(c->slot.full_at, refuse_full_at(10'000, possible_cpus()));
}

TEST(CompilePolicy, BansInEveryClassShareTheirPrefix) {
  Policy p = two_classes();
  p.classes[0].ban.ban_ns = kSec;  // dns: this class only
  auto c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  EXPECT_EQ(c->slot.flags & LV_POL_BAN_ALL, 0u);
  EXPECT_EQ(c->slot.ban_mask4, 0u);

  p.classes[0].ban.all_classes = true;  // per /24 and /48
  c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  EXPECT_TRUE(c->slot.flags & LV_POL_BAN_ALL);
  EXPECT_EQ(bytes_of<4>(&c->slot.ban_mask4), (std::array<uint8_t, 4>{0xff, 0xff, 0xff, 0}));
  EXPECT_EQ(bytes_of<16>(c->slot.ban_mask6),
            (std::array<uint8_t, 16>{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));

  // A second class banning in every class must count sources the same way.
  p.classes[1].ban = p.classes[0].ban;
  Status st = validate(p, kConfigNow);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("class 'default' bans in every class per /32 (IPv4), /64 (IPv6)"),
            std::string::npos)
      << st.error().message();
  p.classes[1].prefix4 = 24;
  p.classes[1].prefix6 = 48;
  EXPECT_TRUE(validate(p, kConfigNow).ok());
}

TEST(CompilePolicy, ValidateChecksWhatTheCommandLineCanGetWrong) {
  auto error_of = [](const ClassSpec& c) {
    Policy p;
    p.classes = {c};
    Status st = validate(p, kConfigNow);
    return st.ok() ? std::string("(accepted)") : st.error().message();
  };
  ClassSpec c = spec("default");
  c.ban.ban_ns = 10 * 60 * kSec;
  c.ban.max_ns = 60 * kSec;
  EXPECT_NE(error_of(c).find("ban_max 1m is shorter than the first ban, 10m"), std::string::npos) << error_of(c);
  c = spec("default");
  c.packets = {};
  c.total.packets = {10, 10};
  c.ban.ban_ns = kSec;
  EXPECT_NE(error_of(c).find("no limit per source"), std::string::npos) << error_of(c);
  c = spec("default");
  c.prefix4 = 16;
  c.network.packets = {10, 10};  // per /24: narrower than a /16 source
  EXPECT_NE(error_of(c).find("narrower than one source"), std::string::npos) << error_of(c);
  c = spec("default");
  c.new_sources = {0, 5};
  EXPECT_NE(error_of(c).find("new-source rate 0 is out of range"), std::string::npos) << error_of(c);
  c = spec("default");
  c.packets = {};
  EXPECT_NE(error_of(c).find("has no limit"), std::string::npos) << error_of(c);
  c.network.packets = {10, 10};
  EXPECT_EQ(error_of(c), "(accepted)") << "a network limit is a limit";
}

TEST(CompilePolicy, ClassOfReadsEverythingBack) {
  // `levee set` recompiles a class from the slot: nothing may be lost on the way.
  ClassSpec c = spec("c");
  c.bytes = {1'000'000, 10'000};
  c.prefix4 = 28;
  c.prefix6 = 60;
  c.new_sources = {300, 30};
  c.network = {20, 44, {5000, 500}, {9'000'000, 90'000}, {}};
  c.total = {{70'000, 7'000}, {}, {}};
  c.ban = {3 * kSec, 120 * kSec, 600 * kSec, true, {}, {}};
  c.monitor = true;
  const lv_class k = compile_class(c, kTick, 2);
  const lv_class again = compile_class(class_of(k), kTick, 2);
  EXPECT_EQ(std::memcmp(&k, &again, sizeof k), 0);
  const ClassSpec back = class_of(k);
  EXPECT_EQ(back.new_sources, c.new_sources);
  EXPECT_EQ(back.network.prefix4, 20u);
  EXPECT_EQ(back.network.bytes, c.network.bytes);
  EXPECT_EQ(back.total.packets, c.total.packets);
  EXPECT_EQ(back.ban.max_ns, 120 * kSec);
  EXPECT_TRUE(back.ban.all_classes);
  EXPECT_TRUE(back.monitor);
  // The interface's switch is not the class's own mode.
  lv_class switched = compile_class(spec("d"), kTick, 2);
  switched.flags |= LV_CLASS_MONITOR;
  EXPECT_FALSE(class_of(switched).monitor);
}

TEST(CompileAutopilot, ClassOfGivesTheAutopilotBack) {
  // `levee set` recompiles a class from the slot: the autopilot must survive it.
  ClassSpec custom = spec("custom");
  custom.autop.floor = 50;
  custom.autop.margin = 8;
  custom.autop.burst_ns = 2 * kSec;
  custom.autop.sustain_ns = 0;
  custom.autop.release_ns = 300 * kSec;
  custom.autop.network_prefix4 = 20;
  custom.autop.network_prefix6 = 40;
  custom.autop.network_sources = 16;
  ClassSpec rate = spec("rate");
  rate.autop.network_rate = Rate{7'000, 3};  // a burst under 2^shift + 1 is raised
  ClassSpec off = spec("off");
  off.admission = Admission::Off;
  off.autop.release_ns = 5 * kSec;
  ClassSpec budget = spec("budget");
  budget.new_sources = {100, 10};
  budget.escalate = false;
  ClassSpec unlimited = spec("unlimited");  // escalation asked for, no packet limit to derive it from
  unlimited.packets = {};
  unlimited.total.packets = {1000, 100};
  ClassSpec neither = spec("neither");
  neither.admission = Admission::Off;
  neither.escalate = false;
  for (const ClassSpec& c : {spec("default"), custom, rate, off, budget, unlimited, neither}) {
    SCOPED_TRACE(c.name);
    const lv_class k = compile_class(c, kTick, 2);
    const ClassSpec back = class_of(k);
    const lv_class again = compile_class(back, kTick, 2);
    EXPECT_EQ(std::memcmp(&k.autop, &again.autop, sizeof k.autop), 0);
    EXPECT_EQ(std::memcmp(&k, &again, sizeof k), 0);
    EXPECT_EQ(back.admission, c.admission_in_force());
    EXPECT_EQ(back.escalate, c.escalate);
  }
  ClassSpec back = class_of(compile_class(custom, kTick, 2));
  EXPECT_EQ(back.autop.floor, 50u);
  EXPECT_EQ(back.autop.margin, 8u);
  EXPECT_EQ(back.autop.burst_ns, 2 * kSec);
  EXPECT_EQ(back.autop.sustain_ns, 0u);
  EXPECT_EQ(back.autop.release_ns, 300 * kSec);
  EXPECT_EQ(back.autop.network_prefix4, 20u);
  EXPECT_EQ(back.autop.network_prefix6, 40u);
  EXPECT_EQ(back.autop.network_sources, 16u);
  EXPECT_FALSE(back.autop.network_rate);
  back = class_of(compile_class(rate, kTick, 2));
  EXPECT_EQ(back.autop.network_rate, (Rate{7'000, (uint64_t{1} << kWatchSampleShift) + 1}));
  EXPECT_EQ(class_of(compile_class(off, kTick, 2)).autop.release_ns, 5 * kSec);
  EXPECT_EQ(class_of(compile_class(budget, kTick, 2)).new_sources, (Rate{100, 10}));
  EXPECT_EQ(class_of(compile_class(budget, kTick, 2)).admission, Admission::Budget);
}

TEST(CompileAutopilot, ValidateChecksWhatAPolicyBuiltInCodeCanGetWrong) {
  auto error_of = [](const AutoSpec& a, bool in_class) {
    Policy p;
    p.classes = {spec("default")};
    (in_class ? p.classes[0].autop : p.autop) = a;
    Status st = validate(p, kConfigNow);
    return st.ok() ? std::string("(accepted)") : st.error().message();
  };
  for (bool in_class : {false, true}) {
    AutoSpec a;
    EXPECT_EQ(error_of(a, in_class), "(accepted)");
    a.floor = 0;
    EXPECT_EQ(error_of(a, in_class), "auto.floor: 0 is out of range; give 1 to 10M");
    a = {};
    a.release_ns = 2 * kSec;
    a.sustain_ns = 3 * kSec;
    EXPECT_EQ(error_of(a, in_class),
              "auto.release: 2s is shorter than sustain, 3s; give release at least as long as sustain");
    a = {};
    a.network_rate = Rate{};
    EXPECT_EQ(error_of(a, in_class), "auto.network_rate: 0 is out of range; give 1 to 10M, or leave network_rate out");
    a = {};
    a.known_good_for_ns = 366 * 24 * 3600 * kSec;
    EXPECT_EQ(error_of(a, in_class), "auto.known_good_for: 366d is out of range; give 1s to 365d");
  }
}

TEST(RefuseFull, JustUnderTheMapSize) {
  EXPECT_EQ(refuse_full_at(1'000'000, 2), 1'000'000u - 512);
  EXPECT_EQ(refuse_full_at(1'000'000, 64), 1'000'000u - 256 * 64);
  EXPECT_EQ(refuse_full_at(1000, 4), 500u) << "never below half the map";
  EXPECT_EQ(refuse_full_at(1, 1), 1u);
}

TEST(ConfigCompiled, FromTheFileToTheSlot) {
  Policy p = parse_ok(R"([interface]
when_full = "refuse"
max_sources = "100k"
[defaults]
ban = "2s"
[[class]]
name = "web-syn"
match.proto = "tcp"
match.port = 443
match.syn = true
rate = 100
burst = 200
new_sources = 500
ban_scope = "all"
prefix4 = 24
prefix6 = 48
[[class]]
name = "dns"
match.port = 53
rate = 500
burst = 100
network = { rate = "5k", burst = 500 }
mode = "monitor"
[default]
rate = "10k"
burst = "1k"
total = { rate = "1M", burst = "100k" }
[lists]
deny_in_monitor = "drop"
)");
  auto c = std::make_unique<CompiledPolicy>(compile(p, kClocks));
  const lv_policy& s = c->slot;
  EXPECT_EQ(s.flags, uint32_t{LV_POL_REFUSE_FULL | LV_POL_MONITOR_DENY | LV_POL_BAN_ALL});
  EXPECT_EQ(s.full_at, refuse_full_at(100'000, possible_cpus()));
  EXPECT_EQ(bytes_of<4>(&s.ban_mask4), (std::array<uint8_t, 4>{0xff, 0xff, 0xff, 0}));
  const lv_class& syn = s.classes[0];
  EXPECT_EQ(syn.admit.rate, 500u);
  EXPECT_EQ(syn.admit.burst, 50u);
  EXPECT_EQ(syn.ban_ns, 2 * kSec);
  EXPECT_TRUE(syn.flags & LV_CLASS_BAN_ALL);
  const lv_class& dns = s.classes[1];
  EXPECT_EQ(dns.flags & (LV_CLASS_NETWORK | LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN | LV_CLASS_BAN | LV_CLASS_BAN_ALL),
            uint32_t{LV_CLASS_NETWORK | LV_CLASS_MONITOR | LV_CLASS_MONITOR_OWN | LV_CLASS_BAN});
  EXPECT_EQ(dns.net_pkt.rate, 5000u);
  const lv_class& def = s.classes[2];
  EXPECT_TRUE(def.flags & LV_CLASS_TOTAL);
  EXPECT_EQ(def.total_pkt.burst, 100'000u);
  EXPECT_EQ(def.lease_ns, kMs) << "tau 100 ms: a millisecond";
  EXPECT_FALSE(def.flags & LV_CLASS_MONITOR);
}

Cidr addr(const char* text) { return Cidr::parse(text).value(); }

TEST(Keys, SourceNetworkAndEveryClassKeysAsTheDatapathBuildsThem) {
  ClassSpec spec;
  spec.name = "dns";
  spec.packets = {10, 10};
  spec.prefix4 = 32;
  spec.prefix6 = 64;
  spec.network.prefix4 = 24;
  spec.network.prefix6 = 48;
  spec.network.packets = {100, 100};
  lv_class c = compile_class(spec, 4'000'000, 2);
  c.epoch = 3;

  const lv_key k4 = source_key(addr("198.18.5.77"), c, 9);
  EXPECT_EQ(k4.addr[0], 0u);
  EXPECT_EQ(k4.addr[1], 0u);
  EXPECT_EQ(k4.addr[2], htonl(0xffff)) << "IPv4-mapped";
  EXPECT_EQ(k4.addr[3], htonl(0xc612054d));
  EXPECT_EQ(k4.family, LV_AF_INET);
  EXPECT_EQ(k4.class_id, 9);
  EXPECT_EQ(k4.epoch, 3);

  const lv_key n4 = network_key(addr("198.18.5.77"), c, 9);
  EXPECT_EQ(n4.addr[3], htonl(0xc6120500)) << "masked to the network's /24";
  EXPECT_EQ(n4.family, LV_AF_INET | LV_KEY_NETWORK);
  EXPECT_EQ(n4.class_id, 9);
  EXPECT_EQ(n4.epoch, 3);

  const lv_key k6 = source_key(addr("2001:db8:1:2:3:4:5:6"), c, 9);
  EXPECT_EQ(k6.addr[0], htonl(0x20010db8));
  EXPECT_EQ(k6.addr[1], htonl(0x00010002));
  EXPECT_EQ(k6.addr[2], 0u) << "/64";
  EXPECT_EQ(k6.addr[3], 0u);
  EXPECT_EQ(k6.family, LV_AF_INET6);
  const lv_key n6 = network_key(addr("2001:db8:1:2:3:4:5:6"), c, 9);
  EXPECT_EQ(n6.addr[1], htonl(0x00010000)) << "/48";
  EXPECT_EQ(n6.family, LV_AF_INET6 | LV_KEY_NETWORK);

  lv_policy pol{};
  pol.ban_mask4 = htonl(0xffffff00);
  pol.ban_mask6[0] = pol.ban_mask6[1] = ~0u;
  const lv_key a4 = ban_all_key(addr("198.18.5.77"), pol);
  EXPECT_EQ(a4.addr[2], htonl(0xffff));
  EXPECT_EQ(a4.addr[3], htonl(0xc6120500));
  EXPECT_EQ(a4.class_id, LV_ALL_CLASSES);
  EXPECT_EQ(a4.epoch, 0);
  EXPECT_EQ(a4.family, LV_AF_INET);
  const lv_key a6 = ban_all_key(addr("2001:db8:1:2:3:4:5:6"), pol);
  EXPECT_EQ(a6.addr[1], htonl(0x00010002));
  EXPECT_EQ(a6.addr[2], 0u);
}

}  // namespace
}  // namespace levee
