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
#include "good.h"
#include "hot.h"
#include "maps.h"
#include "stage.h"
#include "state.h"

/* Does the autopilot admit this class's new sources? An operator's budget (new_sources,
 * LV_CLASS_ADMIT) wins over it. */
static __always_inline int lv_auto_admits(const struct lv_class *cls)
{
	return (cls->flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ADMIT)) == LV_CLASS_AUTO_ADMIT;
}

/* Does the class refuse an escalated network's new sources before admission, and
 * sample the arrivals it refuses as new (below)? Only with the autopilot's admission:
 * an operator's budget (new_sources) admits exactly what it says, escalation or not. */
static __always_inline int lv_escalation_guards_admission(const struct lv_class *cls)
{
	return (cls->flags & LV_CLASS_ESCALATE) && lv_auto_admits(cls);
}

/* This CPU's memory of the class (struct lv_pilot). */
static __always_inline struct lv_pilot *lv_pilot_of(struct lv_ctx *c)
{
	return &c->pc->pilot[c->class_id & (LV_MAX_CLASSES - 1)];
}

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

/* Is this packet the sample of its CPU's last 2^sample_shift of the class's watched
 * packets (passed ones, and arrivals refused as new)? Counts it. */
static __always_inline int lv_watch_sampled(struct lv_ctx *c)
{
	__u64 mask = (1ULL << (c->cls->autop.sample_shift & 15)) - 1;

	return !(++c->pc->watch_tick & mask);
}

/* This CPU's memo entry for the network of key `k` (struct lv_watch_memo). */
static __always_inline struct lv_watch_memo *lv_watch_memo_of(struct lv_ctx *c, const struct lv_key *k)
{
	__u32 x = k->addr[0] ^ k->addr[1] ^ k->addr[2] ^ k->addr[3];

	x ^= x >> 16;
	x ^= x >> 8;
	return &c->pc->watch_memo[x & (LV_WATCH_MEMOS - 1)];
}

/* The state of the packet's network if it is escalated now (one of the class's
 * networks is, and the packet's is: a lookup), else NULL. Its key stays in this CPU's
 * watch_probe (off the stack, which the main program has no room left on). */
static __always_inline struct lv_watch *lv_watch_escalated_net(struct lv_ctx *c)
{
	struct lv_key *k = &c->pc->watch_probe;
	struct lv_watch *w;

	if (lv_gcra_conforms(LV_READ_ONCE(c->sh->escalated_until_ns), c->now))
		return NULL;
	lv_watch_key(c, k);
	w = bpf_map_lookup_elem(&lv_state, k);
	return w && lv_watch_escalated(w, c->now, c->cls->autop.release_ns) ? w : NULL;
}

/* A packet of the escalated network `w` (key in watch_probe) refused as new: the
 * network stays escalated, this CPU's pilot and memo learn of it, and the drop and what
 * the memo refused since its last look go to the network's display count. */
static __always_inline __u32 lv_watch_refuse(struct lv_ctx *c, struct lv_watch *w)
{
	const struct lv_key *k = &c->pc->watch_probe;
	struct lv_watch_memo *m = lv_watch_memo_of(c, k);
	__u64 until;

	lv_watch_over(c, w, c->now);
	until = LV_READ_ONCE(c->sh->escalated_until_ns);
	if (lv_pilot_of(c)->escalated_until_ns != until)
		lv_pilot_of(c)->escalated_until_ns = until;
	w->dropped += (1 | c->len << 32) + (lv_key_eq(&m->key, k) ? m->pending : 0);
	m->key = *k;
	m->pending = 0;
	m->look_ns = c->now + LV_GUARD_NOTE_NS;
	return LV_R_ESCALATED; /* (no hot entry: such floods are of many sources) */
}

/* The lookup of lv_watch_refuses_unseen(), past this CPU's memo: the staged packet's
 * network, refused if escalated now. A global function, so that the verifier walks it
 * once for its two callers (limit.h, syn_auto.h). */
__attribute__((noinline)) __u32 lv_watch_refusing(void)
{
	struct lv_ctx c = {};
	struct lv_watch *w;

	if (!lv_unstage(&c))
		return 0;
	w = lv_watch_escalated_net(&c);
	return w ? lv_watch_refuse(&c, w) : 0;
}

/*
 * New sources of an escalated network, and its sources on probation, are refused
 * (LV_R_ESCALATED) before the class's admission, on the cached clock, unless
 * known-good: such a flood spends none of the budget that new sources of other
 * networks share, is no abnormal arrival of the class, and what it got on probation
 * before the escalation passes no more; the network's sources with state keep its
 * limit, and its new TCP clients get in by proving themselves (SYN authentication).
 * Two places ask: lv_limit() for a source lv_seen does not know (so not known-good
 * either: lv_seen covers lv_good, struct lv_seen_pair), answered by this CPU's memo for
 * up to LV_GUARD_NOTE_NS, and lv_new_source() for any other arrival. (Under syn_auth =
 * "auto", syn_auto.h asks first for TCP, and sends what is refused to the gate.) Known
 * limit: a new source of an escalated network that cannot prove itself (UDP) waits
 * until the network is calm again.
 */
static __always_inline __u32 lv_watch_refuses_unseen(struct lv_ctx *c)
{
	struct lv_key *k = &c->pc->watch_probe;
	struct lv_watch_memo *m;

	lv_watch_key(c, k);
	m = lv_watch_memo_of(c, k);
	if (!lv_gcra_conforms(m->look_ns, c->now) && lv_key_eq(&m->key, k)) {
		m->pending += 1 | c->len << 32;
		return LV_R_ESCALATED;
	}
	lv_stage(c);
	return lv_watch_refusing();
}

