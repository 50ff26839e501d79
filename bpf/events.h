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
#include "tunables.h"
#include "cas.h"
#include "context.h"
#include "maps.h"

/* An event on its way: staged in this CPU's scratch for lv_event_send(). */
struct lv_event_stage {
	struct lv_event e;
	__u64 cost, tau; /* the event rate (lv_policy.events) */
};
_Static_assert(sizeof(struct lv_event_stage) <= 8 * (sizeof(struct lv_scratch) / 8 - LV_SCRATCH_EVENT),
	       "lv_scratch holds an event");

/*
 * Send the staged event within the event rate shared by every CPU. A global function,
 * verified once and called from everywhere an event is raised: events are rare, and
 * inlined at each place they cost the pipeline stack and verification.
 */
__attribute__((noinline)) int lv_event_send(void)
{
	__u32 zero = 0, k = LV_MAX_CLASSES;
	struct lv_event_stage *s;
	struct lv_percpu *pc;
	struct lv_shared *g;
	struct lv_event *e;

	pc = bpf_map_lookup_elem(&lv_percpu, &zero);
	g = bpf_map_lookup_elem(&lv_shared, &k);
	if (!pc || !g)
		return 0;
	s = (struct lv_event_stage *)&pc->scratch.words[LV_SCRATCH_EVENT];
	if (lv_gcra_take(&g->events_ready, LV_READ_ONCE(g->events_ready), s->e.time_ns, s->cost, s->tau, LV_R_RATE) !=
	    LV_R_CONFORMING) {
		pc->events_suppressed++;
		return 0;
	}
	e = bpf_ringbuf_reserve(&lv_events, sizeof(*e), 0);
	if (!e) { /* the reader is behind */
		pc->events_suppressed++;
		return 0;
	}
	*e = s->e;
	e->suppressed = pc->events_suppressed;
	pc->events_suppressed = 0;
	bpf_ringbuf_submit(e, 0);
	return 1;
}

/* Send an event about `addr` (as keyed: this packet's source, or a network; NULL: the
 * class as a whole), within the event rate (struct lv_event). */
static __always_inline void lv_event_of(struct lv_ctx *c, const __u32 *addr, __u8 type, __u32 reason, __u32 count,
					__u64 value)
{
	const struct lv_limit *l = &c->pol->events;
	struct lv_event_stage *s = (struct lv_event_stage *)&c->pc->scratch.words[LV_SCRATCH_EVENT];

	if (!l->cost)
		return;
	s->cost = l->cost;
	s->tau = l->tau_ns;
	s->e.time_ns = c->now;
	if (addr)
		__builtin_memcpy(s->e.addr, addr, sizeof(s->e.addr));
	else
		__builtin_memset(s->e.addr, 0, sizeof(s->e.addr));
	s->e.type = type;
	s->e.family = c->pkt->family;
	s->e.class_id = c->class_id;
	s->e.reason = reason;
	s->e.pad[0] = s->e.pad[1] = s->e.pad[2] = 0;
	s->e.count = count;
	s->e.suppressed = 0;
	s->e.value = value;
	lv_event_send();
}

/* An event about this packet's source. */
static __always_inline void lv_event(struct lv_ctx *c, __u8 type, __u32 reason, __u32 count, __u64 value)
{
	lv_event_of(c, c->key.addr, type, reason, count, value);
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
