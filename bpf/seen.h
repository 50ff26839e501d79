/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * seen.h - the known-source filter (lv_seen, struct lv_seen_pair): a bit per hash of
 * every source with state, and beside it of every source on probation, so a spoofed
 * flood past the admission budget is refused without the map lookup that would miss.
 */
#ifndef LEVEE_SEEN_H
#define LEVEE_SEEN_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "context.h"
#include "maps.h"

/* Mark a source (by its key as a source, never on probation) in both halves of lv_seen:
 * as having state, or as on probation. */
static __always_inline void lv_seen_set(struct lv_ctx *c, const struct lv_key *key, int probation)
{
	__u32 h = lv_seen_hash(key, c->ctl->seen_seed);
	__u32 w = h >> 6;
	__u64 bit = 1ULL << (h & 63);
	struct lv_seen_pair *p;

	p = bpf_map_lookup_elem(&lv_seen, &w);
	if (p)
		__sync_fetch_and_or(probation ? &p->probation : &p->known, bit);
	w += LV_SEEN_WORDS;
	p = bpf_map_lookup_elem(&lv_seen, &w);
	if (p)
		__sync_fetch_and_or(probation ? &p->probation : &p->known, bit);
}

/* What the active half of lv_seen says of this packet's source: bits. */
enum lv_seen_says {
	LV_SEEN_KNOWN = 1,     /* it may have state as a source: look it up */
	LV_SEEN_PROBATION = 2, /* it may be on probation */
			       /* 0: certainly no state, as a source or on probation */
};

/* Read once per packet (cached in c->seen). */
static __always_inline __u32 lv_seen_check(struct lv_ctx *c)
{
	__u32 h, w;
	__u64 bit;
	struct lv_seen_pair *p;

	if (c->seen >= 0)
		return c->seen;
	h = lv_seen_hash(&c->key, c->ctl->seen_seed);
	w = (h >> 6) + (c->ctl->seen_active & 1) * LV_SEEN_WORDS;
	bit = 1ULL << (h & 63);
	p = bpf_map_lookup_elem(&lv_seen, &w);
	if (!p) /* cannot happen: an array entry for every word */
		c->seen = LV_SEEN_KNOWN | LV_SEEN_PROBATION;
	else
		c->seen = ((p->known & bit) ? LV_SEEN_KNOWN : 0) | ((p->probation & bit) ? LV_SEEN_PROBATION : 0);
	return c->seen;
}

#endif /* LEVEE_SEEN_H */
