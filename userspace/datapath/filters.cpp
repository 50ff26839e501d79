#include "datapath/filters.hpp"

#include <atomic>
#include <bit>

namespace levee {
namespace {

__u64 load(const __u64& w) { return std::atomic_ref(const_cast<__u64&>(w)).load(std::memory_order_relaxed); }
void store_zero(__u64& w) { std::atomic_ref(w).store(0, std::memory_order_relaxed); }
void set_bits(__u64& w, __u64 bits) { std::atomic_ref(w).fetch_or(bits, std::memory_order_relaxed); }

// The word of a key in either filter, its bit in lv_seen, and its summary word and bit
// in lv_good.
struct Place {
  uint32_t word;
  __u64 bit;
  __u64 good_bits;
  uint32_t sum_word;
  __u64 sum_bit;
};

Place place_of(const lv_key& k, uint32_t seed) {
  const lv_key key = filter_key(k);
  const uint64_t h = lv_seen_hash64(&key, seed);
  const auto s = static_cast<uint32_t>(h >> (64 - LV_SEEN_LOG2));
  return {s >> 6, uint64_t{1} << (s & 63), lv_good_bits(h), lv_good_sum_word(s), lv_good_sum_bit(s)};
}

}  // namespace

lv_key filter_key(const lv_key& k) {
  lv_key out = k;
  out.family = lv_key_family(k.family);
  return out;
}

Result<SeenMap> SeenMap::map(int fd) {
  LV_TRY_ASSIGN(auto m, MappedArray::map(fd, sizeof(lv_seen_pair) * 2 * LV_SEEN_WORDS, LV_MAP_SEEN));
  return SeenMap(std::move(m));
}

void seen_clear(lv_seen_pair* half) {
  for (uint32_t w = 0; w < LV_SEEN_WORDS; ++w) {
    store_zero(half[w].known);
    store_zero(half[w].probation);
  }
}

void seen_mark(lv_seen_pair* half, const lv_key& k, uint32_t seed) {
  const Place p = place_of(k, seed);
  set_bits((k.family & LV_KEY_PROBATION) ? half[p.word].probation : half[p.word].known, p.bit);
}

bool seen_test(const lv_seen_pair* half, const lv_key& k, uint32_t seed) {
  const Place p = place_of(k, seed);
  return load((k.family & LV_KEY_PROBATION) ? half[p.word].probation : half[p.word].known) & p.bit;
}

void seen_cover(lv_seen_pair* half, const __u64* good_half) {
  for (uint32_t w = 0; w < LV_SEEN_WORDS; ++w)
    if (const __u64 g = load(good_half[w])) set_bits(half[w].known, g);
}

Result<GoodMap> GoodMap::map(int fd) {
  LV_TRY_ASSIGN(auto m, MappedArray::map(fd, sizeof(__u64) * LV_GOOD_ENTRIES, LV_MAP_GOOD));
  return GoodMap(std::move(m));
}

void good_clear(GoodHalf half) {
  // The summary first: a mark landing meanwhile never leaves its bits set under a clear
  // summary bit, which would hide them.
  for (uint32_t w = 0; w < LV_GOOD_SUM_WORDS; ++w) store_zero(half.summary[w]);
  for (uint32_t w = 0; w < LV_SEEN_WORDS; ++w) store_zero(half.words[w]);
}

void good_mark(GoodHalf half, const lv_key& k, uint32_t seed) {
  const Place p = place_of(k, seed);
  set_bits(half.words[p.word], p.good_bits);
  set_bits(half.summary[p.sum_word], p.sum_bit);
}

bool good_test(GoodHalf half, const lv_key& k, uint32_t seed) {
  const Place p = place_of(k, seed);
  return (load(half.summary[p.sum_word]) & p.sum_bit) && (load(half.words[p.word]) & p.good_bits) == p.good_bits;
}

GoodFill good_fill(GoodHalf half) {
  uint64_t bits = 0;
  double fp = 0;
  for (uint32_t w = 0; w < LV_SEEN_WORDS; ++w) {
    const __u64 word = load(half.words[w]);
    if (!word) continue;
    const int p = std::popcount(word);
    bits += static_cast<uint64_t>(p);
    double first = 0;  // sum over the word's quarters with their summary bit set of p_q / 16
    for (uint32_t q = 0; q < 4; ++q) {
      const uint32_t s = (w << 6) | (q << 4);  // the quarter's first lv_seen position
      if (!(load(half.summary[lv_good_sum_word(s)]) & lv_good_sum_bit(s))) continue;
      first += std::popcount((word >> (q * 16)) & 0xffff) / 16.0;
    }
    const double other = p / 64.0;
    fp += first * other * other;
  }
  return {static_cast<double>(bits) / (64.0 * LV_SEEN_WORDS), fp / (4.0 * LV_SEEN_WORDS)};
}

}  // namespace levee
