/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * limit.h - every level of limits for one packet of a limited class: its source
 * (packets and bytes, or its network's override), what sources on probation share,
 * an escalated network, its network, the class as a whole. A source it has no state
 * for yet is an arrival (arrival.h).
 */
#ifndef LEVEE_LIMIT_H
#define LEVEE_LIMIT_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "limiter.h"
#include "arrival.h"
#include "bans.h"
#include "cas.h"
#include "clock.h"
#include "context.h"
#include "hot.h"
#include "levels.h"
#include "maps.h"
#include "stage.h"
#include "state.h"
#include "synauth.h"
#include "syn_auto.h"
#include "watch.h"

/* The state of the staged source (on probation or not), in a global function. */
static __always_inline struct lv_state *lv_state_of(struct lv_ctx *c, int probation)
{
	struct lv_key k = c->key;

	if (probation)
		k.family |= LV_KEY_PROBATION;
	return bpf_map_lookup_elem(&lv_state, &k);
}

/* Give back what lv_levels() charged: the allowance of sources on probation, the
 * network, the class total. */
static __always_inline void lv_levels_refund(struct lv_ctx *c, int probation)
{
	const struct lv_class *cls = c->cls;

	if (probation && lv_guard_engaged(c))
		__sync_fetch_and_add(&c->sh->newcomer_ready, -lv_guard_cost_now(c));
	if (cls->flags & LV_CLASS_NETWORK) {
		struct lv_key k;

		lv_net_key(c, &k);
		lv_refund_pair(bpf_map_lookup_elem(&lv_state, &k), &cls->net_pkt, &cls->net_bytes, c->len);
	}
	if (cls->flags & LV_CLASS_TOTAL)
		lv_total_refund(c);
}

/* ---- the global functions ----------------------------------------------------------- */

/*
 * The configured levels above a source, for a packet its own limits passed: what
 * sources on probation share, its network, the class total. One that refuses gives
 * back what the ones before it charged (the source's own charge is the caller's).
 */
__attribute__((noinline)) __u32 lv_levels(void)
{
	struct lv_state *net = NULL;
	struct lv_ctx c = {};
	struct lv_call *call = lv_unstage(&c);
	__u32 r;

	if (!call)
		return LV_R_MAP_FULL;
	if (call->probation) {
		r = lv_newcomer_take(&c, call->t);
		if (r != LV_R_CONFORMING) {
			call->hot_ready = LV_READ_ONCE(c.sh->newcomer_ready);
			return r;
		}
	}
	r = lv_levels_take(&c, call->t, &net, &call->hot_ready);
	if (r == LV_R_CONFORMING) {
		if (net)
			net->passed += 1 | c.len << 32; /* (a network's drops are not counted in it) */
		return r;
	}
	if (call->probation && lv_guard_engaged(&c))
		__sync_fetch_and_add(&c.sh->newcomer_ready, -lv_guard_cost_now(&c));
	return r;
}

/* The autopilot's watch of the packet's network (watch.h), after every other level
 * passed it; refused, what lv_levels() charged is given back. */
__attribute__((noinline)) __u32 lv_watching(void)
{
	struct lv_call *call;
	struct lv_ctx c = {};
	__u32 r;

	call = lv_unstage(&c);
	if (!call)
		return LV_R_MAP_FULL;
	r = lv_watch(&c, call->t, call->born_ns, call->sample, &call->hot_ready);
	if (r != LV_R_CONFORMING && call->charged)
		lv_levels_refund(&c, call->probation);
	return r;
}

/* A packet its source's own limits refused in a class with bans: the ban's decision
 * (bans.h). */
__attribute__((noinline)) __u32 lv_banning(void)
{
	struct lv_ctx c = {};
	struct lv_call *call = lv_unstage(&c);
	struct lv_state *st;
	__u32 reason;

	if (!call)
		return LV_R_MAP_FULL;
	reason = call->reason == LV_R_BYTES ? LV_R_BYTES : LV_R_RATE;
	st = lv_state_of(&c, call->probation);
	if (!st) /* evicted this very moment: refused all the same */
		return reason;
	return lv_ban(&c, st, reason, call->t);
}

/* A sampled arrival the class refused, charged to its network's watch (watch.h). */
__attribute__((noinline)) __u32 lv_watching_refused(void)
{
	struct lv_ctx c = {};

	if (lv_unstage(&c))
		lv_watch_refused(&c, c.now);
	return 0;
}

/* A packet whose source has no state under its key in its class: lv_new_source(). */
__attribute__((noinline)) __u32 lv_arrival(void)
{
	struct lv_ctx c = {};
	struct lv_call *call = lv_unstage(&c);

	return call ? lv_new_source(&c, &call->t) : LV_R_MAP_FULL;
}

/* ---- every level ------------------------------------------------------------------- */

/* The levels above the source, if the packet needs any: LV_R_CONFORMING, or the
 * refusing reason with *hot_ready. Only a class with network or total limits or a
 * source on probation calls lv_levels(); only the watch's sample (one passed packet in
 * 2^sample_shift) or an escalation in the class calls lv_watching(). */
static __always_inline __u32 lv_levels_above(struct lv_ctx *c, const struct lv_state *st, __u64 t, int on_probation,
					     __u64 *hot_ready)
{
	const struct lv_class *cls = c->cls;
	int levels = on_probation || (cls->flags & (LV_CLASS_NETWORK | LV_CLASS_TOTAL)), sample = 0, watch = 0;
	struct lv_pilot *pilot = lv_pilot_of(c);
	struct lv_call *call;
	__u32 r;

	if (cls->flags & LV_CLASS_ESCALATE) {
		/* A known-good source (one that proved itself, or behaved before) is not
		 * counted against its network: a flash crowd of them is no flood. */
		sample = lv_watch_sampled(c) && !lv_good_known(c);
		watch = sample || !lv_gcra_conforms(pilot->escalated_until_ns, t);
	}
	if (!levels && !watch)
		return LV_R_CONFORMING;
	lv_stage(c);
	call = lv_call_of(c);
	call->t = t;
	call->probation = on_probation;
	call->sample = sample;
	call->charged = 0;
	call->hot_ready = 0;
	call->born_ns = LV_READ_ONCE(st->born_ns);
	if (levels) {
		r = lv_levels();
		if (r != LV_R_CONFORMING) {
			*hot_ready = call->hot_ready;
			return r;
		}
		call->charged = 1;
	}
	if (!watch)
		return LV_R_CONFORMING;
	r = lv_watching();
	*hot_ready = call->hot_ready;
	/* The one packet in 2^sample_shift that reads lv_shared: after the watch, which may
	 * have just escalated the network. */
	if (sample)
		pilot->escalated_until_ns = LV_READ_ONCE(c->sh->escalated_until_ns);
	return r;
}

/* The levels above a source whose own limits passed the packet at `t`: passed, or
 * refused with the source's charge given back. `fresh`: the state was made with this
 * packet (its display count has it already). */
static __always_inline __u32 lv_limit_above(struct lv_ctx *c, struct lv_state *st, int on_probation, __u64 t, int fresh)
{
	const struct lv_limits *lim = &c->lim;
	__u64 hot_ready = 0;
	__u32 r = lv_levels_above(c, st, t, on_probation, &hot_ready);

	if (r != LV_R_CONFORMING) {
		lv_refund_pair(st, lim->pkt, lim->bytes, c->len);
		if (fresh)
			st->passed -= 1 | c->len << 32;
		return lv_reject(c, st, hot_ready, r, r);
	}
	if (!fresh)
		st->passed += 1 | c->len << 32; /* display counter: see lv_reject() */
	return LV_R_CONFORMING;
}

/*
 * A packet of a source with state (`st`, on probation or not): its own limits, then the
 * levels above it. A packet passes only if every level passes it; one refused at a
 * later level costs the earlier ones nothing (their charge is given back). `fresh`: the
 * state was just made with this packet charged to its own limits at lv_call.t.
 */
static __always_inline __u32 lv_limit_state(struct lv_ctx *c, struct lv_state *st, int on_probation, int fresh)
{
	const struct lv_class *cls = c->cls;
	const struct lv_limits *lim = &c->lim;
	const int fast = (c->lim_flags & LV_CLASS_FAST_REJECT) && !(cls->flags & LV_CLASS_BAN);
	__u64 ready, ready_b, t, hot_ready = 0;
	__u32 r;

	if (fresh)
		return lv_limit_above(c, st, on_probation, lv_call_of(c)->t, 1);
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
	if (r == LV_R_CONFORMING)
		return lv_limit_above(c, st, on_probation, t, 0);
	if ((cls->flags & LV_CLASS_BAN) && (r == LV_R_RATE || r == LV_R_BYTES)) {
		struct lv_call *call = lv_call_of(c);

		lv_stage(c);
		call->t = t;
		call->probation = on_probation;
		call->reason = r;
		return lv_banning();
	}
	return lv_reject(c, st, hot_ready, r, r);
}

/* An arrival refused as new (admission, newcomer) in a class that watches networks:
 * one in 2^sample_shift is charged to its network. Returns `r`. */
static __always_inline __u32 lv_refused_arrival(struct lv_ctx *c, __u32 r)
{
	if ((r == LV_R_ADMISSION || r == LV_R_NEWCOMER) && lv_escalation_guards_admission(c->cls) &&
	    lv_watch_sampled(c)) {
		lv_stage(c);
		lv_watching_refused();
		lv_pilot_of(c)->escalated_until_ns = LV_READ_ONCE(c->sh->escalated_until_ns);
	}
	return r;
}

/* A source without state as a source (never seen, or on probation), of a network
 * escalated (as this CPU knows): refused before anything it could spend, without the
 * lookups (watch.h). */
static __always_inline __u32 lv_refuse_escalated(struct lv_ctx *c)
{
	if (!lv_escalation_guards_admission(c->cls) || lv_gcra_conforms(lv_pilot_of(c)->escalated_until_ns, c->now) ||
	    (lv_seen_check(c) & LV_SEEN_KNOWN))
		return 0;
	return lv_watch_refuses_unseen(c);
}

/*
 * Every level of limits for one packet of a limited class: its source, or its arrival,
 * then the levels above it.
 */
static __always_inline __u32 lv_limit(struct lv_ctx *c, struct xdp_md *xdp)
{
	const struct lv_limits *lim = &c->lim;
	int on_probation = 0, fresh = 0;
	enum lv_syn_auto_says says;
	struct lv_state *st;
	__u32 r;

	if (!lim->pkt->cost && !lim->bytes->cost &&
	    !(c->cls->flags & (LV_CLASS_NETWORK | LV_CLASS_TOTAL | LV_CLASS_SYN_AUTH)))
		return LV_R_CONFORMING; /* a class without limits (its autopilot never engages:
					 * nothing for syn_auth = "auto" to do) */

	/* TCP of a source that has not proved its address passes SYN authentication's
	 * gate first, before any budget, which a SYN flood would otherwise spend: always,
	 * or while the autopilot is engaged (syn_auth = "auto"). */
	says = lv_syn_auto_gates(c);
	if (lv_syn_protected(c) || says == LV_AUTO_GATE) {
		r = lv_syn_gate(c, xdp);
		if (r)
			return r;
	}

	/* A spoofed flood past the admission budget: refused on the filter, without the
	 * lookup that would miss (struct lv_seen_pair). (Unless "auto" asked already.) */
	r = says == LV_AUTO_NETWORK_OK ? 0 : lv_refuse_escalated(c);
	if (r)
		return r;
	r = lv_refuse_unseen(c);
	if (r)
		return lv_refused_arrival(c, r);
	/* A source this CPU rejected lately (one of a botnet round robin), without the
	 * LRU lookup. */
	r = lv_hot_rejects(c, lv_hot_slot(&c->key));
	if (r)
		return r;

	st = bpf_map_lookup_elem(&lv_state, &c->key);
	if (!st) {
		lv_stage(c);
		r = lv_arrival();
		if (r < LV_ARRIVED_FOUND)
			return lv_refused_arrival(c, r);
		on_probation = !!(r & LV_ARRIVED_PROBATION);
		fresh = !!(r & LV_ARRIVED_CREATED);
		/* Its key on probation is the packet's with a flag: set for the lookup only,
		 * not copied (the stack is short). */
		if (on_probation)
			c->key.family |= LV_KEY_PROBATION;
		st = bpf_map_lookup_elem(&lv_state, &c->key);
		c->key.family &= ~LV_KEY_PROBATION;
		if (!st) /* evicted this very moment */
			return LV_R_MAP_FULL;
	}
	return lv_limit_state(c, st, on_probation, fresh);
}

#endif /* LEVEE_LIMIT_H */
