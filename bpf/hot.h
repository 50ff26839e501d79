/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hot.h - the reject path and this CPU's hot sources (lv_hotset, struct lv_hot): the
 * sources it dropped last, whose floods' next packets are dropped without the list
 * lookup or the map lookup, and whose drop counts are written once per LV_HOT_MAX_HITS
 * drops.
 */
#ifndef LEVEE_HOT_H
#define LEVEE_HOT_H

#include "levee_abi.h"
#include "limiter.h"
#include "context.h"
#include "events.h"

static __always_inline int lv_key_eq(const struct lv_key *a, const struct lv_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	/* 20 bytes, five words. */
	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4];
}

/*
 * A drop decided on the real path. The source's drop count is kept pending in this
 * CPU's hot entry and written to its state (when there is one) once per
 * LV_HOT_MAX_HITS drops or when another source takes the entry, losing what was
 * pending: a flood costs one write per LV_HOT_MAX_HITS packets, not one cache line
 * bounced between CPUs per packet. When the cached clock may reject (LV_CLASS_FAST_REJECT),
 * the entry also lets the source's next packets before `ready` skip the lookups, counted
 * under `hot_reason`. Returns `reason`.
 */
static __always_inline __u32 lv_reject(struct lv_ctx *c, struct lv_state *st, __u64 ready, __u32 reason,
				       __u32 hot_reason)
{
	__u32 slot = lv_hot_slot(&c->key);
	struct lv_hot *hot = bpf_map_lookup_elem(&lv_hotset, &slot);
	int fast = c->lim_flags & LV_CLASS_FAST_REJECT;
	__u64 n = 1;

	if (!hot) /* cannot happen: an array entry for every slot */
		return reason;
	c->pc->hot_last = slot;
	/* Pending drops belong to the key (the source's state); the address only says
	 * which host the entry may reject for (see lv_hot_rejects()). */
	if (hot->generation == c->pol->generation && lv_key_eq(&hot->key, &c->key)) {
		if (hot->hits < LV_HOT_MAX_HITS) {
			hot->hits++;
			hot->reason = hot_reason;
			hot->fast = fast;
			__builtin_memcpy(hot->addr, c->pkt->addr, sizeof(hot->addr));
			hot->ready_ns = ready;
			return reason;
		}
		n += hot->hits;
	}
	/* Display counters: a plain add, so two CPUs dropping for one source at once may
	 * lose a count, never bounce a locked cache line per packet. */
	if (st) {
		/* A source's first drop is an event, but not for what a class or a network as a
		 * whole decided: sources on probation over their shared allowance, an escalated
		 * network (their engaged and escalated events say it once). */
		if (!LV_COUNT_PACKETS(st->dropped) && !LV_COUNT_BYTES(st->dropped) && reason != LV_R_NEWCOMER &&
		    reason != LV_R_ESCALATED)
			lv_event(c, LV_EV_LIMITED, reason, 0, 0);
		st->dropped += n | (n * c->len) << 32;
	}
	hot->key = c->key;
	__builtin_memcpy(hot->addr, c->pkt->addr, sizeof(hot->addr));
	hot->hits = 0;
	hot->reason = hot_reason;
	hot->fast = fast;
	hot->ready_ns = ready;
	hot->generation = c->pol->generation;
	return reason;
}

/*
 * A flood's next packet: the source this CPU rejected in `slot` of lv_hotset, in the
 * same policy generation, still not eligible by the cached clock. Rejected without the
 * map lookup (struct lv_hot): returns the reason it was rejected for, or 0.
 */
static __always_inline __u32 lv_hot_rejects(struct lv_ctx *c, __u32 slot)
{
	struct lv_hot *hot = bpf_map_lookup_elem(&lv_hotset, &slot);
	const struct lv_policy *pol = c->pol;
	const struct lv_packet *pkt = c->pkt;
	__u32 listed = pkt->family == LV_AF_INET ? pol->nr_list4 | pol->nr_host4 : pol->nr_list6 | pol->nr_host6;

	if (!hot || !hot->fast || hot->hits >= LV_HOT_MAX_HITS || hot->generation != pol->generation ||
	    !lv_key_eq(&hot->key, &c->key))
		return 0;
	if (listed && (hot->addr[0] != pkt->addr[0] || hot->addr[1] != pkt->addr[1] || hot->addr[2] != pkt->addr[2] ||
		       hot->addr[3] != pkt->addr[3]))
		return 0;
	if (lv_gcra_conforms(hot->ready_ns, c->now))
		return 0;
	hot->hits++;
	return hot->reason;
}

#endif /* LEVEE_HOT_H */