/*
 * TCP of a source with state in a class with syn_auth = "auto" (syn_auto.h), if a
 * network of the class may be escalated: does the gate take it, the source having
 * arrived with its escalated network's run-up, not known-good? Its SYN keeps the
 * network escalated; its other packets do not (a real client's connection would, long
 * after the flood), and one of a connection the host has goes on through the gate. A
 * global function, for the two lookups.
 */
__attribute__((noinline)) __u32 lv_watch_runup_gates(void)
{
	struct lv_ctx c = {};
	struct lv_state *st;
	struct lv_watch *w;

	if (!lv_unstage(&c))
		return 0;
	w = lv_watch_escalated_net(&c);
	if (!w)
		return 0;
	st = bpf_map_lookup_elem(&lv_state, &c.key);
	if (!st || !lv_watch_runup(w, LV_READ_ONCE(st->born_ns)) || lv_good_known(&c))
		return 0;
	if (c.pkt->kind == LV_L4_TCP_SYN)
		lv_watch_over(&c, w, c.now);
	return 1;
}

/* A sample charged to a watched network not escalated now: 2^sample_shift packets'
 * cost; over its limit, escalated (one calm again is released first). One that finds
 * the limit unused moves the network's run-up on (shared/guard.h). */
static __always_inline void lv_watch_charge(struct lv_ctx *c, struct lv_watch *w, const struct lv_key *k, __u64 t)
{
	const struct lv_auto *a = &c->cls->autop;
	__u64 scale = 1ULL << (a->sample_shift & 15);

	__u64 ready;

	if (w->escalated_ns)
		lv_watch_release(c, w, k, t);
	ready = LV_READ_ONCE(w->ready_ns);
	if (lv_watch_unused(ready, t, a->watch.tau_ns) && LV_READ_ONCE(w->runup_ns) != t)
		LV_WRITE_ONCE(w->runup_ns, t); /* a run-up begins after this */
	if (lv_gcra_take(&w->ready_ns, ready, t, a->watch.cost * scale, a->watch.tau_ns, LV_R_ESCALATED) !=
	    LV_R_CONFORMING)
		lv_watch_escalate(c, w, k, t);
}

/*
 * A sample of the arrivals the class refused (admission, newcomer), charged to their
 * network if it is watched already: a network whose new sources flood is escalated
 * though little of it passes. It never makes a network's state (a random flood over
 * many networks would fill the map with them): a network is watched from its first
 * passed sample on.
 */
static __always_inline void lv_watch_refused(struct lv_ctx *c, __u64 t)
{
	struct lv_watch *w;
	struct lv_key k;

	lv_watch_key(c, &k);
	w = bpf_map_lookup_elem(&lv_state, &k);
	if (w && !lv_watch_escalated(w, t, c->cls->autop.release_ns))
		lv_watch_charge(c, w, &k, t);
}

/* Does SYN authentication's gate judge this packet instead of the run-up's refusal: TCP
 * of a class with syn_auth (synauth.h; syn_auto.h asks lv_watch_runup_gates())? */
static __always_inline int lv_watch_runup_gated(const struct lv_ctx *c)
{
	return (c->cls->flags & LV_CLASS_SYN_ANY) && (c->pkt->kind == LV_L4_TCP_SYN || c->pkt->kind == LV_L4_TCP);
}

/* A packet of a source of the escalated network `w` that arrived with its run-up and
 * is not known-good (shared/guard.h, lv_watch_runup()): refused as its new sources are,
 * which keeps the network escalated. */
static __always_inline int lv_watch_runup_refuses(struct lv_ctx *c, struct lv_watch *w, __u64 born)
{
	return lv_escalation_guards_admission(c->cls) && lv_watch_runup(w, born) && !lv_watch_runup_gated(c) &&
	       !lv_good_known(c);
}

/*
 * The watch for a packet every other level passed, of a source that got state at
 * `born`: LV_R_CONFORMING, or the refusing reason with *hot_ready the time it looks at.
 * `sample`: the packet is the sample of its CPU's last 2^sample_shift passed packets of
 * watched classes (the caller counts them), on probation or not: a botnet that arrives
 * at once is mostly on probation. (A flood of random IPv6 sources spreads over many
 * /48s, one packet each, and escalates none; one that spoofs a client's own network
 * shares its limit with it.)
 */
static __always_inline __u32 lv_watch(struct lv_ctx *c, __u64 t, __u64 born, int sample, __u64 *hot_ready)
{
	struct lv_key *k = &c->pc->watch_probe; /* (off the stack: see lv_watch_escalated_net()) */
	struct lv_watch *w;

	lv_watch_key(c, k);
	w = bpf_map_lookup_elem(&lv_state, k);
	if (w && lv_watch_escalated(w, t, c->cls->autop.release_ns)) {
		if (lv_watch_runup_refuses(c, w, born)) {
			lv_watch_over(c, w, t);
			w->dropped += 1 | c->len << 32; /* display */
			return LV_R_ESCALATED;          /* (no hot entry: it may prove itself) */
		}
		return lv_watch_enforce(c, w, t, hot_ready);
	}
	if (!sample)
		return LV_R_CONFORMING;
	if (!w) {
		lv_watch_create(c, k);
		return LV_R_CONFORMING;
	}
	lv_watch_charge(c, w, k, t);
	return LV_R_CONFORMING;
}

#endif /* LEVEE_WATCH_H */
