/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * class_shared.h - what every CPU of a class shares (lv_shared): its new-source budget,
 * its total limit and its autopilot's state.
 */
#ifndef LEVEE_CLASS_SHARED_H
#define LEVEE_CLASS_SHARED_H

#include "common_types.h"

/* ---- state shared by every CPU of a class: lv_shared, an array by class id ------- */

/*
 * The class's new-source budget and its total limit, as GCRA ready times (CAS), and its
 * autopilot's state (struct lv_auto says what it does); the admission budget is the
 * autopilot's threshold in a class with LV_CLASS_AUTO_ADMIT. Three cache lines, laid
 * out by who touches them: the first is read by every arrival (a packet of a source
 * with no state) and written by admissions and, under a flood, at most once per
 * LV_GUARD_NOTE_NS; the second by the class total's leases, the watch's escalations
 * and the learning (a normal arrival adds to `arrivals`); the third holds counts.
 * Neither budget bounces a line per packet: the admission budget is written only when
 * a source is admitted, the total drawn in leases of up to lv_class.lease_ns per CPU
 * (struct lv_lease). Entry LV_MAX_CLASSES holds interface-wide counts. The controller
 * reads the autopilot's fields (struct lv_guard gathers them), releases a class the
 * datapath has not released for want of an arrival, and zeroes a class's entry when it
 * gives the id to a new class.
 */
struct lv_shared {
	/* read by every arrival */
	__u64 admit_ready;
	__u64 engaged_ns;     /* when the class engaged; 0: not engaged */
	__u64 last_over_ns;   /* the last abnormal arrival; 0: none yet */
	__u64 over_since_ns;  /* when the run of abnormal arrivals last_over_ns ends began */
	__u64 threshold_cost; /* the learned threshold, ns per arrival; 0: the floor's */
	__u64 newcomer_ready; /* the allowance sources on probation share while engaged */
	__u64 admit_event_ns; /* last LV_EV_ADMISSION of the class: one a second at most */
	__u64 admitted;       /* new sources admitted (display) */
	/* the class total, the watch, the learning */
	__u64 total_ready;
	__u64 total_ready_bytes;
	__u64 escalated_until_ns; /* a network of the class may be escalated until then: its
				   * packets are checked against their network's state */
	__u64 period_ns;          /* when the current learning period began */
	__u64 arrivals;           /* normal arrivals (calm), all time */
	__u64 period_arrivals;    /* `arrivals` when the period began */
	__u64 baseline;           /* learned normal arrivals per second << LV_GUARD_FP */
	__u64 full_event_ns;      /* last LV_EV_MAP_FULL of the class */
	/* counts, and entry LV_MAX_CLASSES's */
	__u64 sources;       /* entry LV_MAX_CLASSES: states created (LV_POL_REFUSE_FULL);
			      * the controller subtracts what it removes */
	__u64 events_ready;  /* entry LV_MAX_CLASSES: the event rate's GCRA */
	__u64 engagements;   /* times the class engaged */
	__u64 escalations;   /* networks escalated */
	__u64 good_admitted; /* arrivals of known-good sources an engaged budget let past */
	__u64 probation;     /* sources admitted on probation */
	__u64 promoted;      /* sources on probation promoted once the class was calm */
	__u64 reserved;
};

/* The autopilot's fields of a class's lv_shared, as the controller gathers them
 * (SharedMap::guard()): no map holds this layout. */
struct lv_guard {
	__u64 engaged_ns;
	__u64 last_over_ns;
	__u64 over_since_ns;
	__u64 cost; /* threshold_cost */
	__u64 newcomer_ready;
	__u64 escalated_until_ns;
	__u64 period_ns;
	__u64 arrivals;
	__u64 period_arrivals;
	__u64 baseline;
	__u64 engagements;
	__u64 escalations;
	__u64 good_admitted;
	__u64 probation;
	__u64 promoted;
};

/* clang-format off */
#define LV_GUARD_FP 4                      /* baseline's fixed point: 1/16 arrival/s */
#define LV_GUARD_EWMA_SHIFT 6              /* each calm period moves the baseline 1/64 of
					    * the way to what it saw: about a minute */
#define LV_GUARD_GAP_NS 50000000ULL        /* abnormal arrivals further apart start a new run */
/* clang-format on */

#ifndef __bpf__
LV_STATIC_ASSERT(sizeof(struct lv_shared) == 192, "lv_shared layout");
#endif

#endif /* LEVEE_CLASS_SHARED_H */
