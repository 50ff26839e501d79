// limits_test.cpp - userspace/policy/limits: validation and the compiled lv_class.
#include <time.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "policy/compile.hpp"
#include "policy/limits.hpp"
#include "policy/validate.hpp"

namespace levee {
namespace {

constexpr uint64_t kTick = 4'000'000;  // HZ=250

// ---- validate --------------------------------------------------------------------

void expect_usage_error(const Limits& l, const std::string& option) {
  Status st = validate(l);
  ASSERT_FALSE(st.ok()) << option;
  EXPECT_TRUE(st.error().usage) << option;
  EXPECT_NE(st.error().message().find(option), std::string::npos)
      << "message should name " << option << ": " << st.error().message();
}

TEST(Validate, AcceptsTheWholeRange) {
  for (Limits l : {Limits{1, 1, 1, 1}, Limits{kMaxRatePps, kMaxBurst, 32, 128}, Limits{1000, 100, 24, 64},
                   Limits{500, 1, 32, 64}}) {
    EXPECT_TRUE(validate(l).ok()) << l.rate << "/" << l.burst << "/" << l.prefix4 << "/" << l.prefix6;
  }
}

TEST(Validate, RejectsOutOfRangeAndNamesTheOption) {
  expect_usage_error({0, 10, 32, 64}, "--rate");
  expect_usage_error({kMaxRatePps + 1, 10, 32, 64}, "--rate");
  expect_usage_error({UINT64_MAX, 10, 32, 64}, "--rate");
  expect_usage_error({100, 0, 32, 64}, "--burst");
  expect_usage_error({100, kMaxBurst + 1, 32, 64}, "--burst");
  expect_usage_error({100, 10, 0, 64}, "--prefix4");
  expect_usage_error({100, 10, 33, 64}, "--prefix4");
  expect_usage_error({100, 10, 32, 0}, "--prefix6");
  expect_usage_error({100, 10, 32, 129}, "--prefix6");
}

TEST(Validate, MessageGivesTheAcceptedRange) {
  Status st = validate({0, 10, 32, 64});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find(std::to_string(kMaxRatePps)), std::string::npos) << st.error().message();
}

// ---- compile_class ---------------------------------------------------------------

TEST(CompileClass, IntervalIsRoundedUpAndTauIsBurstMinusOneIntervals) {
  struct Case {
    uint64_t rate, interval;
  };
  for (Case c : {Case{1, 1'000'000'000}, Case{3, 333'333'334}, Case{7, 142'857'143}, Case{1000, 1'000'000},
                 Case{999'999, 1001}, Case{9'999'999, 101}, Case{kMaxRatePps, 100}}) {
    for (uint64_t burst : {uint64_t{1}, uint64_t{2}, uint64_t{100}, kMaxBurst}) {
      const lv_class k = compile_class({c.rate, burst, 32, 64}, kTick);
      EXPECT_EQ(k.pkt.cost, c.interval) << c.rate;
      EXPECT_EQ(k.pkt.tau_ns, (burst - 1) * c.interval) << c.rate << "/" << burst;
      EXPECT_EQ(k.pkt.rate, c.rate);
      EXPECT_EQ(k.pkt.burst, burst);
      // limiter.h compares differences as signed 64-bit: tau must stay below 2^63.
      EXPECT_LT(k.pkt.tau_ns, uint64_t{1} << 63);
    }
  }
}

TEST(CompileClass, NeverLooserThanConfigured) {
  std::mt19937_64 rng(11);
  auto check = [](uint64_t rate) {
    const lv_class k = compile_class({rate, 1, 32, 64}, kTick);
    ASSERT_GE(k.pkt.cost * rate, LV_NSEC_PER_SEC) << rate;        // T >= 1e9 / rate
    ASSERT_LT((k.pkt.cost - 1) * rate, LV_NSEC_PER_SEC) << rate;  // and minimal
    ASSERT_LE(effective_rate(k), static_cast<double>(rate)) << rate;
    ASSERT_GE(effective_rate(k), 0.99 * static_cast<double>(rate)) << rate;  // kMaxRatePps's promise
  };
  for (uint64_t rate = 1; rate <= 100'000; ++rate) check(rate);
  for (int i = 0; i < 100'000; ++i) check(std::uniform_int_distribution<uint64_t>(1, kMaxRatePps)(rng));
  EXPECT_DOUBLE_EQ(effective_rate(compile_class({1000, 5, 32, 64}, kTick)), 1000.0);
  EXPECT_DOUBLE_EQ(effective_rate(lv_class{}), 0.0);
}

// The mask a prefix should give, built bit by bit in wire order.
template <size_t N>
std::array<uint8_t, N> ref_mask(unsigned prefix) {
  std::array<uint8_t, N> m{};
  for (unsigned bit = 0; bit < prefix && bit < N * 8; ++bit) m[bit / 8] |= static_cast<uint8_t>(0x80 >> (bit % 8));
  return m;
}

template <size_t N>
std::array<uint8_t, N> bytes_of(const void* p) {
  std::array<uint8_t, N> b{};
  std::memcpy(b.data(), p, N);
  return b;
}

std::array<uint8_t, 4> mask4_bytes(const lv_class& k) { return bytes_of<4>(&k.mask4); }

TEST(CompileClass, MasksAreInNetworkByteOrder) {
  for (unsigned p4 = 0; p4 <= 32; ++p4) {
    const lv_class k = compile_class({100, 10, p4, 64}, kTick);
    EXPECT_EQ(bytes_of<4>(&k.mask4), ref_mask<4>(p4)) << "/" << p4;
    EXPECT_EQ(k.prefix4, p4);
  }
  for (unsigned p6 = 0; p6 <= 128; ++p6) {
    const lv_class k = compile_class({100, 10, 32, p6}, kTick);
    EXPECT_EQ(bytes_of<16>(k.mask6), ref_mask<16>(p6)) << "/" << p6;
    EXPECT_EQ(k.prefix6, p6);
  }
  // Spot checks of the boundaries, spelled out.
  using A4 = std::array<uint8_t, 4>;
  using A16 = std::array<uint8_t, 16>;
  EXPECT_EQ(mask4_bytes(compile_class({1, 1, 1, 64}, kTick)), (A4{0x80, 0, 0, 0}));
  EXPECT_EQ(mask4_bytes(compile_class({1, 1, 24, 64}, kTick)), (A4{0xff, 0xff, 0xff, 0}));
  EXPECT_EQ(mask4_bytes(compile_class({1, 1, 32, 64}, kTick)), (A4{0xff, 0xff, 0xff, 0xff}));
  EXPECT_EQ(bytes_of<16>(compile_class({1, 1, 32, 64}, kTick).mask6),
            (A16{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bytes_of<16>(compile_class({1, 1, 32, 127}, kTick).mask6),
            (A16{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}));
  EXPECT_EQ(bytes_of<16>(compile_class({1, 1, 32, 0}, kTick).mask6), A16{});
}

TEST(CompileClass, FastRejectIffTauCoversTwoTicks) {
  // rate 1000: T = 1 ms; burst 9: tau = 8 ms.
  EXPECT_TRUE(compile_class({1000, 9, 32, 64}, 4'000'000).flags & LV_CLASS_FAST_REJECT);
  EXPECT_FALSE(compile_class({1000, 9, 32, 64}, 4'000'001).flags & LV_CLASS_FAST_REJECT);
  EXPECT_FALSE(compile_class({1000, 8, 32, 64}, 4'000'000).flags & LV_CLASS_FAST_REJECT);
  EXPECT_FALSE(compile_class({1, 1, 32, 64}, 1).flags & LV_CLASS_FAST_REJECT) << "burst 1: tau 0";
  EXPECT_TRUE(compile_class({1, 2, 32, 64}, 10'000'000).flags & LV_CLASS_FAST_REJECT);
  // The concurrency progtest's classes, on this machine's tick.
  const uint64_t tick = clock_tick_ns();
  EXPECT_EQ(bool(compile_class({100'000, 100, 32, 64}, tick).flags & LV_CLASS_FAST_REJECT), 99 * 10'000 >= 2 * tick);
  // No other flag is ever set but the autopilot's and syn_auth = "auto" (on by default):
  // the per-source limit alone decides it (the autopilot's tolerances are wider: a
  // network's watch is 64 sources' worth, the threshold's tolerance a second).
  std::mt19937_64 rng(2);
  for (int i = 0; i < 10'000; ++i) {
    const Limits l{std::uniform_int_distribution<uint64_t>(1, kMaxRatePps)(rng),
                   std::uniform_int_distribution<uint64_t>(1, 10'000)(rng), 32, 64};
    const uint64_t t = std::uniform_int_distribution<uint64_t>(1'000'000, 10'000'000)(rng);
    const lv_class k = compile_class(l, t);
    ASSERT_EQ(k.flags, (k.pkt.tau_ns >= 2 * t ? uint32_t{LV_CLASS_FAST_REJECT} : 0u) | LV_CLASS_AUTO_ADMIT |
                           LV_CLASS_ESCALATE | LV_CLASS_SYN_AUTO);
  }
}

TEST(CompileClass, TheShorthandProtectsByDefault) {
  // levee attach IFACE --rate 500 --burst 100: the autopilot as a file's class has it.
  const lv_class k = compile_class({500, 100, 32, 64}, kTick);
  EXPECT_EQ(k.flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE | LV_CLASS_ADMIT),
            uint32_t{LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE});
  EXPECT_EQ(k.autop.floor_cost, 1'000'000u);
  EXPECT_EQ(k.autop.release_ns, 30 * LV_NSEC_PER_SEC);
  EXPECT_EQ(k.autop.watch.rate, 32'000u) << "64 sources' worth";
  EXPECT_EQ(k.autop.watch.burst, 6'400u);
  const Policy p = one_class_policy({500, 100, 32, 64});
  EXPECT_EQ(p.classes[0].admission, Admission::Auto);
  EXPECT_TRUE(p.classes[0].escalate);
  EXPECT_TRUE(p.classes[0].autop == p.autop);
  EXPECT_TRUE(validate(p, 0).ok());
}

TEST(CompileClass, ReservedFieldsAreZero) {
  const lv_class k = compile_class({kMaxRatePps, kMaxBurst, 17, 93}, kTick);
  const lv_limit zero{};
  EXPECT_EQ(std::memcmp(&k.bytes, &zero, sizeof(zero)), 0);
  for (uint8_t b : k.pad) EXPECT_EQ(b, 0);
}

TEST(LimitsOf, RoundTrips) {
  std::mt19937_64 rng(4);
  for (int i = 0; i < 10'000; ++i) {
    const Limits l{std::uniform_int_distribution<uint64_t>(1, kMaxRatePps)(rng),
                   std::uniform_int_distribution<uint64_t>(1, kMaxBurst)(rng),
                   static_cast<unsigned>(std::uniform_int_distribution<int>(1, 32)(rng)),
                   static_cast<unsigned>(std::uniform_int_distribution<int>(1, 128)(rng))};
    ASSERT_TRUE(validate(l).ok());
    ASSERT_EQ(limits_of(compile_class(l, kTick)), l);
  }
}

TEST(ClockTick, IsTheCoarseClockResolution) {
  timespec res{};
  ASSERT_EQ(clock_getres(CLOCK_MONOTONIC_COARSE, &res), 0);
  const uint64_t tick = clock_tick_ns();
  EXPECT_EQ(tick, static_cast<uint64_t>(res.tv_sec) * LV_NSEC_PER_SEC + static_cast<uint64_t>(res.tv_nsec));
  EXPECT_GE(tick, 1'000'000u);   // HZ <= 1000
  EXPECT_LE(tick, 10'000'000u);  // HZ >= 100
}

}  // namespace
}  // namespace levee
