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
	__u32 flags;
};

/* One packet on its way through the limits (everything below is inlined: this lives
 * on the stack of the entry point). */
struct lv_ctx {
	struct lv_percpu *pc;
	const struct lv_policy *pol;
	const struct lv_class *cls;
	const struct lv_packet *pkt;
	struct lv_shared *sh; /* the class's shared budgets (lv_shared) */
	const struct lv_control *ctl;
	struct lv_limits lim;
	__u64 now;         /* the cached clock (lv_clock_cached()), read once per packet */
	struct lv_key key; /* the source: address masked to the class's prefix */
	__u64 len;
	__u32 class_id;
};

/* The class of a packet: one byte of the compiled first-match table. */
static __always_inline __u32 lv_classify(const struct lv_policy *pol, const struct lv_packet *pkt)
{
	__u32 kind = pkt->kind;

	if (kind < LV_L4_PORTED)
		return pol->table.by_port[kind][pkt->dport] & (LV_MAX_CLASSES - 1);
	return pol->table.by_kind[kind & (LV_L4_KINDS - 1)] & (LV_MAX_CLASSES - 1);
}

/* A parsed packet under the policy in `slot`: its class, its source's key, the cached
 * clock. */
static __always_inline void lv_ctx_init(struct lv_ctx *c, const struct lv_control *ctl, __u32 slot,
					const struct lv_packet *pkt)
{
	const struct lv_class *cls;

	c->pol = &ctl->slot[slot];
	c->ctl = ctl;
	c->pkt = pkt;
	c->class_id = lv_classify(c->pol, pkt);
	c->cls = cls = &c->pol->classes[c->class_id];
	lv_key_mask(&c->key, pkt->addr, pkt->family, cls->mask4, cls->mask6, c->class_id, 0, cls->epoch);
	c->now = lv_clock_cached(&c->pc->clock);
}

#endif /* LEVEE_CONTEXT_H */
