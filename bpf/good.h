/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * good.h - the known-good filter (lv_good, lv_good_bits()): sources that behaved before
 * an attack, remembered beyond the LRU, let past an engaged admission budget.
 */
#ifndef LEVEE_GOOD_H
#define LEVEE_GOOD_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "context.h"
#include "maps.h"
#include "seen.h"

/* Is the packet's source (probably: a Bloom filter) known-good? */
static __always_inline int lv_good_known(struct lv_ctx *c)
{
	__u64 h = lv_seen_hash64(&c->key, c->ctl->seen_seed), bits = lv_good_bits(h);
	__u32 w = (__u32)(h >> (64 - LV_SEEN_LOG2 + 6)) + (c->ctl->good_active & 1) * LV_SEEN_WORDS;
	__u64 *p = bpf_map_lookup_elem(&lv_good, &w);

	return p && (*p & bits) == bits;
}

/*
 * Mark the packet's source known-good in both halves of lv_good, and as having state in
 * lv_seen, which must cover lv_good (struct lv_seen_pair). For a datapath that has
 * proved a source real itself (a TCP handshake); the controller marks what behaved.
 */
static __always_inline void lv_good_mark(struct lv_ctx *c)
{
	__u64 h = lv_seen_hash64(&c->key, c->ctl->seen_seed), bits = lv_good_bits(h);
	__u32 w = (__u32)(h >> (64 - LV_SEEN_LOG2 + 6));
	__u64 *p;

	lv_seen_set(c, &c->key, 0);
	p = bpf_map_lookup_elem(&lv_good, &w);
	if (p)
		__sync_fetch_and_or(p, bits);
	w += LV_SEEN_WORDS;
	p = bpf_map_lookup_elem(&lv_good, &w);
	if (p)
		__sync_fetch_and_or(p, bits);
}

#endif /* LEVEE_GOOD_H */
