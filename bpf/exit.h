/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * exit.h - the one way out of the program: every packet is counted under exactly one
 * reason, and the verdict follows from the reason. Monitor mode turns a class's
 * would-be drop into a counted pass on the way there.
 */
#ifndef LEVEE_EXIT_H
#define LEVEE_EXIT_H

#include <linux/bpf.h>

#include "levee_abi.h"
#include "context.h"

/* The one exit: count the packet under its reason and its class, per CPU, and turn the
 * reason into the verdict. */
static __always_inline int lv_exit(struct lv_percpu *pc, __u32 reason, __u32 class_id, __u64 len)
{
	struct lv_counter *c;
	int drop;

	if (reason >= LV_REASON_MAX) /* cannot happen; keeps the index provably bounded */
		reason = LV_R_MALFORMED;
	drop = lv_reason_drops(reason);
	c = &pc->by_reason[reason];
	c->packets++;
	c->bytes += len;
	if (class_id < LV_MAX_CLASSES) {
		c = drop ? &pc->by_class[class_id].dropped : &pc->by_class[class_id].passed;
		c->packets++;
		c->bytes += len;
	}
	if (reason == LV_R_CHALLENGED) /* the frame is its SYN-ACK now (synauth.h) */
		return XDP_TX;
	return drop ? XDP_DROP : XDP_PASS;
}

/* Monitor mode: a class that monitors counts what it would have dropped and passes it.
 * Its limits were not charged for the packet, exactly as if it had been dropped, so
 * what it counts is what enforcing would drop. */
static __always_inline __u32 lv_mode(struct lv_ctx *c, __u32 reason)
{
	struct lv_counter *w;

	if (!(c->cls->flags & LV_CLASS_MONITOR) || reason >= LV_REASON_MAX)
		return reason;
	if (!((LV_MONITORABLE >> reason) & 1) && !(reason == LV_R_DENY && !(c->pol->flags & LV_POL_MONITOR_DENY)))
		return reason;
	w = &c->pc->would[reason];
	w->packets++;
	w->bytes += c->len;
	return LV_R_MONITORED;
}

#endif /* LEVEE_EXIT_H */
