/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arrival.h - a packet of a source its class has no state for: an arrival. It gets
 * state if every level would pass it and its class's admission lets it in: always,
 * within the operator's budget (new_sources), or as the autopilot decides (struct
 * lv_auto): as a source, on probation, or not at all. A source on probation is found,
 * and promoted once its class is calm, here too.
 */
#ifndef LEVEE_ARRIVAL_H
#define LEVEE_ARRIVAL_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "tunables.h"
#include "limiter.h"
#include "guard.h"
#include "cas.h"
#include "clock.h"
#include "context.h"
#include "events.h"
#include "good.h"
#include "hot.h"
#include "levels.h"
#include "maps.h"
#include "seen.h"
#include "state.h"
#include "watch.h"

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

/* ---- the autopilot: struct lv_auto, lv_guard; its rules are guard.h's ------------- */

static __always_inline __u64 lv_guard_cost_now(struct lv_ctx *c)
{
	return lv_guard_cost(LV_READ_ONCE(c->sh->threshold_cost), &c->cls->autop);
}

static __always_inline int lv_guard_is_calm(struct lv_ctx *c)
{
	return lv_guard_calm(LV_READ_ONCE(c->sh->last_over_ns), c->now, c->cls->autop.release_ns);
}

static __always_inline int lv_guard_engaged(struct lv_ctx *c)
{
	return LV_READ_ONCE(c->sh->engaged_ns) != 0;
}

/* Is the class engaged? This CPU's memory of it first (an arrival on this CPU since the
 * class engaged set it; a known source's packet reads no more), then the class's own,
 * which clears a memory gone stale. */
static __always_inline int lv_pilot_engaged(struct lv_ctx *c)
{
	struct lv_pilot *pilot = lv_pilot_of(c);

	if (!pilot->engaged)
		return 0;
	if (lv_guard_engaged(c))
		return 1;
	pilot->engaged = 0;
	return 0;
}

/* Something abnormal: an arrival over the threshold, or a source on probation over
 * their allowance. Noted at most once per LV_GUARD_NOTE_NS (a flood writes the line a
 * thousand times a second, not per packet); the class engages once a run of them has
 * lasted sustain_ns, and one CPU says so. */
static __always_inline void lv_guard_note(struct lv_ctx *c)
{
	struct lv_shared *g = c->sh;
	__u64 now = c->now, last = LV_READ_ONCE(g->last_over_ns), since;

	if (last && (__s64)(now - last) < (__s64)LV_GUARD_NOTE_NS)
		return;
	since = lv_guard_run_start(last, LV_READ_ONCE(g->over_since_ns), now);
	if (since == now)
		LV_WRITE_ONCE(g->over_since_ns, now);
	LV_WRITE_ONCE(g->last_over_ns, now);
	if (LV_READ_ONCE(g->engaged_ns) || !lv_guard_engages(since, now, c->cls->autop.sustain_ns))
		return;
	if (__sync_val_compare_and_swap(&g->engaged_ns, 0, now) == 0)
		lv_event_of(c, NULL, LV_EV_ENGAGED, LV_R_ADMISSION, __sync_fetch_and_add(&g->engagements, 1) + 1,
			    lv_guard_rate(lv_guard_cost_now(c)));
}

/* The class is calm: released if it was engaged (the CPU that clears it says so). */
static __always_inline void lv_guard_release(struct lv_ctx *c, __u64 t)
{
	struct lv_shared *g = c->sh;
	__u64 since = LV_READ_ONCE(g->engaged_ns);

	if (since && __sync_val_compare_and_swap(&g->engaged_ns, since, 0) == since)
		lv_event_of(c, NULL, LV_EV_RELEASED, LV_R_ADMISSION, 0, t - since);
}

/* A normal arrival in a calm class: counted. The first of each LV_GUARD_PERIOD_NS ends
 * the last period (one CPU wins it), and a period calm throughout teaches the baseline
 * what it saw; the threshold follows. */
static __always_inline void lv_guard_count(struct lv_ctx *c, __u64 t)
{
	struct lv_shared *g = c->sh;
	__u64 p = LV_READ_ONCE(g->period_ns), total, b;

	if ((!p || (__s64)(t - p) >= (__s64)LV_GUARD_PERIOD_NS) &&
	    __sync_val_compare_and_swap(&g->period_ns, p, t) == p) {
		total = LV_READ_ONCE(g->arrivals);
		if (p && lv_guard_calm(LV_READ_ONCE(g->last_over_ns), p, c->cls->autop.release_ns)) {
			b = lv_guard_learn(LV_READ_ONCE(g->baseline), total - LV_READ_ONCE(g->period_arrivals), t - p);
			LV_WRITE_ONCE(g->baseline, b);
			LV_WRITE_ONCE(g->threshold_cost, lv_guard_learned_cost(b, c->cls->autop.margin));
		}
		LV_WRITE_ONCE(g->period_arrivals, total);
	}
	__sync_fetch_and_add(&g->arrivals, 1);
}

