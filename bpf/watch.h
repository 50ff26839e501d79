/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * watch.h - the autopilot's network watch (struct lv_auto, lv_watch): a sample of the
 * packets a class passes, charged to their sources' networks, and the
 * networks found over their limit escalated: limited as a whole, each packet charged,
 * until they are calm again.
 */
#ifndef LEVEE_WATCH_H
#define LEVEE_WATCH_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "tunables.h"
#include "limiter.h"
#include "guard.h"
#include "rules.h"
#include "cas.h"
#include "context.h"
#include "events.h"
#include "maps.h"
#include "state.h"

static __always_inline void lv_watch_key(const struct lv_ctx *c, struct lv_key *k)
{
	const struct lv_auto *a = &c->cls->autop;

	lv_key_mask(k, c->pkt->addr, c->pkt->family, a->watch_mask4, a->watch_mask6, c->class_id, LV_KEY_WATCH,
		    c->cls->epoch);
}

/* A refused packet of an escalated network (or its escalation): the network stays
 * escalated release_ns more, and so long the class checks its packets against their
 * networks (lv_shared.escalated_until_ns). Written at most once per LV_GUARD_NOTE_NS. */
static __always_inline void lv_watch_over(struct lv_ctx *c, struct lv_watch *w, __u64 t)
{
	__u64 *until = &c->sh->escalated_until_ns, end = t + c->cls->autop.release_ns;

	if ((__s64)(t - LV_READ_ONCE(w->last_over_ns)) < (__s64)LV_GUARD_NOTE_NS)
		return;
	LV_WRITE_ONCE(w->last_over_ns, t);
	if ((__s64)(end - LV_READ_ONCE(*until)) > 0)
		LV_WRITE_ONCE(*until, end);
}

/* A packet of an escalated network: charged once to the network's limit. */
static __always_inline __u32 lv_watch_enforce(struct lv_ctx *c, struct lv_watch *w, __u64 t, __u64 *hot_ready)
{
	const struct lv_limit *l = &c->cls->autop.watch;
	__u32 r = lv_gcra_take(&w->ready_ns, LV_READ_ONCE(w->ready_ns), t, l->cost, l->tau_ns, LV_R_ESCALATED);

	if (r == LV_R_CONFORMING)
		return r;
	lv_watch_over(c, w, t);
	w->dropped += 1 | c->len << 32; /* display */
	*hot_ready = LV_READ_ONCE(w->ready_ns);
	return r;
}

/* A sample over the network's limit: the network is escalated (the CPU that marks it
 * says so). */
static __always_inline void lv_watch_escalate(struct lv_ctx *c, struct lv_watch *w, const struct lv_key *k, __u64 t)
{
	if (__sync_val_compare_and_swap(&w->escalated_ns, 0, t) != 0)
		return;
	LV_WRITE_ONCE(w->last_over_ns, 0);
	lv_watch_over(c, w, t);
	__sync_fetch_and_add(&c->sh->escalations, 1);
	lv_event_of(c, k->addr, LV_EV_ESCALATED, LV_R_ESCALATED, 0, c->cls->autop.watch.rate);
}

/* A network calm again: released (the CPU that clears it says so). */
static __always_inline void lv_watch_release(struct lv_ctx *c, struct lv_watch *w, const struct lv_key *k, __u64 t)
{
	__u64 since = LV_READ_ONCE(w->escalated_ns);

	if (since && __sync_val_compare_and_swap(&w->escalated_ns, since, 0) == since)
		lv_event_of(c, k->addr, LV_EV_DEESCALATED, LV_R_ESCALATED, 0, t - since);
}

/* A network's first sample: its state, with nothing charged yet. */
static __always_inline void lv_watch_create(struct lv_ctx *c, const struct lv_key *k)
{
	struct lv_watch init = {};

	if (bpf_map_update_elem(&lv_state, k, &init, BPF_NOEXIST) == 0)
		lv_count_created(c);
}

/*
 * The watch for a packet every other level passed: LV_R_CONFORMING, or the refusing
 * reason with *hot_ready the time it looks at. `sample`: the packet is the sample of
 * its CPU's last 2^sample_shift passed packets of watched classes (the caller counts
 * them), on probation or not: a botnet that arrives at once is mostly on probation.
 * (A flood of random IPv6 sources spreads over many /48s, one packet each, and
 * escalates none; one that spoofs a client's own network shares its limit with it.)
 */
static __always_inline __u32 lv_watch(struct lv_ctx *c, __u64 t, int sample, __u64 *hot_ready)
{
	const struct lv_auto *a = &c->cls->autop;
	__u64 scale = 1ULL << (a->sample_shift & 15);
	struct lv_watch *w;
	struct lv_key k;

	lv_watch_key(c, &k);
	w = bpf_map_lookup_elem(&lv_state, &k);
	if (w && lv_watch_escalated(w, t, a->release_ns))
		return lv_watch_enforce(c, w, t, hot_ready);
	if (!sample)
		return LV_R_CONFORMING;
	if (!w) {
		lv_watch_create(c, &k);
		return LV_R_CONFORMING;
	}
	if (w->escalated_ns)
		lv_watch_release(c, w, &k, t);
	if (lv_gcra_take(&w->ready_ns, LV_READ_ONCE(w->ready_ns), t, a->watch.cost * scale, a->watch.tau_ns,
			 LV_R_ESCALATED) != LV_R_CONFORMING)
		lv_watch_escalate(c, w, &k, t);
	return LV_R_CONFORMING;
}

#endif /* LEVEE_WATCH_H */
