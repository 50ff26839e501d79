/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * context.h - one packet on its way through the pipeline (struct lv_ctx), and how it
 * is set up: the policy slot, the packet's class, its source's key, the cached clock.
 */
#ifndef LEVEE_CONTEXT_H
#define LEVEE_CONTEXT_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "clock.h"
#include "parse.h"
#include "rules.h"

/* No class: frames counted before classification (not IP, malformed). */
#define LV_NO_CLASS LV_MAX_CLASSES

/* The limits that apply to one packet: its class's, or its network's override. */
struct lv_limits {
	const struct lv_limit *pkt;
	const struct lv_limit *bytes;
};

/*
 * One packet on its way through the limits. It lives on the stack of the entry point
 * and of each global function (limit.h), whose frames a chain of calls adds up within
 * 512 bytes: fields ordered so the struct has no padding.
 */
struct lv_ctx {
	struct lv_percpu *pc;
	const struct lv_policy *pol;
	const struct lv_class *cls;
	const struct lv_packet *pkt;
	struct lv_shared *sh; /* the class's shared budgets (lv_shared) */
	const struct lv_control *ctl;
	struct lv_limits lim;
	__u64 now; /* the cached clock (lv_clock_cached()), read once per packet */
	__u64 len;
	struct lv_key key; /* the source: address masked to the class's prefix */
	__u32 class_id;
	__u32 lim_flags; /* enum lv_class_flags of c->lim (the class's or the override's) */
	__u32 slot;      /* the policy slot (lv_control.active when the packet began) */
	__u32 ovr;       /* the override whose limits apply (c->lim); LV_MAX_OVERRIDES: none */
	__s32 seen;      /* what lv_seen says of the source (enum lv_seen_says); -1: not read yet */
};

/* The class of a packet: the compiled first-match table's (rules.h). */
static __always_inline __u32 lv_classify(const struct lv_policy *pol, const struct lv_packet *pkt)
{
	return lv_class_of(&pol->table, pol->flags, pkt->kind, pkt->dport, pkt->sport);
}

/* A parsed packet under the policy in `slot`: its class, its source's key, the cached
 * clock. */
static __always_inline void lv_ctx_init(struct lv_ctx *c, const struct lv_control *ctl, __u32 slot,
					const struct lv_packet *pkt)
{
	const struct lv_class *cls;

	c->pol = &ctl->slot[slot];
	c->slot = slot;
	c->ctl = ctl;
	c->pkt = pkt;
	c->class_id = lv_classify(c->pol, pkt);
	c->cls = cls = &c->pol->classes[c->class_id];
	lv_key_mask(&c->key, pkt->addr, pkt->family, cls->mask4, cls->mask6, c->class_id, 0, cls->epoch);
	c->now = lv_clock_cached(&c->pc->clock);
	c->seen = -1;
}

/* The limits that apply to the packet: its class's, or those of override `ovr` when it
 * applies in the class (LV_MAX_OVERRIDES: none). */
static __always_inline void lv_ctx_limits(struct lv_ctx *c, __u32 ovr)
{
	const struct lv_override *o;

	c->ovr = LV_MAX_OVERRIDES;
	c->lim.pkt = &c->cls->pkt;
	c->lim.bytes = &c->cls->bytes;
	c->lim_flags = c->cls->flags;
	if (ovr >= LV_MAX_OVERRIDES)
		return;
	o = &c->pol->overrides[ovr];
	if (!((o->classes >> c->class_id) & 1))
		return;
	c->ovr = ovr;
	c->lim.pkt = &o->pkt;
	c->lim.bytes = &o->bytes;
	c->lim_flags = o->flags;
}

#endif /* LEVEE_CONTEXT_H */
