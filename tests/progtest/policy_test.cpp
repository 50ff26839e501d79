// policy_test.cpp - a live policy change: write the slot packets are not reading, flip
// `active`, and the next packet runs under the new policy.
#include <linux/bpf.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "packet.hpp"

namespace levee::progtest {
namespace {

using pkt::Frame;
using Bytes = std::vector<uint8_t>;

constexpr uint32_t kPass = XDP_PASS, kDrop = XDP_DROP;

Bytes udp4_from(const std::string& src) { return Frame().eth().ipv4(src, "198.19.0.1").udp(1000, 53).bytes(); }

uint32_t verdict(Datapath& dp, const Bytes& frame) {
  const RunResult r = dp.run(frame);
  EXPECT_EQ(r.err, 0);
  return r.retval;
}

// What the controller does: fill the inactive slot, then flip.
void stage(PolicyMapping& pm, uint32_t slot, const lv_class& cls) {
  lv_policy& pol = pm->slot[slot];
  pol.nr_classes = 1;
  pol.generation++;
  pol.classes[0] = cls;
}

TEST_F(ProgTest, FlippingTheActiveSlotTakesEffectOnTheNextPacket) {
  const lv_class one = make_class(1, 1);
  dp().set_class(one);  // slot 0, active 0
  PolicyMapping pm(dp());
  ASSERT_EQ(pm->active, 0u);
  ASSERT_EQ(pm->slot[0].classes[0].pkt.cost, one.pkt.cost) << "mapping shows the map";

  const Bytes a = udp4_from("198.18.20.1");
  ASSERT_EQ(verdict(dp(), a), kPass);
  ASSERT_EQ(verdict(dp(), a), kDrop);

  // Staging a slot that is not active changes nothing.
  lv_class unlimited = one;
  unlimited.pkt = lv_limit{};
  stage(pm, 1, unlimited);
  EXPECT_EQ(verdict(dp(), a), kDrop);

  // Flip: no packet limit from the next packet on.
  pm.flip_to(1);
  EXPECT_EQ(dp().control().active, 1u);
  EXPECT_EQ(verdict(dp(), a), kPass);
  EXPECT_EQ(verdict(dp(), a), kPass);

  // Flip back: the source's state was kept, it is still over its limit.
  pm.flip_to(0);
  EXPECT_EQ(verdict(dp(), a), kDrop);

  // A larger burst in slot 1: a new source gets it at once; the limited source keeps
  // its earliest eligible time (about a second away) and stays dropped.
  stage(pm, 1, make_class(1, 4));
  const Bytes b = udp4_from("198.18.20.2");
  ASSERT_EQ(verdict(dp(), b), kPass);
  ASSERT_EQ(verdict(dp(), b), kDrop) << "burst 1 under slot 0";
  pm.flip_to(1);
  const Bytes c = udp4_from("198.18.20.3");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(verdict(dp(), c), kPass) << "packet " << i;
  EXPECT_EQ(verdict(dp(), c), kDrop);
  EXPECT_EQ(verdict(dp(), a), kDrop);
  EXPECT_EQ(verdict(dp(), b), kDrop);

  // A new prefix length: the next packet is keyed by its /24.
  stage(pm, 0, make_class(1, 1, 24, 64));
  pm.flip_to(0);
  const Bytes d = udp4_from("198.18.21.1"), e = udp4_from("198.18.21.2");
  EXPECT_EQ(verdict(dp(), d), kPass);
  EXPECT_EQ(verdict(dp(), e), kDrop) << "same /24 under the new policy";
  EXPECT_TRUE(dp().state(key4("198.18.21.0", make_class(1, 1, 24, 64))).has_value());
}

}  // namespace
}  // namespace levee::progtest
