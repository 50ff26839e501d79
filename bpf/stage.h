/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stage.h - the packet as the pipeline hands it to a global function (struct lv_req in
 * this CPU's scratch), and the context a global function makes of it again.
 */
#ifndef LEVEE_STAGE_H
#define LEVEE_STAGE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "tunables.h"
#include "context.h"
#include "maps.h"

/*
 * Global functions are verified once, on their own, so that their branches do not
 * multiply with those of the pipeline before them (the verifier refuses a program past
 * 1M instructions processed), and their stack is not the caller's (a chain of calls
 * shares 512 bytes). They take no pointers: the packet is staged in this CPU's scratch
 * (struct lv_scratch), and they look up the per-CPU, policy and shared maps again
 * (inlined array lookups).
 */
struct lv_req {
	struct lv_packet pkt;
	struct lv_key key;
	__u32 slot;
	__u32 class_id;
	__u32 ovr;
	__s32 seen;
	__u64 now;
	__u64 len;
};

/* What a global function is given besides the packet, and what it leaves the caller. */
struct lv_call {
	__u64 t;         /* the fine clock of the source's own limits (lv_arrival: out) */
	__u64 hot_ready; /* out: the time the refusing level looks at */
	__u32 probation; /* the source is on probation */
	__u32 sample;    /* lv_watching: the watch samples this packet (struct lv_auto) */
	__u32 charged;   /* lv_watching: lv_levels() charged the packet (refunded if refused) */
	__u32 reason;    /* lv_banning: the source's own limit that refused */
	__u64 born_ns;   /* lv_watching: when the source got state */
};

#define LV_SCRATCH_CALL 10 /* words of struct lv_call, after struct lv_req's */
_Static_assert(sizeof(struct lv_req) <= 8 * LV_SCRATCH_CALL, "lv_scratch holds a request");
_Static_assert(LV_SCRATCH_CALL * 8 + sizeof(struct lv_call) <= 8 * LV_SCRATCH_EVENT, "lv_scratch holds a call");

static __always_inline struct lv_call *lv_call_of(struct lv_ctx *c)
{
	return (struct lv_call *)&c->pc->scratch.words[LV_SCRATCH_CALL];
}

static __always_inline void lv_stage(struct lv_ctx *c)
{
	struct lv_req *q = (struct lv_req *)&c->pc->scratch.words[LV_SCRATCH_REQ];

	q->pkt = *c->pkt;
	q->key = c->key;
	q->slot = c->slot;
	q->class_id = c->class_id;
	q->ovr = c->ovr;
	q->seen = c->seen;
	q->now = c->now;
	q->len = c->len;
}

/* The context of a staged packet, in a global function, and the call's arguments and
 * results (struct lv_call); NULL when a map cannot be read (which cannot happen). */
static __always_inline struct lv_call *lv_unstage(struct lv_ctx *c)
{
	const struct lv_req *q;
	__u32 zero = 0;

	c->pc = bpf_map_lookup_elem(&lv_percpu, &zero);
	c->ctl = bpf_map_lookup_elem(&lv_policy, &zero);
	if (!c->pc || !c->ctl) /* cannot happen: one-entry arrays */
		return NULL;
	q = (const struct lv_req *)&c->pc->scratch.words[LV_SCRATCH_REQ];
	c->slot = q->slot & 1;
	c->pol = &c->ctl->slot[c->slot];
	c->class_id = q->class_id & (LV_MAX_CLASSES - 1);
	c->cls = &c->pol->classes[c->class_id];
	c->pkt = &q->pkt;
	c->key = q->key;
	c->now = q->now;
	c->len = q->len;
	c->seen = q->seen;
	lv_ctx_limits(c, q->ovr);
	c->sh = bpf_map_lookup_elem(&lv_shared, &c->class_id);
	return c->sh ? lv_call_of(c) : NULL;
}

#endif /* LEVEE_STAGE_H */
