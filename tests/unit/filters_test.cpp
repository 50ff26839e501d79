// filters_test.cpp - the known-source and known-good filters as the controller marks
// them (bpf/filters.hpp): the datapath's word and bits, probation beside known, marks
// that race with the datapath's, the cover of known-good by lv_seen, and the known-good
// filter's false-positive rate at the sizes docs/CONFIG.md quotes.
#include <arpa/inet.h>

#include <algorithm>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bpf/filters.hpp"
#include "levee_abi.h"
#include "unit.hpp"

namespace levee {
namespace {

lv_key nth_key(uint32_t i) {
  lv_key k = v4_key("198.18.0.0");
  k.addr[3] = htonl(0xc6120000u + i);
  return k;
}

size_t bits_set(const std::vector<lv_seen_pair>& half) {
  size_t n = 0;
  for (const lv_seen_pair& p : half)
    n += static_cast<size_t>(__builtin_popcountll(p.known) + __builtin_popcountll(p.probation));
  return n;
}

TEST(SeenFilter, MarkSetsTheBitTheDatapathTests) {
  std::vector<lv_seen_pair> half(LV_SEEN_WORDS, lv_seen_pair{~0ULL, ~0ULL});
  seen_clear(half.data());
  EXPECT_EQ(bits_set(half), 0u);
  const uint32_t seed = 0x5eed;
  const lv_key k = v4_key("198.18.0.7");
  EXPECT_FALSE(seen_test(half.data(), k, seed));
  seen_mark(half.data(), k, seed);
  EXPECT_TRUE(seen_test(half.data(), k, seed));
  const uint32_t h = lv_seen_hash(&k, seed);
  EXPECT_EQ(half[h >> 6].known, uint64_t{1} << (h & 63));  // the datapath's word and bit
  EXPECT_EQ(bits_set(half), 1u);
}

TEST(SeenFilter, ASourceOnProbationSetsTheProbationBitOfItsKeyAsASource) {
  std::vector<lv_seen_pair> half(LV_SEEN_WORDS);
  const uint32_t seed = 11;
  const lv_key k = v4_key("198.18.0.9");
  lv_key on_probation = k;
  on_probation.family |= LV_KEY_PROBATION;
  seen_mark(half.data(), on_probation, seed);
  const uint32_t h = lv_seen_hash(&k, seed);  // the key without its flag
  EXPECT_EQ(half[h >> 6].probation, uint64_t{1} << (h & 63));
  EXPECT_EQ(half[h >> 6].known, 0u);
  EXPECT_TRUE(seen_test(half.data(), on_probation, seed));
  EXPECT_FALSE(seen_test(half.data(), k, seed));
}

TEST(SeenFilter, MarkingLosesNoBitSetConcurrently) {
  // The datapath ORs bits into the half being refilled; a plain store of a word would
  // lose them. Two writers on the same words, every bit must survive.
  std::vector<lv_seen_pair> half(LV_SEEN_WORDS);
  std::vector<lv_key> ours, theirs;
  for (uint32_t i = 0; i < 20000; ++i) (i % 2 ? theirs : ours).push_back(nth_key(i));
  const uint32_t seed = 7;
  std::thread datapath([&] {
    for (const lv_key& k : theirs) {
      const uint32_t h = lv_seen_hash(&k, seed);
      __atomic_fetch_or(&half[h >> 6].known, uint64_t{1} << (h & 63), __ATOMIC_RELAXED);
    }
  });
  for (const lv_key& k : ours) seen_mark(half.data(), k, seed);
  datapath.join();
  for (const auto* v : {&ours, &theirs})
    for (const lv_key& k : *v) ASSERT_TRUE(seen_test(half.data(), k, seed));
}

TEST(GoodFilter, AMarkedSourceTestsGoodAndItsFirstBitIsItsSeenBit) {
  std::vector<__u64> good(LV_SEEN_WORDS);
  const uint32_t seed = 3;
  const lv_key k = v4_key("198.18.4.4");
  EXPECT_FALSE(good_test(good.data(), k, seed));
  good_mark(good.data(), k, seed);
  EXPECT_TRUE(good_test(good.data(), k, seed));
  const uint32_t h = lv_seen_hash(&k, seed);
  EXPECT_TRUE(good[h >> 6] & (uint64_t{1} << (h & 63)));  // the seen word and bit
  EXPECT_LE(__builtin_popcountll(good[h >> 6]), 3);
}

TEST(GoodFilter, CoveringPutsEveryKnownGoodSourceInTheSeenFilter) {
  std::vector<__u64> good(LV_SEEN_WORDS);
  std::vector<lv_seen_pair> seen(LV_SEEN_WORDS);
  const uint32_t seed = 5;
  for (uint32_t i = 0; i < 5000; ++i) good_mark(good.data(), nth_key(i), seed);
  seen_cover(seen.data(), good.data());
  for (uint32_t i = 0; i < 5000; ++i) ASSERT_TRUE(seen_test(seen.data(), nth_key(i), seed)) << i;
  for (const lv_seen_pair& p : seen) ASSERT_EQ(p.probation, 0u);
}

// The false-positive rate docs/CONFIG.md and levee_abi.h quote: sources never marked that
// test good, after n marked, over 1M probes.
double false_positive_rate(uint32_t marked) {
  std::vector<__u64> good(LV_SEEN_WORDS);
  const uint32_t seed = 0x9e37;
  for (uint32_t i = 0; i < marked; ++i) {
    lv_key k = v4_key("198.18.0.0");
    k.addr[0] = htonl(0x20010db8);  // an IPv6 key space, as large as the map
    k.addr[2] = htonl(i);
    k.family = LV_AF_INET6;
    good_mark(good.data(), k, seed);
  }
  constexpr uint32_t kProbes = 1'000'000;
  uint32_t hits = 0;
  for (uint32_t i = 0; i < kProbes; ++i) {
    lv_key k{};
    k.addr[0] = htonl(0x20010db9);
    k.addr[2] = htonl(i);
    k.family = LV_AF_INET6;
    hits += good_test(good.data(), k, seed);
  }
  return static_cast<double>(hits) / kProbes;
}

TEST(GoodFilter, FalsePositivesStayWithinWhatTheDocsSay) {
  const double at10k = false_positive_rate(10'000), at100k = false_positive_rate(100'000),
               at1m = false_positive_rate(1'000'000);
  std::cout << "known-good false positives: 10k " << at10k << ", 100k " << at100k << ", 1M " << at1m << "\n";
  EXPECT_LT(at10k, 2e-5);
  EXPECT_LT(at100k, 5e-4);
  EXPECT_LT(at1m, 0.07);
}

}  // namespace
}  // namespace levee
