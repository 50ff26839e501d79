// Class ids: a class keeps its id across reloads by name, so its sources' state (keyed
// by id) and its counters stay with it when classes are added or removed around it.
#include <gtest/gtest.h>

#include "policy/policy.hpp"

namespace levee {
namespace {

ClassSpec udp_class(const std::string& name, uint16_t port) {
  ClassSpec c;
  c.name = name;
  c.match.protos = {Proto::Udp};
  c.match.ports = {{port, port}};
  c.packets = {100, 10};
  return c;
}

Policy policy_of(std::vector<ClassSpec> classes) {
  Policy p;
  p.classes = std::move(classes);
  ClassSpec def;
  def.name = "default";
  def.packets = {1000, 100};
  p.classes.push_back(def);
  return p;
}

const Clocks kClocks{4'000'000, 1'800'000'000'000'000'000ull, 1'000'000'000};

TEST(ClassIds, FirstCompileNumbersClassesInOrder) {
  auto c = compile(policy_of({udp_class("a", 1), udp_class("b", 2)}), kClocks);
  EXPECT_EQ(class_order(c.slot), (std::vector<uint8_t>{0, 1, 2}));
  EXPECT_EQ(class_ids(c.slot), (ClassIds{{"a", 0}, {"b", 1}, {"default", 2}}));
}

TEST(ClassIds, AClassInsertedInTheMiddleLeavesTheOthersTheirIds) {
  auto before = compile(policy_of({udp_class("a", 1), udp_class("b", 2)}), kClocks);
  auto after = compile(policy_of({udp_class("a", 1), udp_class("new", 3), udp_class("b", 2)}), kClocks, &before.slot);
  const ClassIds ids = class_ids(after.slot);
  EXPECT_EQ(ids.at("a"), 0);
  EXPECT_EQ(ids.at("b"), 1);
  EXPECT_EQ(ids.at("default"), 2);
  EXPECT_EQ(ids.at("new"), 3);
  // Match order is the file's; the table maps ports to the ids.
  EXPECT_EQ(class_order(after.slot), (std::vector<uint8_t>{0, 3, 1, 2}));
  EXPECT_EQ(after.slot.table.by_port[LV_L4_UDP][1], 0);
  EXPECT_EQ(after.slot.table.by_port[LV_L4_UDP][3], 3);
  EXPECT_EQ(after.slot.table.by_port[LV_L4_UDP][2], 1);
  EXPECT_EQ(after.slot.table.by_port[LV_L4_UDP][9], 2) << "default";
  EXPECT_STREQ(after.slot.classes[3].name, "new");
  EXPECT_STREQ(after.slot.classes[1].name, "b");
}

TEST(ClassIds, ANewClassDoesNotTakeAnIdJustFreed) {
  auto before = compile(policy_of({udp_class("a", 1), udp_class("b", 2)}), kClocks);
  // "a" (id 0) goes, "c" comes: it must not inherit a's sources' state.
  auto after = compile(policy_of({udp_class("c", 3), udp_class("b", 2)}), kClocks, &before.slot);
  const ClassIds ids = class_ids(after.slot);
  EXPECT_EQ(ids.at("b"), 1);
  EXPECT_EQ(ids.at("default"), 2);
  EXPECT_NE(ids.at("c"), 0);
  EXPECT_EQ(ids.at("c"), 3);
}

TEST(ClassIds, WhenOnlyFreedIdsAreLeftOneIsReused) {
  std::vector<ClassSpec> full;
  for (unsigned i = 0; i < LV_MAX_CLASSES - 1; ++i)
    full.push_back(udp_class("c" + std::to_string(i), static_cast<uint16_t>(i)));
  auto before = compile(policy_of(full), kClocks);
  full[10] = udp_class("replacement", 10);  // the only free id is the one just freed
  auto after = compile(policy_of(full), kClocks, &before.slot);
  EXPECT_EQ(class_ids(after.slot).at("replacement"), 10);
  EXPECT_EQ(class_order(after.slot).size(), LV_MAX_CLASSES);
}

TEST(ClassIds, OverrideBitmasksUseIds) {
  auto before = compile(policy_of({udp_class("a", 1), udp_class("b", 2)}), kClocks);
  Policy p = policy_of({udp_class("new", 3), udp_class("b", 2)});
  OverrideSpec o;
  o.name = "partner";
  o.packets = {5000, 500};
  o.classes = {"b"};
  p.overrides.push_back(o);
  auto after = compile(p, kClocks, &before.slot);
  EXPECT_EQ(after.slot.overrides[0].classes, uint64_t{1} << 1) << "b keeps id 1";
  p.overrides[0].classes.clear();  // every class
  auto all = compile(p, kClocks, &before.slot);
  uint64_t want = 0;
  for (uint8_t id : class_order(all.slot)) want |= uint64_t{1} << id;
  EXPECT_EQ(all.slot.overrides[0].classes, want);
}

}  // namespace
}  // namespace levee

namespace levee {
namespace {

// An id handed to a new class, even one freed reloads ago, moves to the next epoch, so
// the new class never finds the old one's per-source state; a kept class keeps its
// epoch and counter baseline.
TEST(ClassEpochs, AReusedIdMovesToTheNextEpochAKeptClassKeepsItsOwn) {
  auto first = compile(policy_of({udp_class("old", 1), udp_class("b", 2)}), kClocks);
  EXPECT_TRUE(first.new_ids.empty()) << "nothing is new without a prior policy";
  first.slot.class_base[1].passed.packets = 77;  // as a reload would have recorded

  // "old" (id 0) removed: its id stays unused, keeping its epoch.
  auto second = compile(policy_of({udp_class("b", 2)}), kClocks, &first.slot);
  EXPECT_EQ(class_ids(second.slot).at("b"), 1);
  EXPECT_EQ(second.slot.classes[0].epoch, 0);
  EXPECT_EQ(second.slot.class_base[1].passed.packets, 77u) << "b keeps its baseline";

  // A reload later "new" takes id 0: the next epoch, and a baseline to be taken.
  auto third = compile(policy_of({udp_class("new", 3), udp_class("b", 2)}), kClocks, &second.slot);
  const uint8_t id = class_ids(third.slot).at("new");
  EXPECT_EQ(third.slot.classes[id].epoch, second.slot.classes[id].epoch + 1);
  EXPECT_EQ(third.new_ids, std::vector<uint8_t>{id});
  EXPECT_EQ(third.slot.classes[class_ids(third.slot).at("b")].epoch, 0) << "b is the same class";
}

TEST(ClassEpochs, EpochsWrapAndKeepMoving) {
  auto p = compile(policy_of({udp_class("x", 1)}), kClocks);
  for (int i = 0; i < 300; ++i) {
    const uint8_t before = p.slot.classes[0].epoch;
    // Alternate the class's name: each reload gives id 0 to a new class.
    p = compile(policy_of({udp_class(i % 2 ? "x" : "y", 1)}), kClocks, &p.slot);
    const uint8_t id = class_order(p.slot)[0];
    if (id == 0) {
      EXPECT_EQ(p.slot.classes[0].epoch, static_cast<uint8_t>(before + 1));
    }
  }
}

}  // namespace
}  // namespace levee
