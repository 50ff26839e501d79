/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * percpu.h - lv_percpu, one per-CPU entry: the cached clock, the counters by reason and
 * class, the class total's leases, and the datapath's scratch (the hot sources, lv_hot,
 * are a per-CPU array of their own).
 */
#ifndef LEVEE_PERCPU_H
#define LEVEE_PERCPU_H

#include "class_shared.h"
#include "per_source.h"
#include "policy_types.h"
#include "reasons.h"
#include "synauth_types.h"

/* ---- per-CPU counters and scratch: lv_percpu, one per-CPU array entry ----------- */

/*
 * Lower bound of CLOCK_MONOTONIC cached per CPU: the fine clock costs ~40 ns a read
 * here, jiffies nothing. Used only on a busy CPU (LV_CLOCK_BUSY_PKTS packets in this
 * jiffy), and refreshed whenever jiffies moves, every LV_CLOCK_REFRESH_PKTS packets,
 * and by every fine read. (Scratch: a program of an older layout that shared this
 * map only ever makes the next packets read the fine clock.)
 */
struct lv_clock {
	__u64 ns;      /* a bpf_ktime_get_ns() reading taken on this CPU */
	__u64 jiffies; /* jiffies when it was taken */
	__u32 uses;    /* packets that used it since */
	__u32 busy;    /* packets this CPU ran since jiffies last moved (saturates) */
};

#define LV_CLOCK_REFRESH_PKTS 16
#define LV_CLOCK_BUSY_PKTS 32

/*
 * How far one CPU's reading may be behind a stamp another CPU made with its own: a
 * cached reading is from this jiffy (10 ms at HZ=100, the slowest), and even a fine one
 * was taken when its packet began. A stamp read back against a reading (a cookie's
 * period, a TSval echoed, a fresh mark) may be up to this far ahead of it and still be
 * in time; read as an unsigned age, it was 2^32 units old. 2^24 ns, 16.8 ms.
 */
#define LV_CLOCK_AHEAD_NS (1ULL << 24)

/* Is a stamp `age` units of 2^shift ns old (a reading minus the stamp, unsigned) in
 * time: younger than `window`, or ahead of the reading by at most LV_CLOCK_AHEAD_NS
 * (and the unit boundary the two may straddle)? */
static inline int lv_stamp_in_time(__u32 age, __u32 window, __u32 shift)
{
	return age < window || 0u - age <= (__u32)(LV_CLOCK_AHEAD_NS >> shift) + 1;
}

/*
 * ---- lv_hot: the sources this CPU rejected last, a per-CPU array of LV_HOT_SLOTS --------
 *
 * A source this CPU rejected for one of its limits, with that limit's eligible time as
 * its state had it, and the drops not yet written to its state, in the slot its key
 * hashes to (direct-mapped: a source takes the slot of whichever had it). In a class
 * with LV_CLASS_FAST_REJECT a repeat packet of that source is rejected while that time
 * is still ahead of the cached clock, without the LRU lookup (hashing the key into the
 * LRU's 16 MB of buckets and reading its element are the largest cost left on the drop
 * path). The slot of the last source rejected is checked first, before the lists
 * (lv_percpu.hot_last: a flood from one source costs no hash); the slot its key hashes
 * to, just before the LRU lookup (a flood from ten thousand sources round robin costs a
 * cheap hash and one cache line a packet, and a spoofed flood the autopilot refuses on
 * lv_seen never touches the slots at all). Exact for the same reason as the fast reject:
 * the datapath moves a source's ready time forward, so the remembered value is at most
 * the real one and rejecting on it can only reject early, never admit. (A refund, when
 * a later limit refuses a packet an earlier one charged, moves it back by one cost:
 * the hot entry is then stricter by that much, for at most LV_HOT_MAX_HITS packets.)
 * Every LV_HOT_MAX_HITS-th repeat takes the real path, which keeps the source recent
 * in the LRU, notices an eviction and counts the absorbed drops in the source's state.
 * A policy change bumps the generation and invalidates every CPU's entry: userspace
 * that lowers a ready time (unban, a test) must publish. Lists change only by a
 * publish too, so within one generation a remembered source's list verdict (none, or
 * an override) stands, and the hot check runs before the list lookup. The key is the
 * source masked to its class's prefix while lists judge single addresses: when the
 * slot has list entries for the family, a hit needs the very same address, so a
 * listed host is never judged by its flooding neighbour's entry.
 */
struct lv_hot {
	struct lv_key key;
	__u32 addr[4];    /* the source before masking: lists judge addresses, not prefixes */
	__u16 hits;       /* drops since the count was last written to the state */
	__u8 reason;      /* the reason it was rejected for (a limit's: rate, bytes, ...) */
	__u8 fast;        /* its limits allow rejecting on the cached clock */
	__u64 ready_ns;   /* the limit's ready time when it was remembered */
	__u64 generation; /* lv_policy.generation it was decided under */
	__u64 pad;        /* a slot is one cache line */
};

#define LV_HOT_MAX_HITS 16
#define LV_HOT_LOG2 \
	15 /* slots per CPU: 32,768 (2 MB); 10,000 sources round robin find
			* their own slot 74 % of the time */
#define LV_HOT_SLOTS (1u << LV_HOT_LOG2)

/* A key's slot in lv_hot: cheap (one multiply of the key's words folded), since it is
 * computed for every packet; a flood that aims at collisions only costs lookups. */
static inline __u32 lv_hot_slot(const struct lv_key *k)
{
	const __u32 *w = (const __u32 *)k;

	return ((w[0] ^ w[1] ^ w[2] ^ w[3] ^ w[4]) * 0x9E3779B1u) >> (32 - LV_HOT_LOG2);
}

