/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * limiter.h - the limiter's arithmetic as pure functions.
 *
 * Compiled into the XDP program and into the unit tests, where it runs against an
 * injected clock and serves as the reference model for end-to-end checks.
 *
 * The limiter is a GCRA (generic cell rate algorithm): the same limiter as a token
 * bucket of `rate` tokens/s and `burst` tokens, with one 64-bit word of state, so it
 * can be updated with a single compare-and-swap. The kernel refuses bpf_spin_lock in
 * LRU maps, and a CAS that writes only when a packet passes leaves the drop path
 * read-only: a flooding source's cache line is not bounced between CPUs.
 *
 * State is the earliest time the next packet conforms (`ready`), i.e. TAT - tau.
 *   conforms:  now >= ready
 *   on pass:   ready' = max(ready + cost, now - tau + cost)
 * For a packet limit the cost is the emission interval T and tau = (burst - 1) * T.
 * For a byte limit the cost is the packet's length times ns per byte and tau is the
 * burst in bytes times ns per byte: a packet conforms while the source has any credit
 * left, so at most burst + rate * t bytes plus one packet pass in a window t.
 * Over any window of length t a source passes at most burst + rate * t packets:
 * each pass moves ready forward by at least T, and after the first pass in the window
 * ready >= start - tau + T. This holds for any interleaving of CASes across CPUs,
 * because every pass is a successful CAS from the value its decision read.
 *
 * Time is CLOCK_MONOTONIC in ns. Differences are compared as signed 64-bit values,
 * so the arithmetic is correct across wrap as long as |tau| < 2^63 ns (the controller
 * caps rate and burst far below that).
 */
#ifndef LEVEE_LIMITER_H
#define LEVEE_LIMITER_H

#include "levee_abi.h"

#ifdef __cplusplus
#define LV_INLINE inline
#else
#define LV_INLINE static __attribute__((always_inline)) inline
#endif

/* Does a packet at `now` conform to a limit whose state is `ready`? */
LV_INLINE int lv_gcra_conforms(__u64 ready, __u64 now)
{
	return (__s64)(now - ready) >= 0;
}

/* The state after passing a packet of `cost` ns at `now` through a limit of `tau`. */
LV_INLINE __u64 lv_gcra_after(__u64 ready, __u64 now, __u64 cost, __u64 tau)
{
	__u64 queued = ready + cost;   /* behind earlier packets */
	__u64 full = now - tau + cost; /* the bucket was full: credit capped at tau */
	return (__s64)(queued - full) > 0 ? queued : full;
}

/* Packet limits: every packet costs one emission interval. */
LV_INLINE __u64 lv_gcra_after_pass(__u64 ready, __u64 now, const struct lv_limit *l)
{
	return lv_gcra_after(ready, now, l->cost, l->tau_ns);
}

/* The state of a source first seen at `now`, after its first packet passes. */
LV_INLINE __u64 lv_gcra_first(__u64 now, const struct lv_limit *l)
{
	return now - l->tau_ns + l->cost;
}

/* Byte limits: what a packet of `len` bytes costs, rounded up (never looser). */
LV_INLINE __u64 lv_byte_cost(__u64 len, const struct lv_limit *l)
{
	return (len * l->cost + (1ULL << LV_BYTE_SHIFT) - 1) >> LV_BYTE_SHIFT;
}

/* How long until a packet would conform (0 if one would now). */
LV_INLINE __u64 lv_gcra_wait(__u64 ready, __u64 now)
{
	return lv_gcra_conforms(ready, now) ? 0 : ready - now;
}

/* Packets a source could send at once right now (the token count of the bucket). */
LV_INLINE __u64 lv_gcra_tokens(__u64 ready, __u64 now, const struct lv_limit *l)
{
	if (!lv_gcra_conforms(ready, now) || l->cost == 0)
		return 0;
	__u64 credit = now - ready; /* time of unused allowance, capped at tau */
	if (credit > l->tau_ns)
		credit = l->tau_ns;
	return credit / l->cost + 1;
}

/* Bytes a source could send right now without going over (a packet conforms while
 * any credit is left, so one more packet of any size passes after these). */
LV_INLINE __u64 lv_byte_tokens(__u64 ready, __u64 now, const struct lv_limit *l)
{
	if (!lv_gcra_conforms(ready, now) || l->cost == 0)
		return 0;
	__u64 credit = now - ready;
	if (credit > l->tau_ns)
		credit = l->tau_ns;
	/* credit * 2^16 / cost without overflow: cost < 2^48 for any rate >= 1 B/s. */
	return ((credit / l->cost) << LV_BYTE_SHIFT) + ((credit % l->cost) << LV_BYTE_SHIFT) / l->cost;
}

/* The length of a ban for the `offences`-th offence in a row (1 for a first): `ban`
 * doubled for each earlier one, capped at `max`, without overflowing. */
LV_INLINE __u64 lv_ban_duration(__u64 ban, __u64 max, __u32 offences)
{
	__u32 doublings = offences > 0 ? offences - 1 : 0;

	if (doublings >= 63 || (ban << doublings) >> doublings != ban || (ban << doublings) > max)
		return max;
	return ban << doublings;
}

/* Is an offence at `now` a repeat of a ban that ended at `until` (forgotten after
 * `forget` ns of quiet)? */
LV_INLINE int lv_ban_repeats(__u64 until, __u64 now, __u64 forget)
{
	return (__s64)(now - until) < (__s64)forget;
}

#endif /* LEVEE_LIMITER_H */
