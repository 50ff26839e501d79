/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cas.h - limiter state shared between CPUs, updated with compare-and-swap.
 *
 * A GCRA is one 64-bit word (limiter.h), so a CAS from the value a decision read makes
 * the decision and the update one step: no lock (the kernel refuses bpf_spin_lock in
 * LRU maps), and nothing written when a packet is refused.
 */
#ifndef LEVEE_CAS_H
#define LEVEE_CAS_H

#include <linux/types.h>

#include "levee_abi.h"
#include "limiter.h"

#define LV_READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#define LV_WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

/* A CAS fails only when another CPU passed a packet of the same source in between;
 * each retry re-decides on the newer state. Exhausting the tries drops the packet
 * (counted as LV_R_CONTENDED): failing closed keeps the limit exact. */
#define LV_CAS_TRIES 4

/* Put before each loop of tries: kept a loop, not unrolled. Each unrolled copy of a CAS
 * holds its registers in stack slots of its own, and the functions of one chain of
 * calls share 512 bytes of stack (limit.h); the first try nearly always succeeds. */
#define LV_CAS_LOOP _Pragma("clang loop unroll(disable)")

/* Pass one packet of `cost` ns through a GCRA whose state lives at *ready_p,
 * CPU-safely. Returns LV_R_CONFORMING or `over`. */
static __always_inline __u32 lv_gcra_take(__u64 *ready_p, __u64 ready, __u64 now, __u64 cost, __u64 tau, __u32 over)
{
	LV_CAS_LOOP
	for (int i = 0; i < LV_CAS_TRIES; i++) {
		__u64 seen;

		if (!lv_gcra_conforms(ready, now))
			return over;
		seen = __sync_val_compare_and_swap(ready_p, ready, lv_gcra_after(ready, now, cost, tau));
		if (seen == ready)
			return LV_R_CONFORMING;
		ready = seen; /* another CPU passed one: decide again on its result */
	}
	return LV_R_CONTENDED;
}

#endif /* LEVEE_CAS_H */
