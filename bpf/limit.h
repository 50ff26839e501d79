/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * limit.h - every level of limits for one packet of a limited class: its source
 * (packets and bytes, or its network's override), its network, the class as a whole,
 * and the admission of a source it has no state for yet.
 */
#ifndef LEVEE_LIMIT_H
#define LEVEE_LIMIT_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "limiter.h"
#include "bans.h"
#include "cas.h"
#include "clock.h"
#include "context.h"
#include "hot.h"
#include "levels.h"
#include "maps.h"
#include "seen.h"
#include "state.h"

/* ---- a source with no state yet ---------------------------------------------------- */

/* Does the map refuse new sources (when_full = "refuse") and hold as many as it takes? */
static __always_inline int lv_refuses_new(struct lv_ctx *c)
{
	__u32 k = LV_MAX_CLASSES;
	struct lv_shared *g;

	if (!(c->pol->flags & LV_POL_REFUSE_FULL))
		return 0;
	g = bpf_map_lookup_elem(&lv_shared, &k);
	return g && LV_READ_ONCE(g->sources) >= c->pol->full_at;
}

/* Charge the class's admission budget, when it has one. *t: the fine clock, for the
 * levels after it. */
static __always_inline __u32 lv_admit(struct lv_ctx *c, __u64 *t)
{
	const struct lv_class *cls = c->cls;
	__u64 ready;

	if (!(cls->flags & LV_CLASS_ADMIT)) {
		*t = lv_clock_now(&c->pc->clock, c->now);
		return LV_R_CONFORMING;
	}
	ready = LV_READ_ONCE(c->sh->admit_ready);
	/* Refused on the cached clock (at most a tick early), so a flood that has
	 * spent the budget costs no fine clock read and no write. */
	if (!lv_gcra_conforms(ready, c->now))
		return LV_R_ADMISSION;
	*t = lv_clock_now(&c->pc->clock, c->now);
	return lv_gcra_take(&c->sh->admit_ready, ready, *t, cls->admit.cost, cls->admit.tau_ns, LV_R_ADMISSION);
}

/* Give back what lv_admit() charged. */
static __always_inline void lv_admit_refund(struct lv_ctx *c)
{
	if (c->cls->flags & LV_CLASS_ADMIT)
		__sync_fetch_and_add(&c->sh->admit_ready, -c->cls->admit.cost);
}

/* The source's state, created with this packet passed, every level charged. Refused by
 * the map, or another CPU created the source meanwhile: nothing is charged for this
 * packet but what its source's own limits decide (*out: that CPU's state). */
static __always_inline __u32 lv_new_state(struct lv_ctx *c, __u64 t, struct lv_state *net, struct lv_state **out)
{
	const struct lv_class *cls = c->cls;
	int made = lv_create(c, &c->key, c->lim.pkt, c->lim.bytes, t);

	if (made == 0) {
		if (net)
			net->passed += 1 | c->len << 32; /* display: networks count passes only */
		if (cls->flags & LV_CLASS_ADMIT)
			__sync_fetch_and_add(&c->sh->admitted, 1);
		return LV_R_CONFORMING;
	}
	lv_refund_pair(net, &cls->net_pkt, &cls->net_bytes, c->len);
	if (cls->flags & LV_CLASS_TOTAL)
		lv_total_refund(c);
	lv_admit_refund(c);
	if (made != 1)
		return made;
	*out = bpf_map_lookup_elem(&lv_state, &c->key);
	return *out ? LV_R_CONFORMING : LV_R_MAP_FULL;
}

/*
 * A source with no state yet. It gets state only if every level would pass this
 * packet: its network and the class total are checked read-only first (a flood that
 * has spent them never touches the admission budget), then the admission budget is
 * charged, then the network and the total, then the state is created. A level that
 * refuses gives back what the levels before it charged.
 */
static __always_inline __u32 lv_new_source(struct lv_ctx *c, struct lv_state **out)
{
	struct lv_state *net = NULL;
	__u64 t, hot_ready = 0;
	__u32 r;

	*out = NULL;
	if (c->cls->flags & (LV_CLASS_NETWORK | LV_CLASS_TOTAL)) {
		r = lv_levels_over(c);
		if (r != LV_R_CONFORMING)
			return r;
	}
	if (lv_refuses_new(c))
		return LV_R_MAP_FULL;
	r = lv_admit(c, &t);
	if (r != LV_R_CONFORMING)
		return r;
	r = lv_levels_take(c, t, &net, &hot_ready);
	if (r != LV_R_CONFORMING) {
		lv_admit_refund(c);
		return lv_reject(c, NULL, hot_ready, r, r);
	}
	return lv_new_state(c, t, net, out);
}

/* ---- every level ------------------------------------------------------------------- */

/*
 * Every level of limits for one packet of a limited class: its source (packets and
 * bytes, or its network's override), its network, the class as a whole. A packet
 * passes only if every level passes it; one refused at a later level costs the
 * earlier ones nothing (their charge is given back).
 */
static __always_inline __u32 lv_limit(struct lv_ctx *c)
{
	const struct lv_class *cls = c->cls;
	const struct lv_limits *lim = &c->lim;
	const int fast = (lim->flags & LV_CLASS_FAST_REJECT) && !(cls->flags & LV_CLASS_BAN);
	struct lv_state *st, *net = NULL;
	__u64 ready, ready_b, t, hot_ready = 0;
	__u32 r;

	if (!lim->pkt->cost && !lim->bytes->cost && !(cls->flags & (LV_CLASS_NETWORK | LV_CLASS_TOTAL)))
		return LV_R_CONFORMING; /* a class without limits */

	/* A spoofed flood past the admission budget: refused on the filter, without the
	 * lookup that would miss (struct lv_seen). */
	if ((cls->flags & LV_CLASS_ADMIT) && !lv_gcra_conforms(LV_READ_ONCE(c->sh->admit_ready), c->now) &&
	    lv_seen_never(c))
		return LV_R_ADMISSION;

	st = bpf_map_lookup_elem(&lv_state, &c->key);
	if (!st) {
		r = lv_new_source(c, &st);
		if (!st)
			return r;
		/* another CPU created it: go through its state */
	}

	ready = LV_READ_ONCE(st->ready_ns);
	ready_b = LV_READ_ONCE(st->ready_bytes_ns);
	if (fast) {
		/* The drop path: no fine clock, no write but the drop count. (Not in classes
		 * with bans: an offence is judged on the fine clock.) */
		t = c->now;
		if (lim->pkt->cost && !lv_gcra_conforms(ready, t))
			return lv_reject(c, st, ready, LV_R_RATE, LV_R_RATE);
		if (lim->bytes->cost && !lv_gcra_conforms(ready_b, t))
			return lv_reject(c, st, ready_b, LV_R_BYTES, LV_R_BYTES);
	}
	t = lv_clock_now(&c->pc->clock, c->now);

	r = lv_take_pair(st, lim->pkt, lim->bytes, ready, ready_b, t, c->len, LV_R_RATE, LV_R_BYTES, &hot_ready);
	if (r != LV_R_CONFORMING) {
		if ((cls->flags & LV_CLASS_BAN) && (r == LV_R_RATE || r == LV_R_BYTES))
			return lv_ban(c, st, r, t);
		return lv_reject(c, st, hot_ready, r, r);
	}
	r = lv_levels_take(c, t, &net, &hot_ready);
	if (r != LV_R_CONFORMING) {
		lv_refund_pair(st, lim->pkt, lim->bytes, c->len);
		return lv_reject(c, st, hot_ready, r, r);
	}
	st->passed += 1 | c->len << 32; /* display counter: see lv_reject() */
	if (net)
		net->passed += 1 | c->len << 32; /* (a network's drops are not counted in it) */
	return LV_R_CONFORMING;
}

#endif /* LEVEE_LIMIT_H */
