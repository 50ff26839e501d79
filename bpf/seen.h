/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * seen.h - the known-source filter (lv_seen, struct lv_seen): a bit per hash of every
 * source with state, so a spoofed flood past the admission budget is refused without
 * the map lookup that would miss.
 */
#ifndef LEVEE_SEEN_H
#define LEVEE_SEEN_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "context.h"
#include "maps.h"

/* Mark a source as possibly known in both halves of lv_seen (struct lv_seen). */
static __always_inline void lv_seen_set(struct lv_ctx *c, const struct lv_key *key)
{
	__u32 h = lv_seen_hash(key, c->ctl->seen_seed);
	__u32 w = h >> 6;
	__u64 bit = 1ULL << (h & 63), *p;

	p = bpf_map_lookup_elem(&lv_seen, &w);
	if (p)
		__sync_fetch_and_or(p, bit);
	w += LV_SEEN_WORDS;
	p = bpf_map_lookup_elem(&lv_seen, &w);
	if (p)
		__sync_fetch_and_or(p, bit);
}

/* Certainly no state for this packet's source (its lv_seen bit is clear)? */
static __always_inline int lv_seen_never(struct lv_ctx *c)
{
	__u32 h = lv_seen_hash(&c->key, c->ctl->seen_seed);
	__u32 w = (h >> 6) + (c->ctl->seen_active & 1) * LV_SEEN_WORDS;
	__u64 *p = bpf_map_lookup_elem(&lv_seen, &w);

	return p && !(*p & (1ULL << (h & 63)));
}

#endif /* LEVEE_SEEN_H */
