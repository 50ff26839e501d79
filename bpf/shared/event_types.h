/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * event_types.h - the records of lv_events, the ring the controller reads.
 */
#ifndef LEVEE_EVENT_TYPES_H
#define LEVEE_EVENT_TYPES_H

#include "common_types.h"

/*
 * ---- events: lv_events, a ring buffer the controller reads ----------------------------
 *
 * State changes worth a line in a log. A flood must not become an event flood: every
 * event passes one GCRA shared by all CPUs (lv_policy.events, default 100/s), and the
 * budget-exhausted and map-full events are sent at most once a second per class. An
 * event refused by the rate (or a full ring) is counted per CPU, and the next event that
 * CPU sends carries the count. Ban ends are not seen by the datapath (a banned source's
 * next packet after its ban simply conforms): the controller reports them from lv_bans.
 */

enum lv_event_type {
	LV_EV_LIMITED = 1,         /* a source's first drop since its state was created (reason) */
	LV_EV_BANNED = 2,          /* a ban started: value = its duration in ns, count = offences */
	LV_EV_ADMISSION = 3,       /* the class's new-source budget refused a source */
	LV_EV_MAP_FULL = 4,        /* no state could be created for a new source */
	LV_EV_BAN_ENDED = 5,       /* written by the controller: a ban ran out */
	LV_EV_ENGAGED = 6,         /* the class's autopilot engaged: value = its threshold, new
			      * sources per second; count = engagements so far (no address) */
	LV_EV_RELEASED = 7,        /* ...released: value = ns it was engaged (no address) */
	LV_EV_ESCALATED = 8,       /* a network was escalated: the address is the network's,
			      * value = its limit, packets per second */
	LV_EV_DEESCALATED = 9,     /* ...released: value = ns it was escalated */
	LV_EV_ANSWER_LIMITED = 10, /* SYN-ACKs towards a network went over its answer rate: the
				    * address is the network's (lv_answer's prefix), value = the
				    * rate a second; once per LV_ANSWER_SAY_NS per cell at most */
};

struct lv_event {
	__u64 time_ns; /* CLOCK_MONOTONIC (the per-CPU cached clock: within a tick) */
	__u32 addr[4]; /* the source as keyed (masked to its class prefix), IPv4-mapped */
	__u8 type;     /* enum lv_event_type */
	__u8 family;   /* enum lv_family */
	__u16 class_id;
	__u8 reason; /* enum lv_reason of the drop that caused it */
	__u8 pad[3];
	__u32 count;
	__u32 suppressed; /* events this CPU could not send since the last one it sent */
	__u64 value;
};

#ifndef __bpf__
LV_STATIC_ASSERT(sizeof(struct lv_event) == 48, "lv_event layout");
#endif

#endif /* LEVEE_EVENT_TYPES_H */
