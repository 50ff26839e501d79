// filters.hpp - the datapath's two filters of source keys, mapped into the controller:
// lv_seen (which sources may have state, or be on probation) and lv_good (which are
// known-good). Both hash a source's key with lv_seen_hash64() under the attachment's
// seed; their layouts are in bpf/shared/filters.h.
//
// The datapath sets bits with atomic ORs; the controller clears only a half packets do
// not read (after a grace period) and ORs, never stores, so a bit set at the same
// moment is never lost.
#pragma once

#include <cstdint>

#include "core/result.hpp"
#include "datapath/mapped.hpp"
#include "levee_abi.h"

namespace levee {

// lv_seen, mapped: two halves of LV_SEEN_WORDS word pairs (lv_control.seen_active says
// which one packets read).
class SeenMap {
 public:
  static Result<SeenMap> map(int seen_fd);
  lv_seen_pair* half(unsigned h) { return p_ + size_t{h & 1} * LV_SEEN_WORDS; }

 private:
  explicit SeenMap(MappedArray m) : m_(std::move(m)), p_(m_.as<lv_seen_pair>()) {}
  MappedArray m_;
  lv_seen_pair* p_;
};

// One half of lv_seen (LV_SEEN_WORDS pairs). A key is marked under its key as a source:
// a key on probation (LV_KEY_PROBATION) sets the probation bit of that key.
void seen_clear(lv_seen_pair* half);
void seen_mark(lv_seen_pair* half, const lv_key& k, uint32_t seed);
bool seen_test(const lv_seen_pair* half, const lv_key& k, uint32_t seed);
// OR a known-good half's words into a seen half's known words: every known-good source
// then reads as "may have state", which the datapath's refusal on lv_seen relies on.
void seen_cover(lv_seen_pair* half, const __u64* good_half);

// One half of lv_good: its LV_SEEN_WORDS words and its summary's LV_GOOD_SUM_WORDS
// (bpf/shared/filters.h: a summary bit is set after the bits it covers, and cleared before them).
struct GoodHalf {
  __u64* words;
  __u64* summary;
};

// lv_good, mapped: two halves (lv_control.good_active says which one packets read). The
// mapping is shared with the datapath: a half of a const map may still be written.
class GoodMap {
 public:
  static Result<GoodMap> map(int good_fd);
  GoodHalf half(unsigned h) const { return {p_ + lv_good_entry(h, 0), p_ + lv_good_sum_entry(h, 0)}; }

 private:
  explicit GoodMap(MappedArray m) : m_(std::move(m)), p_(m_.as<__u64>()) {}
  MappedArray m_;
  __u64* p_;
};

// One half of lv_good: the source's three bits (lv_good_bits()) and its summary bit.
void good_clear(GoodHalf half);
void good_mark(GoodHalf half, const lv_key& k, uint32_t seed);
bool good_test(GoodHalf half, const lv_key& k, uint32_t seed);

// How full one half of lv_good is, and what that costs: `fill` is the share of its words'
// bits that are set; `false_positive` the share of sources never marked that would test
// good in it, estimated from its words and summary as they are (good_fill()).
struct GoodFill {
  double fill = 0;
  double false_positive = 0;
};
// The one rule relating a half's fill to its false positives (unit-tested against
// measured rates, filters_test.cpp). A source never marked has its first bit at a
// uniform position: in word w, quarter q (the 16 positions one summary bit covers), with
// probability 1/(4 x LV_SEEN_WORDS). It tests good when that summary bit is set, its first
// bit is set (p_q/16, p_q the bits set in that quarter) and its two other bits, uniform in
// the word, are set ((p/64)^2 with p the word's bits): the sum of those over every word
// and quarter. Exact up to the two other bits falling on the first (about 3 %, which makes
// it a slight overestimate).
GoodFill good_fill(GoodHalf half);

// The key a filter hashes for a source's key: its key as a source (no flags).
lv_key filter_key(const lv_key& k);

}  // namespace levee
