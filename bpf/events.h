/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * events.h - state changes sent to the controller's event log (lv_events, struct
 * lv_event): a source's first drop, a ban, a spent admission budget, a full map. Only
 * on state changes, never per packet of a flood, and within one event rate shared by
 * every CPU.
 */
#ifndef LEVEE_EVENTS_H
#define LEVEE_EVENTS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "cas.h"
#include "context.h"
#include "maps.h"

/* Send an event about this packet's source, within the event rate (struct lv_event). */
static __always_inline void lv_event(struct lv_ctx *c, __u8 type, __u32 reason, __u32 count, __u64 value)
{
	const struct lv_limit *l = &c->pol->events;
	__u32 k = LV_MAX_CLASSES;
	struct lv_event *e;
	struct lv_shared *g;
	__u64 now;

	if (!l->cost)
		return;
	g = bpf_map_lookup_elem(&lv_shared, &k);
	if (!g)
		return;
	now = c->now;
	if (lv_gcra_take(&g->events_ready, LV_READ_ONCE(g->events_ready), now, l->cost, l->tau_ns, LV_R_RATE) !=
	    LV_R_CONFORMING) {
		c->pc->events_suppressed++;
		return;
	}
	e = bpf_ringbuf_reserve(&lv_events, sizeof(*e), 0);
	if (!e) { /* the reader is behind */
		c->pc->events_suppressed++;
		return;
	}
	e->time_ns = now;
	__builtin_memcpy(e->addr, c->key.addr, sizeof(e->addr));
	e->type = type;
	e->family = c->pkt->family;
	e->class_id = c->class_id;
	e->reason = reason;
	e->pad[0] = e->pad[1] = e->pad[2] = 0;
	e->count = count;
	e->suppressed = c->pc->events_suppressed;
	e->value = value;
	c->pc->events_suppressed = 0;
	bpf_ringbuf_submit(e, 0);
}

/* A class-wide condition (budget spent, map full): one event a second per class at
 * most, claimed with a CAS on *last so two CPUs do not both send it. */
static __always_inline void lv_event_every(struct lv_ctx *c, __u64 *last, __u8 type, __u32 reason)
{
	__u64 seen = LV_READ_ONCE(*last), now = c->now;

	if ((__s64)(now - seen) < (__s64)LV_EVENT_EVERY_NS && seen)
		return;
	if (__sync_val_compare_and_swap(last, seen, now) == seen)
		lv_event(c, type, reason, 0, 0);
}

#endif /* LEVEE_EVENTS_H */