/* How an arrival gets its state (lv_guard_admit()). */
enum lv_arrive {
	LV_ARRIVE_PROBATION = 1, /* under its key on probation */
	LV_ARRIVE_CHARGED = 2,   /* it took from the admission budget (refunded if refused later) */
};

/*
 * An arrival in a class with the autopilot: LV_R_CONFORMING, *how saying how it gets
 * state (enum lv_arrive), or LV_R_ADMISSION. *t: the fine clock, for the levels after
 * it. Within the threshold it is normal (a source if the class is calm); over it,
 * abnormal: on probation, or refused once the class is engaged. A known-good source is
 * never put on probation nor refused.
 */
static __always_inline __u32 lv_guard_admit(struct lv_ctx *c, __u64 *t, int *how)
{
	__u64 ready = LV_READ_ONCE(c->sh->admit_ready);
	int calm = lv_guard_is_calm(c);

	*t = lv_clock_now(&c->pc->clock, c->now);
	if (lv_gcra_take(&c->sh->admit_ready, ready, *t, lv_guard_cost_now(c), c->cls->autop.burst_ns,
			 LV_R_ADMISSION) == LV_R_CONFORMING) {
		*how = LV_ARRIVE_CHARGED;
		if (calm) {
			lv_guard_release(c, *t);
			lv_guard_count(c, *t);
		} else if (!lv_good_known(c)) {
			*how |= LV_ARRIVE_PROBATION;
		}
		return LV_R_CONFORMING;
	}
	*how = 0;
	lv_guard_note(c);
	if (lv_good_known(c)) {
		if (lv_guard_engaged(c))
			__sync_fetch_and_add(&c->sh->good_admitted, 1);
		return LV_R_CONFORMING;
	}
	if (lv_guard_engaged(c))
		return LV_R_ADMISSION;
	*how = LV_ARRIVE_PROBATION;
	return LV_R_CONFORMING;
}

/*
 * A spoofed flood past the budget, refused on lv_seen without the lookup that would
 * miss: in a class with a budget once it is spent, in a class with the autopilot once
 * it is engaged and its threshold spent. A source that may be on probation is refused
 * so while their allowance is spent (newcomer). Returns the reason, or 0 to look up.
 */
static __always_inline __u32 lv_refuse_unseen(struct lv_ctx *c)
{
	const struct lv_class *cls = c->cls;
	__u32 seen;

	if (cls->flags & LV_CLASS_ADMIT) { /* an operator's budget has no probation */
		if (lv_gcra_conforms(LV_READ_ONCE(c->sh->admit_ready), c->now))
			return 0;
		return (lv_seen_check(c) & LV_SEEN_KNOWN) ? 0 : LV_R_ADMISSION;
	}
	if (!lv_auto_admits(cls) || !lv_pilot_engaged(c))
		return 0;
	if (lv_gcra_conforms(LV_READ_ONCE(c->sh->admit_ready), c->now))
		return 0;
	seen = lv_seen_check(c);
	if (seen & LV_SEEN_KNOWN) /* it may have state, or be known-good */
		return 0;
	if (!seen) {
		lv_guard_note(c);
		return LV_R_ADMISSION;
	}
	if (lv_gcra_conforms(LV_READ_ONCE(c->sh->newcomer_ready), c->now))
		return 0;
	lv_guard_note(c);
	return LV_R_NEWCOMER;
}

/* Charge a packet of a source on probation to the allowance they share while the class
 * is engaged: the threshold's rate, in packets. */
static __always_inline __u32 lv_newcomer_take(struct lv_ctx *c, __u64 t)
{
	struct lv_shared *g = c->sh;
	__u32 r;

	if (!lv_guard_engaged(c))
		return LV_R_CONFORMING;
	r = lv_gcra_take(&g->newcomer_ready, LV_READ_ONCE(g->newcomer_ready), t, lv_guard_cost_now(c),
			 c->cls->autop.burst_ns, LV_R_NEWCOMER);
	if (r != LV_R_CONFORMING)
		lv_guard_note(c);
	return r;
}

/* What an arrival comes to besides a refusal (lv_new_source()): values above every
 * reason, or-ed with LV_ARRIVED_PROBATION when the state is the one on probation. */
enum lv_arrived {
	LV_ARRIVED_FOUND = 0x100,   /* it has state after all: go through its limits */
	LV_ARRIVED_CREATED = 0x200, /* state made with this packet charged to its own limits
				     * (at struct lv_call.t): the levels above are left */
	LV_ARRIVED_PROBATION = 0x400,
};

/*
 * The source's state on probation, if it has one: LV_ARRIVED_FOUND (with
 * LV_ARRIVED_PROBATION while its class is not calm), or 0. Once its class is calm it is
 * promoted: the same state under its key as a source, the one on probation deleted.
 */
