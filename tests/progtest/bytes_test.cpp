// bytes_test.cpp - per-source byte limits in the kernel: burst plus one packet at an
// instant, the state's arithmetic (lv_gcra_after with lv_byte_cost), and the refund that
// keeps a packet refused by the byte limit from costing the packet limit anything.
//
// Rates of 100 bytes/s make one byte cost 10 ms exactly: no refill within a test.
#include <linux/bpf.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "frames.hpp"
#include "limiter.h"
#include "packet.hpp"
#include "policy/keys.hpp"

namespace levee::progtest {
namespace {

constexpr uint32_t kPass = XDP_PASS, kDrop = XDP_DROP;
constexpr Outcome kConforming{kPass, LV_R_CONFORMING}, kBytesDrop{kDrop, LV_R_BYTES}, kRateDrop{kDrop, LV_R_RATE};

// A frame of exactly `size` bytes (GRE: the default class).
Bytes frame_of(const std::string& src, size_t size) {
  const size_t hdr = is_ipv6(src) ? 14 + 40 : 14 + 20;
  return ip_proto_from(src, 47, size - hdr);
}

// Install `p`, with the fast reject of every class forced off when !fast.
void install(Controller& ctl, const Policy& p, bool fast) {
  CompiledPolicy c = ctl.install(p);
  for (uint32_t i = 0; i < c.slot.nr_classes; ++i) {
    ASSERT_TRUE(c.slot.classes[i].flags & LV_CLASS_FAST_REJECT) << "taus here cover two ticks";
    if (!fast) c.slot.classes[i].flags &= ~uint32_t{LV_CLASS_FAST_REJECT};
  }
  if (!fast) ctl.publish(c);
}

struct ByteCase {
  size_t size;
  bool fast;
};

void PrintTo(const ByteCase& c, std::ostream* os) {
  *os << c.size << " bytes, fast reject " << (c.fast ? "on" : "off");
}

class BytesOnly : public ProgTest, public ::testing::WithParamInterface<ByteCase> {};

// burst + one packet passes at an instant, whatever the packet size: a packet conforms
// while any credit is left.
TEST_P(BytesOnly, BurstPlusOnePacketThenBytesDrops) {
  const auto [size, fast] = GetParam();
  constexpr uint64_t kBurst = 1000;
  Policy p;
  p.classes = {class_spec("default", Match{}, {}, {100, kBurst})};
  Controller ctl(dp());
  install(ctl, p, fast);
  ASSERT_EQ(ctl.active().classes[0].pkt.cost, 0u);
  for (const char* src : {"198.18.1.1", "2001:db8:1::1"}) {
    SCOPED_TRACE(src);
    const Bytes f = frame_of(src, size);
    ASSERT_EQ(f.size(), size);
    const uint64_t want = kBurst / size + 1;
    std::vector<Outcome> got;
    for (uint64_t i = 0; i < want + 4; ++i) got.push_back(dp().send(f));
    std::vector<Outcome> expect(want, kConforming);
    expect.resize(want + 4, kBytesDrop);
    EXPECT_EQ(got, expect);
    const auto st = dp().state(source_key(src, is_ipv6(src) ? 64 : 32, 0));
    ASSERT_TRUE(st);
    EXPECT_EQ(st->ready_ns, 0u) << "no packet limit";
    EXPECT_EQ(st->passed, want | (want * size) << 32);
  }
  const auto cc = dp().class_counters()[0];
  EXPECT_EQ(cc.dropped.packets, 8u);
  EXPECT_EQ(cc.dropped.bytes, 8u * size);
}

INSTANTIATE_TEST_SUITE_P(Sizes, BytesOnly,
                         ::testing::Values(ByteCase{100, true}, ByteCase{100, false}, ByteCase{150, true},
                                           ByteCase{150, false}, ByteCase{999, true}, ByteCase{1000, true},
                                           ByteCase{1000, false}, ByteCase{1500, true}, ByteCase{1500, false}),
                         [](const ::testing::TestParamInfo<ByteCase>& info) {
                           return std::to_string(info.param.size) + (info.param.fast ? "Fast" : "Fine");
                         });

// The state: the first packet as lv_gcra_after(0, now, cost, tau), every later one adds
// exactly lv_byte_cost(len) while the bucket is not full; the cost is rounded up.
TEST_F(ProgTest, ReadyBytesFollowsGcraAfterWithByteCost) {
  Policy p;
  p.classes = {class_spec("default", Match{}, {}, {3000, 30000})};  // 1e9/3000 ns a byte: rounds
  Controller ctl(dp());
  ctl.install(p);
  const lv_limit& lim = ctl.active().classes[0].bytes;
  ASSERT_EQ(lim.cost, (uint64_t{LV_NSEC_PER_SEC} * 65536 + 2999) / 3000);
  const std::string src = "198.18.2.2";
  const lv_key key = source_key(src, 32, 0);

  const Bytes first = frame_of(src, 61);
  const uint64_t t0 = monotonic_ns();
  ASSERT_EQ(dp().send(first), kConforming);
  const uint64_t t1 = monotonic_ns();
  uint64_t ready = dp().state(key)->ready_bytes_ns;
  const uint64_t c61 = lv_byte_cost(61, &lim);
  EXPECT_GE(ready, lv_gcra_after(0, t0, c61, lim.tau_ns));
  EXPECT_LE(ready, lv_gcra_after(0, t1, c61, lim.tau_ns));
  EXPECT_GE(static_cast<unsigned __int128>(c61) * 3000, static_cast<unsigned __int128>(61) * LV_NSEC_PER_SEC);

  for (size_t size : {101u, 1500u, 777u, 64u, 65u}) {
    SCOPED_TRACE(size);
    ASSERT_EQ(dp().send(frame_of(src, size)), kConforming);
    const uint64_t next = dp().state(key)->ready_bytes_ns;
    const uint64_t cost = lv_byte_cost(size, &lim);
    EXPECT_EQ(next, ready + cost);
    // Rounded up: never less than the exact cost of the bytes.
    EXPECT_GE(static_cast<unsigned __int128>(cost) * 3000, static_cast<unsigned __int128>(size) * LV_NSEC_PER_SEC);
    ready = next;
  }
  EXPECT_EQ(dp().state(key)->ready_ns, 0u);
}

class BothLimits : public ProgTest, public ::testing::WithParamInterface<bool> {};

// Refused by the byte limit after the packet limit took its charge: the charge comes
// back (lv_state.ready_ns unchanged by the drop), so the packet budget is intact.
TEST_P(BothLimits, PacketRefusedByTheByteLimitCostsThePacketLimitNothing) {
  const bool fast = GetParam();
  constexpr uint64_t kPktBurst = 100;
  Policy p;
  p.classes = {class_spec("default", Match{}, {1, kPktBurst}, {100, 1000})};
  Controller ctl(dp());
  install(ctl, p, fast);
  const std::string src = "198.18.3.3";
  const lv_key key = source_key(src, 32, 0);
  const Bytes f = frame_of(src, 100);
  for (int i = 0; i < 11; ++i) ASSERT_EQ(dp().send(f), kConforming) << i;  // 1000 bytes and one packet
  const lv_state before = *dp().state(key);
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(dp().send(f), kBytesDrop) << i;
    const lv_state now = *dp().state(key);
    EXPECT_EQ(now.ready_ns, before.ready_ns) << "refused packet " << i << " kept its packet charge";
    EXPECT_EQ(now.ready_bytes_ns, before.ready_bytes_ns);
  }
  // Drop the byte limit (the state is kept): the packet limit has all it had left.
  p.classes[0].bytes = {};
  ctl.publish(p);
  EXPECT_EQ(dp().state(key)->ready_ns, before.ready_ns);
  int passed = 0;
  for (uint64_t i = 0; i < kPktBurst; ++i) {
    const Outcome o = dp().send(f);
    EXPECT_TRUE(o == kConforming || o == kRateDrop);
    passed += o.verdict == kPass;
  }
  EXPECT_EQ(passed, int{kPktBurst} - 11);
}

// Refused by the packet limit: the byte limit is not charged either.
TEST_P(BothLimits, PacketRefusedByThePacketLimitCostsTheByteLimitNothing) {
  const bool fast = GetParam();
  Policy p;
  p.classes = {class_spec("default", Match{}, {1, 2}, {100, 100'000})};
  Controller ctl(dp());
  install(ctl, p, fast);
  const std::string src = "198.18.4.4";
  const lv_key key = source_key(src, 32, 0);
  const Bytes f = frame_of(src, 100);
  ASSERT_EQ(dp().send(f), kConforming);
  ASSERT_EQ(dp().send(f), kConforming);
  const lv_state before = *dp().state(key);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(dp().send(f), kRateDrop);
  EXPECT_EQ(dp().state(key)->ready_bytes_ns, before.ready_bytes_ns);
  EXPECT_EQ(dp().state(key)->ready_ns, before.ready_ns);
}

INSTANTIATE_TEST_SUITE_P(FastReject, BothLimits, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "On" : "Off"; });

}  // namespace
}  // namespace levee::progtest
