/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * state.h - one limiter state in lv_state, a source's or a network's (the key says):
 * created with its first packet passed, and its two limits, packets and bytes, taken,
 * given back and checked as a pair.
 */
#ifndef LEVEE_STATE_H
#define LEVEE_STATE_H

#include <linux/bpf.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "limiter.h"
#include "cas.h"
#include "context.h"
#include "maps.h"
#include "seen.h"
#include "tunables.h"

/* A new state with this packet already passed through `p` and `b`. */
static __always_inline void lv_state_first(struct lv_state *s, const struct lv_limit *p, const struct lv_limit *b,
					   __u64 now, __u64 len)
{
	s->ready_ns = p->cost ? lv_gcra_first(now, p) : 0;
	s->ready_bytes_ns = b->cost ? lv_gcra_after(0, now, lv_byte_cost(len, b), b->tau_ns) : 0;
	s->passed = 1 | len << 32;
	s->dropped = 0;
	s->born_ns = now;
}

/* One more entry in lv_state, for when_full = "refuse" (struct lv_shared.sources). */
static __always_inline void lv_count_created(struct lv_ctx *c)
{
	struct lv_shared *g;
	__u32 k = LV_MAX_CLASSES;

	if (!(c->pol->flags & LV_POL_REFUSE_FULL))
		return;
	g = bpf_map_lookup_elem(&lv_shared, &k);
	if (g)
		__sync_fetch_and_add(&g->sources, 1);
}

_Static_assert(LV_SCRATCH_STATE * 8 + sizeof(struct lv_state) <= LV_SCRATCH_OPTS * 8, "lv_scratch holds a state");

/*
 * Create a state (a source, on probation or not, or a network: the key says) with this
 * packet passed.
 * BPF_NOEXIST so two CPUs racing on a new key cannot both install a full bucket: the
 * loser gets 1 and goes through the winner's state. Returns 0, 1 or LV_R_MAP_FULL.
 */
static __always_inline int lv_create(struct lv_ctx *c, const struct lv_key *key, const struct lv_limit *p,
				     const struct lv_limit *b, __u64 now)
{
	/* Off the stack, which the program's deepest calls fill. */
	struct lv_state *init = (struct lv_state *)&c->pc->scratch.words[LV_SCRATCH_STATE];
	long err;

	lv_state_first(init, p, b, now, c->len);
	if (key->family & LV_KEY_NETWORK)
		init->passed = 0; /* a network counts its passes once every level passed them */
	err = bpf_map_update_elem(&lv_state, key, init, BPF_NOEXIST);
	if (err == -EEXIST)
		return 1;
	if (err)
		return LV_R_MAP_FULL; /* the LRU could not free a node */
	/* A source's bit, on probation or not, is that of its key as a source. */
	if (!(key->family & (LV_KEY_NETWORK | LV_KEY_WATCH)))
		lv_seen_set(c, &c->key, key->family & LV_KEY_PROBATION);
	lv_count_created(c);
	return 0;
}

/* Pass one packet through a packet limit and a byte limit kept in one state: both or
 * neither (a packet refused by the byte limit gets its packet charge back). Returns
 * LV_R_CONFORMING, or the refusing reason with *ready the time it looks at. */
static __always_inline __u32 lv_take_pair(struct lv_state *st, const struct lv_limit *p, const struct lv_limit *b,
					  __u64 ready, __u64 ready_b, __u64 now, __u64 len, __u32 over_p, __u32 over_b,
					  __u64 *hot_ready)
{
	__u32 r;

	if (p->cost) {
		r = lv_gcra_take(&st->ready_ns, ready, now, p->cost, p->tau_ns, over_p);
		if (r != LV_R_CONFORMING) {
			*hot_ready = LV_READ_ONCE(st->ready_ns);
			return r;
		}
	}
	if (b->cost) {
		r = lv_gcra_take(&st->ready_bytes_ns, ready_b, now, lv_byte_cost(len, b), b->tau_ns, over_b);
		if (r != LV_R_CONFORMING) {
			if (p->cost)
				__sync_fetch_and_add(&st->ready_ns, -p->cost);
			*hot_ready = LV_READ_ONCE(st->ready_bytes_ns);
			return r;
		}
	}
	return LV_R_CONFORMING;
}

/* Give back what lv_take_pair() charged: a packet refused at a later level costs this
 * one nothing. */
static __always_inline void lv_refund_pair(struct lv_state *st, const struct lv_limit *p, const struct lv_limit *b,
					   __u64 len)
{
	if (!st)
		return;
	if (p->cost)
		__sync_fetch_and_add(&st->ready_ns, -p->cost);
	if (b->cost)
		__sync_fetch_and_add(&st->ready_bytes_ns, -lv_byte_cost(len, b));
}

/* Is a state over either of its limits at `t`? *ready: the time it looks at. */
static __always_inline int lv_pair_over(const struct lv_state *st, const struct lv_limit *p, const struct lv_limit *b,
					__u64 t, __u64 *ready)
{
	__u64 r = LV_READ_ONCE(st->ready_ns), rb = LV_READ_ONCE(st->ready_bytes_ns);

	if (p->cost && !lv_gcra_conforms(r, t)) {
		*ready = r;
		return 1;
	}
	if (b->cost && !lv_gcra_conforms(rb, t)) {
		*ready = rb;
		return 1;
	}
	return 0;
}

#endif /* LEVEE_STATE_H */