static __always_inline __u32 lv_probation_find(struct lv_ctx *c)
{
	struct lv_key pk = c->key;
	struct lv_state *ps, copy;
	long err;

	pk.family |= LV_KEY_PROBATION;
	ps = bpf_map_lookup_elem(&lv_state, &pk);
	if (!ps)
		return 0;
	if (!lv_guard_is_calm(c))
		return LV_ARRIVED_FOUND | LV_ARRIVED_PROBATION;
	copy.ready_ns = LV_READ_ONCE(ps->ready_ns);
	copy.ready_bytes_ns = LV_READ_ONCE(ps->ready_bytes_ns);
	copy.passed = ps->passed;
	copy.dropped = ps->dropped;
	copy.born_ns = ps->born_ns; /* it arrived when it got state on probation */
	err = bpf_map_update_elem(&lv_state, &c->key, &copy, BPF_NOEXIST);
	if (err && err != -EEXIST) /* no room: it stays on probation */
		return LV_ARRIVED_FOUND | LV_ARRIVED_PROBATION;
	if (!err) {
		lv_seen_set(c, &c->key, 0);
		__sync_fetch_and_add(&c->sh->promoted, 1);
	}
	bpf_map_delete_elem(&lv_state, &pk);
	return LV_ARRIVED_FOUND;
}

/* ---- an operator's budget (new_sources) ------------------------------------------- */

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

/* Give back what lv_admit() or lv_guard_admit() charged (`how`: enum lv_arrive). */
static __always_inline void lv_admit_refund(struct lv_ctx *c, int how)
{
	if (c->cls->flags & LV_CLASS_ADMIT)
		__sync_fetch_and_add(&c->sh->admit_ready, -c->cls->admit.cost);
	else if (lv_auto_admits(c->cls) && (how & LV_ARRIVE_CHARGED))
		__sync_fetch_and_add(&c->sh->admit_ready, -lv_guard_cost_now(c));
}

/* ---- state for the arrival ---------------------------------------------------------- */

/* The source's state, created with this packet charged to its own limits, under its key
 * as a source or on probation: LV_ARRIVED_CREATED. Refused by the map (its admission
 * given back), or another CPU created the source meanwhile: LV_ARRIVED_FOUND, nothing
 * charged yet. */
static __always_inline __u32 lv_new_state(struct lv_ctx *c, __u64 t, int how)
{
	const struct lv_class *cls = c->cls;
	__u32 prob = (how & LV_ARRIVE_PROBATION) ? LV_ARRIVED_PROBATION : 0;
	struct lv_key k = c->key;
	int made;

	if (prob)
		k.family |= LV_KEY_PROBATION;
	made = lv_create(c, &k, c->lim.pkt, c->lim.bytes, t);
	if (made == 0) {
		if (cls->flags & (LV_CLASS_ADMIT | LV_CLASS_AUTO_ADMIT))
			__sync_fetch_and_add(&c->sh->admitted, 1);
		if (prob)
			__sync_fetch_and_add(&c->sh->probation, 1);
		return LV_ARRIVED_CREATED | prob;
	}
	lv_admit_refund(c, how);
	return made == 1 ? LV_ARRIVED_FOUND | prob : (__u32)made;
}

/*
 * A packet of a source with no state as a source in its class: a refusing reason, or
 * how it goes on (enum lv_arrived). A source on probation goes on through that state.
 * Any other gets state only if every level would pass this packet: its network and the
 * class total are checked read-only first (a flood that has spent them never touches
 * the admission budget), then the admission is charged, then the state created with
 * this packet charged to its own limits; the levels above charge it after. (Should one
 * of them refuse it after all, a race, the packet is dropped and the source keeps its
 * state and admission.) *t: the fine clock of the charge.
 */
static __always_inline __u32 lv_new_source(struct lv_ctx *c, __u64 *t)
{
	const struct lv_class *cls = c->cls;
	int how = LV_ARRIVE_CHARGED;
	__u32 r;

	/* A new source, or one on probation, of an escalated network waits (watch.h). */
	if (lv_escalation_guards_admission(cls)) {
		struct lv_watch *w = lv_watch_escalated_net(c);

		if (w && !lv_good_known(c))
			return lv_watch_refuse(c, w);
	}
	if (lv_auto_admits(cls) && (lv_seen_check(c) & LV_SEEN_PROBATION)) {
		r = lv_probation_find(c);
		if (r)
			return r;
	}
	if (cls->flags & (LV_CLASS_NETWORK | LV_CLASS_TOTAL)) {
		r = lv_levels_over(c);
		if (r != LV_R_CONFORMING)
			return r;
	}
	if (lv_refuses_new(c))
		return LV_R_MAP_FULL;
	if (lv_auto_admits(cls)) {
		r = lv_guard_admit(c, t, &how);
		lv_pilot_of(c)->engaged = lv_guard_engaged(c);
	} else {
		r = lv_admit(c, t);
	}
	if (r != LV_R_CONFORMING)
		return r;
	return lv_new_state(c, *t, how);
}

#endif /* LEVEE_ARRIVAL_H */
