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

/* Is the packet's source (probably: a Bloom filter) known-good? Its summary bit first,
 * which settles most sources without the cold read of their word. Its hash
 * (lv_seen_hash64()) into `*hash`. */
static __always_inline int lv_good_known_hash(struct lv_ctx *c, __u64 *hash)
{
	__u64 h = lv_seen_hash64(&c->key, c->ctl->seen_seed), bits = lv_good_bits(h);
	__u32 half = c->ctl->good_active & 1, s = (__u32)(h >> (64 - LV_SEEN_LOG2));
	__u32 i = lv_good_sum_entry(half, s);
	__u64 *p = bpf_map_lookup_elem(&lv_good, &i);

	*hash = h;
	if (!p || !(*p & lv_good_sum_bit(s)))
		return 0;
	i = lv_good_entry(half, s);
	p = bpf_map_lookup_elem(&lv_good, &i);
	return p && (*p & bits) == bits;
}

static __always_inline int lv_good_known(struct lv_ctx *c)
{
	__u64 h;

	return lv_good_known_hash(c, &h);
}

/* OR `bits` into entry `i` of lv_good. */
static __always_inline void lv_good_or(__u32 i, __u64 bits)
{
	__u64 *p = bpf_map_lookup_elem(&lv_good, &i);

	if (p)
		__sync_fetch_and_or(p, bits);
}

/*
 * Mark the packet's source known-good in both halves of lv_good (its bits, then its
 * summary bit), and as having state in lv_seen, which must cover lv_good (struct
 * lv_seen_pair). For a datapath that has proved a source real itself (a TCP
 * handshake); the controller marks what behaved.
 */
static __always_inline void lv_good_mark(struct lv_ctx *c)
{
	__u64 h = lv_seen_hash64(&c->key, c->ctl->seen_seed), bits = lv_good_bits(h);
	__u32 s = (__u32)(h >> (64 - LV_SEEN_LOG2)), half;

	lv_seen_set(c, &c->key, 0);
	for (half = 0; half < 2; half++) {
		lv_good_or(lv_good_entry(half, s), bits);
		lv_good_or(lv_good_sum_entry(half, s), lv_good_sum_bit(s));
	}
}

#endif /* LEVEE_GOOD_H */
