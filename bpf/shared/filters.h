/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * filters.h - the bitmaps that stay in cache: lv_seen (which sources may have state)
 * and lv_good (known-good sources), their hashes and word layout, shared by the
 * datapath and the controller that refills and ages them.
 */
#ifndef LEVEE_FILTERS_H
#define LEVEE_FILTERS_H

#include "per_source.h"

/*
 * ---- lv_seen: which sources may have state, in a bitmap that stays in cache --------
 *
 * Under a spoofed flood past the admission budget every packet is from an unknown
 * source, and the lookup that finds no state is a cache (and TLB) miss in the LRU's
 * bucket array (16 MB at 1M sources): most of the cost of refusing it. A bit per
 * hash of a source key, set whenever a source's state is created, says "certainly no
 * state" when clear, so such a packet is refused without the lookup. A set bit only
 * means "look it up". Bits are never cleared by the datapath: evicted sources leave
 * theirs set, and a filter that fills up only costs lookups again. Two halves, both
 * set on every creation: the controller may clear the inactive half, refill it from
 * the map and flip lv_control.seen_active to drop stale bits.
 *
 * Each word of sources with state sits beside the same word for sources on probation
 * (LV_KEY_PROBATION, struct lv_auto), in one cache line: an engaged class refuses a
 * source that is on probation, once their allowance is spent, on the same read.
 * A source's bit is the same in both words, and the same as the first of its three
 * bits in the known-good filter (lv_good), whose words are laid out as the known
 * words: a refill ORs lv_good's words into the known ones, so every known-good source
 * also reads as "may have state", and the refusal that reads only lv_seen never turns
 * away a known-good source.
 */
#define LV_SEEN_LOG2 23                          /* bits per half: 1 MB */
#define LV_SEEN_WORDS (1u << (LV_SEEN_LOG2 - 6)) /* u64 words per half */

struct lv_seen_pair {
	__u64 known;     /* sources with state */
	__u64 probation; /* sources on probation */
};

static inline __u64 lv_seen_hash64(const struct lv_key *k, __u32 seed)
{
	const __u32 *w = (const __u32 *)k;
	__u64 h = seed;

	/* Five words, multiplied through: cheap, and spread well enough for a filter an
	 * attacker who does not know the seed cannot aim at. */
	h = (h ^ w[0]) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ w[1]) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ w[2]) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ w[3]) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ w[4]) * 0x9E3779B97F4A7C15ULL;
	return h;
}

/* A source's bit in lv_seen: word (h >> 6), bit (h & 63). */
static inline __u32 lv_seen_hash(const struct lv_key *k, __u32 seed)
{
	return (__u32)(lv_seen_hash64(k, seed) >> (64 - LV_SEEN_LOG2));
}

/*
 * ---- lv_good: known-good sources, beyond the LRU ---------------------------------------
 *
 * Sources that behaved before an attack (the controller decides: docs/CONFIG.md,
 * known_good_after) are remembered in a blocked Bloom filter: three bits in one word,
 * the word and first bit those of lv_seen (lv_seen_hash()), the other two from lower
 * bits of the same hash. Marking sets both halves; the controller clears the inactive
 * half and flips lv_control.good_active every known_good_for, so a mark lasts between
 * one and two of those periods unless it is renewed. Pinned: it survives restarts.
 * False positives for random sources, with the summary below (measured by the unit
 * tests, filters_test.cpp): under 2e-4 at 100k marked sources, 1 % at some 600k,
 * 3.2 % at 1M, 14 % at 2M. levee run therefore ages the filter early once its fill
 * says 1 % (good_fill(), at most once a minute), and bounds the marks of one network
 * (lv_answer.marks_per_network), so one /48 cannot fill it.
 */
static inline __u64 lv_good_bits(__u64 h)
{
	return (1ULL << ((h >> (64 - LV_SEEN_LOG2)) & 63)) | (1ULL << ((h >> 32) & 63)) | (1ULL << ((h >> 26) & 63));
}

/*
 * Each half has a summary after both halves: a bit for every 2^LV_GOOD_SUM_SHIFT
 * positions of a source's first bit (its lv_seen position), set by every mark after
 * the source's bits, cleared only with its half and before its words. A clear bit
 * means no source there is marked, so a source is tested without reading its word, a
 * cold line in 1 MB, while the 64 KB summary stays in cache: most sources of a random
 * flood are settled there while the filter holds up to some 100k marks (a summary bit
 * is set for 2 % of sources at 10k, 18 % at 100k, 93 % at 1M). A mark racing the clear
 * of its half may be lost, as it may be in the words themselves.
 */
#define LV_GOOD_SUM_SHIFT 4
#define LV_GOOD_SUM_WORDS (1u << (LV_SEEN_LOG2 - LV_GOOD_SUM_SHIFT - 6)) /* u64 words of a half's summary */
#define LV_GOOD_ENTRIES (2 * LV_SEEN_WORDS + 2 * LV_GOOD_SUM_WORDS)      /* lv_good's words in all */

/* The entry of lv_good that holds, in half `half`, the bits of the sources whose first
 * bit is at lv_seen position `s` (lv_seen_hash()): lv_seen's word. */
static inline __u32 lv_good_entry(__u32 half, __u32 s)
{
	return (half & 1) * LV_SEEN_WORDS + (s >> 6) % LV_SEEN_WORDS;
}

/* The word of a half's summary for the sources whose first bit is at lv_seen position
 * `s`, its entry in lv_good for half `half`, and the bit there. */
static inline __u32 lv_good_sum_word(__u32 s)
{
	return (s >> (LV_GOOD_SUM_SHIFT + 6)) % LV_GOOD_SUM_WORDS;
}

static inline __u32 lv_good_sum_entry(__u32 half, __u32 s)
{
	return 2 * LV_SEEN_WORDS + (half & 1) * LV_GOOD_SUM_WORDS + lv_good_sum_word(s);
}

static inline __u64 lv_good_sum_bit(__u32 s)
{
	return 1ULL << ((s >> LV_GOOD_SUM_SHIFT) & 63);
}

#ifndef __bpf__
LV_STATIC_ASSERT(sizeof(struct lv_seen_pair) == 16, "lv_seen_pair layout");
#endif

#endif /* LEVEE_FILTERS_H */
