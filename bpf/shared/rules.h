/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rules.h - the rules the datapath decides by and the controller reports by, as pure
 * functions: which class a packet is in, which key an address has, and what a list
 * entry decides at a given time.
 *
 * Compiled into the XDP program and into the controller (as limiter.h is), so that
 * the program and `levee show`, `top`, `unban` and `prune` cannot disagree: a rule
 * written twice drifts.
 */
#ifndef LEVEE_RULES_H
#define LEVEE_RULES_H

#include "levee_abi.h"
#include "limiter.h"

/*
 * The class of a packet of `kind` with these ports under a compiled table
 * (struct lv_class_table): one byte by destination port or kind; with source-port
 * classes (LV_POL_SPORT in `pol_flags`), the first-placed of that and the by_sport one.
 */
LV_INLINE __u32 lv_class_of(const struct lv_class_table *t, __u32 pol_flags, __u32 kind, __u16 dport, __u16 sport)
{
	__u32 id, by_src;

	if (kind >= LV_L4_PORTED)
		return t->by_kind[kind & (LV_L4_KINDS - 1)] & (LV_MAX_CLASSES - 1);
	id = t->by_port[kind][dport] & (LV_MAX_CLASSES - 1);
	if (!(pol_flags & LV_POL_SPORT))
		return id;
	by_src = t->by_sport[kind][sport];
	if (by_src != LV_NO_SPORT_CLASS && t->rank[by_src & (LV_MAX_CLASSES - 1)] < t->rank[id])
		id = by_src & (LV_MAX_CLASSES - 1);
	return id;
}

/*
 * The key of a source address masked to a prefix. `addr` is laid out as a packet's
 * (struct lv_packet): four words in network order, an IPv4 address mapped
 * (::ffff:a.b.c.d, the address in addr[3]). IPv4 keeps the mapping and masks addr[3]
 * with `mask4`; IPv6 masks every word with `mask6`. `flags` are or-ed into the key's
 * family (LV_KEY_NETWORK: a network's state, never a source's).
 */
LV_INLINE void lv_key_mask(struct lv_key *k, const __u32 *addr, __u8 family, __u32 mask4, const __u32 *mask6,
			   __u16 class_id, __u8 flags, __u8 epoch)
{
	if (family == LV_AF_INET) {
		k->addr[0] = 0;
		k->addr[1] = 0;
		k->addr[2] = addr[2];
		k->addr[3] = addr[3] & mask4;
	} else {
		k->addr[0] = addr[0] & mask6[0];
		k->addr[1] = addr[1] & mask6[1];
		k->addr[2] = addr[2] & mask6[2];
		k->addr[3] = addr[3] & mask6[3];
	}
	k->class_id = class_id;
	k->family = family | flags;
	k->epoch = epoch;
}

/* Which entry's verdict is in force (struct lv_list_verdict). */
enum lv_list_by {
	LV_LIST_BY_ENTRY = 0, /* the entry itself: it has not expired */
	LV_LIST_BY_AFTER = 1, /* it expired: the entry covering it (lv_list_value.after_*) */
	LV_LIST_BY_THEN = 2,  /* that one expired too: the entry covering both (then_*) */
};

struct lv_list_verdict {
	__u8 kind; /* enum lv_list_kind; LV_LIST_NONE: nothing covering it is in force */
	__u8 by;   /* enum lv_list_by */
	__u16 override_id;
};

/*
 * What a list entry decides at `now`, in the clock its expiries are in (CLOCK_MONOTONIC
 * ns). An entry stops matching once `now` reaches its expiry, and then the entries the
 * controller recorded as covering it decide, in turn (struct lv_list_value).
 */
LV_INLINE struct lv_list_verdict lv_list_decide(const struct lv_list_value *v, __u64 now)
{
	struct lv_list_verdict d = { v->kind, LV_LIST_BY_ENTRY, v->override_id };

	/* lv_gcra_conforms(t, now): `now` has reached t, compared across wrap. */
	if (v->expires_ns && lv_gcra_conforms(v->expires_ns, now)) {
		d.kind = v->after_kind;
		d.by = LV_LIST_BY_AFTER;
		d.override_id = v->after_override;
		if (v->after_expires_ns && lv_gcra_conforms(v->after_expires_ns, now)) {
			d.kind = v->then_kind;
			d.by = LV_LIST_BY_THEN;
			d.override_id = v->then_override;
		}
	}
	return d;
}

/* A CrowdSec decision is in force until `now` (CLOCK_MONOTONIC ns) reaches its expiry:
 * the datapath drops by it, the controller removes it and counts what is held by it. */
LV_INLINE int lv_cs_in_force(const struct lv_cs_value *v, __u64 now)
{
	return !lv_gcra_conforms(v->expires_ns, now);
}

#endif /* LEVEE_RULES_H */
