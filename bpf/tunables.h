/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tunables.h - the datapath's own constants: periods and sizes that no controller reads
 * or writes, and the layout of its per-CPU scratch (struct lv_scratch, in
 * shared/percpu.h, which the controller never reads). Changing one rebuilds only the
 * program; a layout the controller shares is in shared/ and bumps LV_ABI_VERSION.
 */
#ifndef LEVEE_TUNABLES_H
#define LEVEE_TUNABLES_H

#include "levee_abi.h"

/* The autopilot (arrival.h, watch.h). */
#define LV_GUARD_PERIOD_NS LV_NSEC_PER_SEC /* the learning period */
#define LV_GUARD_NOTE_NS 1000000ULL        /* last_over_ns written at most once a ms */

/* SYN authentication's answer rate (synauth.h). */
#define LV_ANSWER_SAY_NS (10 * LV_NSEC_PER_SEC) /* an answer_limited event per cell at most */

/* Events (events.h, maps.h): the ring's size and the per-class repeat interval. */
#define LV_EVENTS_BYTES (256 * 1024)
#define LV_EVENT_EVERY_NS LV_NSEC_PER_SEC

/*
 * Word offsets in lv_percpu.scratch: what the pipeline hands its global functions,
 * which take no pointers (limit.h, lv_arrival(); events.h, lv_event_send()), kept off
 * the 512 bytes of stack a chain of calls shares.
 */
#define LV_SCRATCH_REQ 0    /* words of the packet a global function is handed */
#define LV_SCRATCH_EVENT 16 /* words of an event being sent */
#define LV_SCRATCH_SYN 22   /* words of SYN authentication's cookie input or socket tuple */
#define LV_SCRATCH_STATE 22 /* ...and later, of a state being made (state.h): the gate is done */
#define LV_SCRATCH_OPTS 36  /* words of a SYN's TCP options (struct lv_tcp_opts) */
#define LV_SCRATCH_WHERE 48 /* words of a SYN's route lookup or socket tuple (syn_where.h) */

#endif /* LEVEE_TUNABLES_H */
