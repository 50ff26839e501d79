/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * bans.h - bans (lv_bans, struct lv_ban): a source refused by its own limits in a class
 * with bans is banned; while banned it is measured against the limits it would have
 * had, and going over them again extends the ban.
 */
#ifndef LEVEE_BANS_H
#define LEVEE_BANS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "limiter.h"
#include "rules.h"
#include "cas.h"
#include "context.h"
#include "events.h"
#include "hot.h"
#include "maps.h"

/* Ban extensions closer together than this are not written: a banned flood writes its
 * record at most once per grain, and its ban ends at most a grain early. */
#define LV_BAN_GRAIN_NS 1000000ULL

/* The record of a ban in every class: the source masked to the prefix those classes
 * share (lv_policy.ban_mask*). */
static __always_inline void lv_ban_all_key(const struct lv_ctx *c, struct lv_key *k)
{
	const struct lv_policy *pol = c->pol;

	lv_key_mask(k, c->pkt->addr, c->pkt->family, pol->ban_mask4, pol->ban_mask6, LV_ALL_CLASSES, 0, 0);
}

/* The record of a ban this class imposes: per source and class, or in every class. */
static __always_inline void lv_ban_key(const struct lv_ctx *c, struct lv_key *k)
{
	if (c->cls->flags & LV_CLASS_BAN_ALL)
		lv_ban_all_key(c, k);
	else
		*k = c->key;
}

/* Keep a banned source failing its own limit until `until`: its ready time is pushed
 * there (never pulled back), so its packets need no ban lookup to be refused and a
 * conforming packet proves it is not banned. */
static __always_inline void lv_ban_push(struct lv_ctx *c, struct lv_state *st, __u64 until)
{
	__u64 *p = c->lim.pkt->cost ? &st->ready_ns : &st->ready_bytes_ns;

	LV_CAS_LOOP
	for (int i = 0; i < LV_CAS_TRIES; i++) {
		__u64 old = LV_READ_ONCE(*p);

		if ((__s64)(until - old) <= 0 || __sync_val_compare_and_swap(p, old, until) == old)
			return;
	}
}

/* A packet of a banned source (its ban record still runs at `now`): measured against
 * the limits it would have had (lv_ban.shadow_*); over them, it extends the ban. */
static __always_inline __u32 lv_ban_measure(struct lv_ctx *c, struct lv_state *st, struct lv_ban *ban, __u64 now)
{
	const struct lv_limit *p = c->lim.pkt, *b = c->lim.bytes;
	__u64 until = ban->until_ns, d = ban->duration_ns;
	__u64 sp = ban->shadow_ns, sb = ban->shadow_bytes_ns;

	if ((p->cost && !lv_gcra_conforms(sp, now)) || (b->cost && !lv_gcra_conforms(sb, now))) {
		if ((__s64)(now + d - until) >= (__s64)LV_BAN_GRAIN_NS) {
			until = now + d;
			ban->until_ns = until; /* plain store: racing CPUs write nearly the same */
			lv_ban_push(c, st, until);
		}
	} else {
		if (p->cost)
			ban->shadow_ns = lv_gcra_after(sp, now, p->cost, p->tau_ns);
		if (b->cost)
			ban->shadow_bytes_ns = lv_gcra_after(sb, now, lv_byte_cost(c->len, b), b->tau_ns);
	}
	/* The hot entry may refuse without measuring until a grain after the last
	 * extension: an extension it skips would have moved the end by less. */
	return lv_reject(c, st, until - d + LV_BAN_GRAIN_NS, LV_R_BAN, LV_R_BAN);
}

/*
 * A packet of a class with bans, refused by its source's limits (reason `r`) at `now`
 * (fine clock). Either the source is banned (lv_ban_measure()), or this is an offence
 * that starts a ban, twice as long as the last if that ended within forget_ns. The
 * offending packet itself counts under `r`, the banned ones under ban.
 */
static __always_inline __u32 lv_ban(struct lv_ctx *c, struct lv_state *st, __u32 r, __u64 now)
{
	const struct lv_class *cls = c->cls;
	struct lv_ban nb = {}, *ban;
	struct lv_key bk;
	__u32 offences = 1;
	__u64 dur;

	lv_ban_key(c, &bk);
	ban = bpf_map_lookup_elem(&lv_bans, &bk);
	if (ban && !lv_gcra_conforms(ban->until_ns, now))
		return lv_ban_measure(c, st, ban, now);

	if (ban && lv_ban_repeats(ban->until_ns, now, cls->forget_ns))
		offences = ban->offences + 1;
	dur = lv_ban_duration(cls->ban_ns, cls->ban_max_ns, offences);
	nb.until_ns = now + dur;
	nb.duration_ns = dur;
	nb.shadow_ns = LV_READ_ONCE(st->ready_ns);
	nb.shadow_bytes_ns = LV_READ_ONCE(st->ready_bytes_ns);
	nb.since_ns = now;
	nb.offences = offences;
	nb.class_id = c->class_id;
	nb.epoch = c->cls->epoch;
	if (ban)
		*ban = nb; /* one CPU's offence wins a race; both start nearly the same ban */
	else
		bpf_map_update_elem(&lv_bans, &bk, &nb, BPF_ANY);
	lv_ban_push(c, st, nb.until_ns);
	lv_event(c, LV_EV_BANNED, r, offences, dur);
	return lv_reject(c, st, now + LV_BAN_GRAIN_NS, r, LV_R_BAN);
}

/* A ban imposed in another class that bans in every class (LV_POL_BAN_ALL). Its own
 * class finds it through the source's state, and measures it (lv_ban()). */
static __always_inline int lv_banned_elsewhere(struct lv_ctx *c, __u64 *until)
{
	struct lv_ban *ban;
	struct lv_key bk;

	if (!(c->pol->flags & LV_POL_BAN_ALL))
		return 0;
	lv_ban_all_key(c, &bk);
	ban = bpf_map_lookup_elem(&lv_bans, &bk);
	if (!ban || (ban->class_id == c->class_id && ban->epoch == c->cls->epoch))
		return 0; /* its own class finds it through the source's state */
	*until = ban->until_ns;
	return !lv_gcra_conforms(*until, c->now);
}

#endif /* LEVEE_BANS_H */
