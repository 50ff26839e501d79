/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * clock.h - the datapath's clocks: a fine reading (bpf_ktime_get_ns), and a cached
 * lower bound of it that a flood's drop path reads instead, nearly for free.
 */
#ifndef LEVEE_CLOCK_H
#define LEVEE_CLOCK_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"

/* The fine clock. Every reading also refreshes this CPU's cached lower bound. */
static __always_inline __u64 lv_clock_fine(struct lv_clock *ck)
{
	__u64 now = bpf_ktime_get_ns();

	ck->ns = now;
	ck->jiffies = bpf_jiffies64();
	ck->uses = 0;
	return now;
}

/*
 * A lower bound of now, nearly free: the last fine reading taken on this CPU, reused
 * while jiffies (inlined by the verifier: a load) has not moved and for at most
 * LV_CLOCK_REFRESH_PKTS packets. Any earlier reading is <= now, so deciding "not yet"
 * on it can only reject a packet early, never admit one late: it may make levee
 * stricter by the cache's staleness, never looser.
 *
 * Only a busy CPU (LV_CLOCK_BUSY_PKTS packets since jiffies moved) reuses a reading;
 * a quiet one reads the fine clock for every packet, which its pass path needs anyway.
 * On a quiet CPU the staleness would be up to a tick, and a tick is what separates a
 * client's back-to-back packets: the last packet of a burst is due exactly when the
 * first one was seen, so a reading this CPU took a millisecond before that packet ran
 * on another CPU dropped it (a burst of 3 passed 2). Under a flood the reading is
 * refreshed every few microseconds, and the first LV_CLOCK_BUSY_PKTS packets of each
 * tick cost a fine read: a fraction of a percent of a flood's packets.
 */
static __always_inline __u64 lv_clock_cached(struct lv_clock *ck)
{
	if (bpf_jiffies64() != ck->jiffies) {
		ck->busy = 0;
		return lv_clock_fine(ck);
	}
	if (ck->busy < LV_CLOCK_BUSY_PKTS) {
		ck->busy++;
		return lv_clock_fine(ck);
	}
	if (++ck->uses >= LV_CLOCK_REFRESH_PKTS)
		return lv_clock_fine(ck);
	return ck->ns;
}

/* The fine clock, unless this packet's cached reading was just taken from it (uses is
 * 0 only right after a fine read, on this CPU, within this packet's run). */
static __always_inline __u64 lv_clock_now(struct lv_clock *ck, __u64 cached)
{
	if (ck->uses == 0 && ck->ns == cached)
		return cached;
	return lv_clock_fine(ck);
}

#endif /* LEVEE_CLOCK_H */