/*
 * This CPU's share of a class's total limit: time credit taken from the shared GCRA
 * (struct lv_shared) in one CAS, spent here packet by packet. A lease may be taken up to
 * lease_ns ahead of the shared budget, so the class may pass up to one lease per CPU more
 * than burst + rate * t. Credit a CPU has not spent stays with it, however long, until
 * its next packet of the class (or a new class on the id: epoch): it was charged to the
 * shared budget when taken, so spending it late stays within that bound, and none is
 * lost. lease_ns is a small part of the burst.
 */
struct lv_lease {
	__u64 credit_ns;
	__u64 credit_bytes_ns;
	__u64 reserved; /* nothing reads or writes it: kept so that lv_percpu keeps its layout */
	__u64 epoch;    /* lv_class.epoch it was taken for, + 1 (0: none) */
};

/*
 * Per-CPU scratch of the datapath, its layout the datapath's own (the controller neither
 * reads nor writes it): what the pipeline hands its global functions, which take no
 * pointers (limit.h, lv_arrival(); events.h, lv_event_send()), kept off the 512 bytes
 * of stack a chain of calls shares.
 */
struct lv_scratch {
	__u64 words[56];
};

/*
 * What this CPU remembers of a class's autopilot, so that a known source's packet reads
 * nothing of lv_shared: whether the class was engaged when this CPU last looked (each
 * arrival looks), and until when a network of the class may be escalated (read at each
 * of the watch's samples, so a CPU learns of an escalation up to 2^sample_shift of its
 * passed packets late). Scratch: stale values cost a look at lv_shared, never a wrong
 * verdict.
 */
struct lv_pilot {
	__u64 escalated_until_ns;
	__u64 engaged;
};

/*
 * What this CPU remembers of the networks it refused lately as escalated (watch.h,
 * lv_watch_refuses_unseen()): a random flood from one network costs one look at its state a
 * millisecond, not one a packet. Entry by a fold of the network's address; its drops
 * wait in `pending` (lo32 packets, hi32 bytes) for that look to add them to the
 * network's display count.
 */
#define LV_WATCH_MEMOS 4
struct lv_watch_memo {
	struct lv_key key; /* the network's key (LV_KEY_WATCH) */
	__u32 pad;
	__u64 look_ns; /* until then the network counts as escalated without a look */
	__u64 pending;
};

/*
 * SipHash's state after the first two blocks of an IPv6 SYN cookie, its destination
 * address, under one key (syncookie.h, lv_cookie_start6()): the same for every SYN to
 * one of the host's addresses, so each CPU keeps its last one and a SYN costs 12 of
 * SipHash's rounds instead of 16. The all-zero memo holds no key the controller draws.
 */
struct lv_cookie_memo {
	__u64 key[2];
	__u32 daddr[4];
	__u64 v[4];
};

/*
 * What the destination of a SYN is to this host (syn_where.h, lv_syn_where()): this CPU's
 * last answer, good for a few milliseconds, so that a flood of SYNs to one port asks
 * the routing table and the socket table once a while, not once a SYN.
 */
struct lv_syn_where {
	__u32 daddr[4]; /* as lv_packet holds addresses */
	__u16 dport;    /* host order */
	__u8 family;
	__u8 verdict; /* syn_where.h's enum lv_where */
	__u32 pad;
	__u64 until_ns; /* good until then (the cached clock) */
};

struct lv_percpu {
	struct lv_clock clock;
	__u64 events_suppressed; /* since this CPU last sent an event */
	__u64 watch_tick;        /* passed packets of watched classes: every 2^sample_shift-th
				  * is charged to its network (struct lv_auto) */
	__u32 hot_last;          /* the lv_hotset slot of the last source this CPU rejected */
	__u32 pad;
	__u64 answer_ready; /* this CPU's share of the SYN-ACK cap (struct lv_answer) */
	struct lv_cookie_memo cookie_memo;
	__u64 handoff[LV_HO_MAX]; /* enum lv_handoff_result: the tc program's, and the XDP one's */
	struct lv_syn_where where;
	__u64 marks_capped; /* proven sources left unmarked: their network made its marks (lv_syn) */
	struct lv_counter by_reason[LV_REASON_MAX];
	struct lv_counter would[LV_REASON_MAX]; /* monitor mode: would have been dropped */
	struct lv_class_counters by_class[LV_MAX_CLASSES];
	struct lv_lease lease[LV_MAX_CLASSES];
	struct lv_pilot pilot[LV_MAX_CLASSES];
	struct lv_watch_memo watch_memo[LV_WATCH_MEMOS];
	struct lv_key watch_probe; /* the network key lv_watch_escalated_net() looks up: off the stack, which
				    * the main program has no room left on */
	__u32 pad2;
	struct lv_scratch scratch;
};

#ifndef __bpf__
LV_STATIC_ASSERT(sizeof(struct lv_hot) == 64, "lv_hot layout");
LV_STATIC_ASSERT(sizeof(struct lv_watch_memo) == 40, "lv_watch_memo layout");
LV_STATIC_ASSERT(sizeof(struct lv_syn_where) == 32, "lv_syn_where layout");
LV_STATIC_ASSERT(sizeof(struct lv_percpu) == 160 + 8 * LV_HO_MAX + 32 * LV_REASON_MAX + 80 * LV_MAX_CLASSES +
						     40 * LV_WATCH_MEMOS + 24 + 448,
		 "lv_percpu layout");
#endif

#endif /* LEVEE_PERCPU_H */
