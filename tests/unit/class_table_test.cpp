// class_table_test.cpp - compile_table() and the datapath's lookup of it (rules.h
// lv_class_of) against first match written out: for random classes matching protocols,
// destination ports, source ports and SYN, every kind of packet with ports of interest
// lands in the first class whose every condition holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "policy/compile.hpp"
#include "policy/policy.hpp"
#include "rules.h"

namespace levee {
namespace {

Proto proto_of(unsigned kind) {
  switch (kind) {
    case LV_L4_TCP_SYN:
    case LV_L4_TCP:
    case LV_L4_TCP_FRAG:
      return Proto::Tcp;
    case LV_L4_UDP:
    case LV_L4_UDP_FRAG:
      return Proto::Udp;
    case LV_L4_ICMP:
      return Proto::Icmp;
    case LV_L4_ICMP6:
      return Proto::Icmp6;
    default:
      return Proto::Other;
  }
}

bool in(const std::vector<PortRange>& v, uint16_t port) {
  return std::any_of(v.begin(), v.end(), [&](const PortRange& r) { return r.first <= port && port <= r.last; });
}

// CONFIG.md's words: every condition given holds. A packet without ports (a later
// fragment, ICMP, other protocols) matches no class that names ports.
bool matches(const Match& m, unsigned kind, uint16_t dport, uint16_t sport) {
  const Proto pr = proto_of(kind);
  if (!m.protos.empty() && std::find(m.protos.begin(), m.protos.end(), pr) == m.protos.end()) return false;
  if (m.syn && kind != LV_L4_TCP_SYN) return false;
  const bool ported = kind < LV_L4_PORTED;
  if (!m.ports.empty() && (!ported || !in(m.ports, dport))) return false;
  if (!m.sports.empty() && (!ported || !in(m.sports, sport))) return false;
  return true;
}

Match random_match(std::mt19937& rng) {
  auto chance = [&](double p) { return std::uniform_real_distribution<>(0, 1)(rng) < p; };
  const std::vector<PortRange> ranges{{53, 53}, {80, 80}, {123, 123}, {1000, 1999}, {0, 1023}};
  Match m;
  for (Proto pr : {Proto::Tcp, Proto::Udp, Proto::Icmp, Proto::Icmp6, Proto::Other})
    if (chance(0.3)) m.protos.push_back(pr);
  const bool ported =
      std::all_of(m.protos.begin(), m.protos.end(), [](Proto p) { return p == Proto::Tcp || p == Proto::Udp; });
  if (ported && chance(0.7)) {
    auto& v = chance(0.5) ? m.sports : m.ports;  // one or the other, as validate() allows
    v.push_back(ranges[rng() % ranges.size()]);
    if (chance(0.3)) v.push_back(ranges[rng() % ranges.size()]);
  }
  if ((m.protos.empty() || m.protos == std::vector<Proto>{Proto::Tcp}) && chance(0.2)) m.syn = true;
  return m;
}

TEST(ClassTable, FirstMatchAcrossDestinationAndSourcePorts) {
  std::mt19937 rng(7);
  const std::vector<uint16_t> ports{0, 53, 80, 123, 999, 1000, 1500, 1999, 2000, 40000, 65535};
  auto t = std::make_unique<lv_class_table>();
  size_t by_source = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<ClassSpec> classes(1 + rng() % 6);
    for (size_t i = 0; i + 1 < classes.size(); ++i) classes[i].match = random_match(rng);
    // Stable ids in any order, as class_ids gives them.
    std::vector<uint8_t> ids(classes.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint8_t>(i);
    std::shuffle(ids.begin(), ids.end(), rng);
    compile_table(classes, *t, ids);
    const bool any_sport =
        std::any_of(classes.begin(), classes.end(), [](const ClassSpec& c) { return !c.match.sports.empty(); });
    const uint32_t flags = any_sport ? LV_POL_SPORT : 0;
    for (unsigned kind = 0; kind < LV_L4_KINDS; ++kind)
      for (uint16_t dport : ports)
        for (uint16_t sport : ports) {
          size_t want = 0;
          while (!matches(classes[want].match, kind, dport, sport)) ++want;
          const uint32_t got = lv_class_of(t.get(), flags, kind, dport, sport);
          ASSERT_EQ(got, ids[want]) << "round " << round << " kind " << kind << " dport " << dport << " sport "
                                    << sport;
          by_source += !classes[want].match.sports.empty();
        }
  }
  EXPECT_GT(by_source, 2'000u) << "source-port classes took part";
}

}  // namespace
}  // namespace levee
