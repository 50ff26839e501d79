// filters_test.cpp - the known-source and known-good filters as the controller marks
// them (datapath/filters.hpp): the datapath's word and bits, probation beside known, marks
// that race with the datapath's, the cover of known-good by lv_seen, the known-good
// filter's summary, and its false-positive rates at the sizes docs/CONFIG.md and
// levee_abi.h quote.
#include <arpa/inet.h>

#include <algorithm>
#include <barrier>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "datapath/filters.hpp"
#include "levee_abi.h"
#include "unit.hpp"

namespace levee {
namespace {

lv_key nth_key(uint32_t i) {
  lv_key k = v4_key("198.18.0.0");
  k.addr[3] = htonl(0xc6120000u + i);
  return k;
}

// One half of lv_good, as the map lays it out: words and summary.
struct GoodBuf {
  std::vector<__u64> words = std::vector<__u64>(LV_SEEN_WORDS);
  std::vector<__u64> summary = std::vector<__u64>(LV_GOOD_SUM_WORDS);
  GoodHalf half() { return {words.data(), summary.data()}; }
};

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
  // lose them. The keys are chosen to fall in 4 words, so that the two writers meet on
  // the same words; a barrier starts each round's writers together, and every bit must
  // survive every round. (A plain read-modify-write in set_bits lost bits in 1,730 to
  // 4,864 of the 20,000 rounds, 10 runs of 10; 20,000 marks spread over the whole half
  // with no barrier passed with it, 5 runs of 5.)
  constexpr uint32_t kWords = 4;
  const uint32_t seed = 7;
  std::vector<lv_key> ours, theirs;
  for (uint32_t i = 0; ours.size() + theirs.size() < 48; ++i) {
    const lv_key k = nth_key(i);
    if (lv_seen_hash(&k, seed) >> 6 < kWords) (ours.size() > theirs.size() ? theirs : ours).push_back(k);
  }
  std::vector<lv_seen_pair> half(LV_SEEN_WORDS);
  constexpr int kRounds = 20000;
  std::barrier sync(2);
  std::thread datapath([&] {
    for (int r = 0; r < kRounds; ++r) {
      sync.arrive_and_wait();
      for (const lv_key& k : theirs) {
        const uint32_t h = lv_seen_hash(&k, seed);
        __atomic_fetch_or(&half[h >> 6].known, uint64_t{1} << (h & 63), __ATOMIC_RELAXED);
      }
      sync.arrive_and_wait();
    }
  });
  int lost_rounds = 0;
  for (int r = 0; r < kRounds; ++r) {
    for (uint32_t w = 0; w < kWords; ++w) half[w].known = 0;
    sync.arrive_and_wait();
    for (const lv_key& k : ours) seen_mark(half.data(), k, seed);
    sync.arrive_and_wait();
    bool all = true;
    for (const auto* v : {&ours, &theirs})
      for (const lv_key& k : *v) all = all && seen_test(half.data(), k, seed);
    lost_rounds += all ? 0 : 1;
  }
  datapath.join();
  EXPECT_EQ(lost_rounds, 0) << "of " << kRounds << " rounds";
}

TEST(GoodFilter, AMarkedSourceTestsGoodAndItsFirstBitIsItsSeenBit) {
  GoodBuf good;
  const uint32_t seed = 3;
  const lv_key k = v4_key("198.18.4.4");
  EXPECT_FALSE(good_test(good.half(), k, seed));
  good_mark(good.half(), k, seed);
  EXPECT_TRUE(good_test(good.half(), k, seed));
  const uint32_t h = lv_seen_hash(&k, seed);
  EXPECT_TRUE(good.words[h >> 6] & (uint64_t{1} << (h & 63)));  // the seen word and bit
  EXPECT_LE(__builtin_popcountll(good.words[h >> 6]), 3);
  // ...and the summary bit of that position, the only one set.
  EXPECT_EQ(good.summary[lv_good_sum_word(h)], lv_good_sum_bit(h));
  EXPECT_EQ(std::count(good.summary.begin(), good.summary.end(), 0u), LV_GOOD_SUM_WORDS - 1);
}

// The summary is read first: bits under a clear summary bit are not a mark (the datapath
// reads it so, and skips the word).
TEST(GoodFilter, BitsUnderAClearSummaryBitAreNoMark) {
  GoodBuf good;
  const uint32_t seed = 3;
  const lv_key k = v4_key("198.18.4.5");
  good_mark(good.half(), k, seed);
  const uint32_t h = lv_seen_hash(&k, seed);
  good.summary[lv_good_sum_word(h)] &= ~lv_good_sum_bit(h);
  EXPECT_FALSE(good_test(good.half(), k, seed));
}

TEST(GoodFilter, ClearingAHalfClearsItsSummary) {
  GoodBuf good;
  for (uint32_t i = 0; i < 1000; ++i) good_mark(good.half(), nth_key(i), 7);
  good_clear(good.half());
  EXPECT_EQ(std::count(good.words.begin(), good.words.end(), 0u), LV_SEEN_WORDS);
  EXPECT_EQ(std::count(good.summary.begin(), good.summary.end(), 0u), LV_GOOD_SUM_WORDS);
  EXPECT_FALSE(good_test(good.half(), nth_key(1), 7));
}

TEST(GoodFilter, CoveringPutsEveryKnownGoodSourceInTheSeenFilter) {
  GoodBuf good;
  std::vector<lv_seen_pair> seen(LV_SEEN_WORDS);
  const uint32_t seed = 5;
  for (uint32_t i = 0; i < 5000; ++i) good_mark(good.half(), nth_key(i), seed);
  seen_cover(seen.data(), good.words.data());
  for (uint32_t i = 0; i < 5000; ++i) ASSERT_TRUE(seen_test(seen.data(), nth_key(i), seed)) << i;
  for (const lv_seen_pair& p : seen) ASSERT_EQ(p.probation, 0u);
}

// An IPv6 key of the i-th source of a key space as large as the map.
lv_key v6_source(uint32_t space, uint32_t i) {
  lv_key k{};
  k.addr[0] = htonl(space);
  k.addr[2] = htonl(i);
  k.family = LV_AF_INET6;
  return k;
}

struct Rates {
  double good;     // sources never marked that test good
  double summary;  // ...whose summary bit is set: the datapath reads their word
};

// The rates docs/CONFIG.md and levee_abi.h quote, after n marked, over 1M probes.
Rates false_positive_rates(uint32_t marked) {
  GoodBuf good;
  const uint32_t seed = 0x9e37;
  for (uint32_t i = 0; i < marked; ++i) good_mark(good.half(), v6_source(0x20010db8, i), seed);
  constexpr uint32_t kProbes = 1'000'000;
  uint32_t hits = 0, summary = 0;
  for (uint32_t i = 0; i < kProbes; ++i) {
    const lv_key k = v6_source(0x20010db9, i);
    hits += good_test(good.half(), k, seed);
    const uint32_t h = lv_seen_hash(&k, seed);
    summary += (good.summary[lv_good_sum_word(h)] & lv_good_sum_bit(h)) != 0;
  }
  return {static_cast<double>(hits) / kProbes, static_cast<double>(summary) / kProbes};
}

TEST(GoodFilter, FalsePositivesStayWithinWhatTheDocsSay) {
  const Rates at10k = false_positive_rates(10'000), at100k = false_positive_rates(100'000),
              at1m = false_positive_rates(1'000'000);
  std::cout << "known-good false positives: 10k " << at10k.good << ", 100k " << at100k.good << ", 1M " << at1m.good
            << "; summary bits set: 10k " << at10k.summary << ", 100k " << at100k.summary << ", 1M " << at1m.summary
            << "\n";
  // The keys and the seed are fixed, so these figures are exact: 0, 5.2e-5 and 2.01 %,
  // and 2.03 % and 18.0 % of summary bits. The bounds leave a quarter over them, no
  // more: a filter with one bit fewer per key reads 2.7e-4 at 100k.
  EXPECT_LT(at10k.good, 2e-5);
  EXPECT_LT(at100k.good, 6.5e-5);
  EXPECT_LT(at1m.good, 0.025);
  EXPECT_LT(at10k.summary, 0.025);
  EXPECT_LT(at100k.summary, 0.19);
}

// A random IPv6 source: its key's words drawn.
lv_key random_source(std::mt19937_64& rng) {
  lv_key k{};
  for (uint32_t& w : k.addr) w = static_cast<uint32_t>(rng());
  k.family = LV_AF_INET6;
  return k;
}

// good_fill(), the rule `levee run` ages the filter early by (at 1 % false positives),
// against the rates measured on the same filter with 1M random sources never marked:
// within 10 % of them, from a few marks to four million random sources. (Random keys:
// the sequential keys above hash with some structure, and measure fewer false positives
// than random sources meet: 2.0 % at 1M marks against 3.2 %.)
TEST(GoodFilter, TheFalsePositiveEstimateFromFillMatchesWhatIsMeasured) {
  GoodBuf good;
  const uint32_t seed = 0x9e37;
  std::mt19937_64 marks(1), probes(2);
  EXPECT_EQ(good_fill(good.half()).fill, 0.0);
  EXPECT_EQ(good_fill(good.half()).false_positive, 0.0);
  uint32_t marked = 0;
  double last_fill = 0;
  for (uint32_t n : {100'000u, 500'000u, 600'000u, 650'000u, 1'000'000u, 2'000'000u, 4'000'000u}) {
    for (; marked < n; ++marked) good_mark(good.half(), random_source(marks), seed);
    constexpr uint32_t kProbes = 1'000'000;
    uint32_t hits = 0;
    for (uint32_t i = 0; i < kProbes; ++i) hits += good_test(good.half(), random_source(probes), seed);
    const double measured = static_cast<double>(hits) / kProbes;
    const GoodFill f = good_fill(good.half());
    std::cout << "known-good at " << n << " random marks: fill " << f.fill << ", false positives estimated "
              << f.false_positive << ", measured " << measured << "\n";
    EXPECT_GT(f.fill, last_fill);
    last_fill = f.fill;
    EXPECT_NEAR(f.false_positive, measured, 0.1 * measured + 2e-5) << n << " marks";
    if (n == 600'000) {
      EXPECT_LT(f.false_positive, 0.01) << "the 1 % holds some 600,000 random sources";
    }
    if (n == 650'000) {
      EXPECT_GT(f.false_positive, 0.01);
    }
  }
}

}  // namespace
}  // namespace levee
