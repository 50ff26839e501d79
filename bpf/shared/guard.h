/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * guard.h - the autopilot's rules as pure functions (struct lv_auto, lv_guard,
 * lv_watch): what is calm, when a run of abnormal arrivals engages, what the class
 * learns from a calm period and the threshold that follows from it.
 *
 * Compiled into the XDP program and into the controller (`levee status`, metrics,
 * the daemon's releases), and unit-tested with an injected clock, as limiter.h is.
 * Times are CLOCK_MONOTONIC ns compared across wrap as signed differences.
 */
#ifndef LEVEE_GUARD_H
#define LEVEE_GUARD_H

#include "levee_abi.h"
#include "limiter.h"

/* Calm at `now`: no abnormal arrival (or, for a network, no refused packet) for
 * `release_ns`. */
LV_INLINE int lv_guard_calm(__u64 last_over, __u64 now, __u64 release_ns)
{
	return !last_over || (__s64)(now - last_over) >= (__s64)release_ns;
}

/* When the run of abnormal arrivals that one at `now` belongs to began: the current
 * run's start if the last abnormal arrival was less than LV_GUARD_GAP_NS ago, else
 * now (a new run). */
LV_INLINE __u64 lv_guard_run_start(__u64 last_over, __u64 since, __u64 now)
{
	return last_over && (__s64)(now - last_over) < (__s64)LV_GUARD_GAP_NS ? since : now;
}

/* Does a run of abnormal arrivals that began at `since` engage the class at `now`? */
LV_INLINE int lv_guard_engages(__u64 since, __u64 now, __u64 sustain_ns)
{
	return (__s64)(now - since) >= (__s64)sustain_ns;
}

/* The threshold in force: the learned one (ns per arrival; 0: none yet), never
 * stricter than the floor. */
LV_INLINE __u64 lv_guard_cost(__u64 learned, const struct lv_auto *a)
{
	return learned && learned < a->floor_cost ? learned : a->floor_cost;
}

/* Arrivals per second of a threshold's cost. */
LV_INLINE __u64 lv_guard_rate(__u64 cost)
{
	return cost ? (LV_NSEC_PER_SEC + cost / 2) / cost : 0;
}

/* The baseline (arrivals/s << LV_GUARD_FP) after a calm period of `elapsed` ns in which
 * `n` sources arrived: an exponentially weighted average, 1/2^LV_GUARD_EWMA_SHIFT of
 * the way to the period's rate. */
LV_INLINE __u64 lv_guard_learn(__u64 baseline, __u64 n, __u64 elapsed)
{
	__u64 rate;

	if (!elapsed)
		return baseline;
	if (n > (1ULL << 30)) /* keeps n << LV_GUARD_FP times 1e9 within 64 bits */
		n = 1ULL << 30;
	rate = (n << LV_GUARD_FP) * LV_NSEC_PER_SEC / elapsed;
	return baseline - (baseline >> LV_GUARD_EWMA_SHIFT) + (rate >> LV_GUARD_EWMA_SHIFT);
}

/* The threshold that a baseline gives: `margin` times it, as ns per arrival (0: too
 * small to matter, the floor decides). */
LV_INLINE __u64 lv_guard_learned_cost(__u64 baseline, __u32 margin)
{
	__u64 rate = (baseline * margin) >> LV_GUARD_FP;

	if (!rate)
		return 0;
	return rate >= LV_NSEC_PER_SEC ? 1 : LV_NSEC_PER_SEC / rate;
}

/*
 * A network's run-up: the flood that escalates a network began after the last sample
 * that found the network's limit unused (lv_watch.runup_ns), and the sources that got
 * state since, or up to LV_RUNUP_SLACK_NS before (the watch learns of a network from
 * samples, after its flood's first sources got state), arrived with it. While it is
 * escalated, those that are not known-good are refused as its new sources are, so a
 * flood of a network's addresses that each stay under their limit passes no more than
 * what its earlier sources send. Known limit: a source that arrived earlier than that,
 * and behaved, keeps its limits (a flood that warms its addresses up first).
 */
#define LV_RUNUP_SLACK_NS LV_NSEC_PER_SEC

/* Does a sample at `now` find the network's limit (ready time `ready`, burst `tau`)
 * unused, its bucket full? */
LV_INLINE int lv_watch_unused(__u64 ready, __u64 now, __u64 tau)
{
	return (__s64)(now - tau - ready) >= 0;
}

/* Did a source that got state at `born` arrive with the run-up of its network `w`? */
LV_INLINE int lv_watch_runup(const struct lv_watch *w, __u64 born)
{
	return (__s64)(born + LV_RUNUP_SLACK_NS - w->runup_ns) >= 0;
}

/* Is a watched network escalated (and still enforced) at `now`? */
LV_INLINE int lv_watch_escalated(const struct lv_watch *w, __u64 now, __u64 release_ns)
{
	return w->escalated_ns && !lv_guard_calm(w->last_over_ns, now, release_ns);
}

#endif /* LEVEE_GUARD_H */
