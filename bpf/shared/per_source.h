/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * per_source.h - what levee keeps of one source or network: its key and limiter state
 * (lv_state), a watched network's state in the same map (lv_watch), and its ban record
 * (lv_bans).
 */
#ifndef LEVEE_PER_SOURCE_H
#define LEVEE_PER_SOURCE_H

#include "common_types.h"

/* ---- per-source state: LRU hash lv_state ---------------------------------------- */

enum lv_family {
	LV_AF_INET = 4,
	LV_AF_INET6 = 6,
	/* Or'ed into lv_key.family: the state of a whole network of a class (its network
	 * limit, lv_class.net_*), kept in lv_state beside its sources. */
	LV_KEY_NETWORK = 0x80,
	/* ...a source admitted while its class was not calm (struct lv_guard): on
	 * probation until the class is calm again, its packets looked up under this key. */
	LV_KEY_PROBATION = 0x40,
	/* ...a network the autopilot watches (struct lv_watch), not a source. */
	LV_KEY_WATCH = 0x20,
	LV_KEY_FLAGS = LV_KEY_NETWORK | LV_KEY_PROBATION | LV_KEY_WATCH,
};

/* The address family of a key, without its flags. */
static inline __u8 lv_key_family(__u8 family)
{
	return family & ~LV_KEY_FLAGS;
}

/* Is a key of lv_state a source's (on probation or not), not a network's? */
static inline int lv_key_is_source(__u8 family)
{
	return !(family & (LV_KEY_NETWORK | LV_KEY_WATCH));
}

/* lv_key.class_id of a ban record that applies in every class (lv_bans). */
#define LV_ALL_CLASSES 0xffff

/*
 * One tracked source in one class. IPv4 addresses are stored IPv4-mapped
 * (::ffff:a.b.c.d) and the family is kept beside them, so an IPv6 packet from
 * ::ffff:a.b.c.d never shares a bucket with the IPv4 host a.b.c.d. The address is
 * masked to the class's prefix length before lookup, which is how a whole /24 or /64
 * becomes one source.
 */
struct lv_key {
	__u32 addr[4];  /* network byte order */
	__u16 class_id; /* the class's id: index into lv_policy.classes */
	__u8 family;    /* enum lv_family */
	__u8 epoch;     /* the class's lv_class.epoch: a class given an id that another
			 * class held before never finds that class's state */
};

/*
 * GCRA state in "earliest eligible time" form, one per limit: a packet conforms when
 * now >= ready, and passing it moves ready forward by its cost (see limiter.h).
 * Storing the eligible time rather than the theoretical arrival time (TAT = ready +
 * tau) makes a live limit change take effect at once: a source that was being limited
 * continues at the new rate, unused burst credit is capped by the new burst.
 *
 * Counters pack packets in the low 32 bits and bytes in the high 32 bits, so one add
 * updates both; both wrap (readers take differences, or show them modulo 2^32). They
 * are for display, updated with plain adds: two CPUs updating one source at the same
 * instant may lose a count. Drops are kept pending per CPU (struct lv_hot) and written
 * once per LV_HOT_MAX_HITS: a flood's drops cost one write per LV_HOT_MAX_HITS packets,
 * and drops pending when another source takes a CPU's hot entry are not counted here.
 * The per-CPU counters count every packet exactly.
 *
 * born_ns says when the source got its state (or its state on probation), so that the
 * sources that arrived with a network's flood, before it was escalated, are told from
 * the network's earlier ones (lv_watch.runup_ns, shared/guard.h's lv_watch_runup()).
 *
 * 40 bytes keeps a tracked source at 128 bytes of kernel memory (16 B bucket + 48 B
 * element header + 24 B key + 40 B value at 1M entries).
 */
struct lv_state {
	__u64 ready_ns;       /* packet limit: CLOCK_MONOTONIC ns */
	__u64 ready_bytes_ns; /* byte limit */
	__u64 passed;         /* lo32 packets, hi32 bytes */
	__u64 dropped;        /* lo32 packets, hi32 bytes */
	__u64 born_ns;        /* when it got state: CLOCK_MONOTONIC ns */
};

#define LV_COUNT_PACKETS(v) ((__u32)(v))
#define LV_COUNT_BYTES(v) ((__u32)((v) >> 32))

/*
 * A network the autopilot watches (struct lv_auto), kept in lv_state under the key of
 * the network (LV_KEY_WATCH) in place of a struct lv_state of the same size.
 */
struct lv_watch {
	__u64 ready_ns;     /* the network's limit (lv_auto.watch), a GCRA */
	__u64 escalated_ns; /* when it was escalated; 0: only watched */
	__u64 last_over_ns; /* its last packet refused, or its escalation */
	__u64 dropped;      /* refused while escalated: lo32 packets, hi32 bytes (display) */
	__u64 runup_ns;     /* its last sample that found its limit unused: a flood that
			     * escalates it began after (shared/guard.h, lv_watch_runup()) */
};

/*
 * ---- bans: lv_bans, an LRU hash by lv_key (class_id LV_ALL_CLASSES: every class) ----
 *
 * A source over its limit in a class with bans gets a record, and its state's ready
 * time is pushed to until_ns, so it fails its own limit (no extra lookup on the pass
 * path) until then. While banned its packets are still measured against the class's
 * limits (shadow_*): one that would have been over them extends the ban to now +
 * duration_ns. The record outlives the ban: an offence within forget_ns after until_ns
 * doubles duration_ns (up to ban_max_ns); after that, it starts over at ban_ns.
 */
struct lv_ban {
	__u64 until_ns;    /* banned while now < until_ns */
	__u64 duration_ns; /* this ban's length */
	__u64 shadow_ns;   /* the packet limit's ready time, measured while banned */
	__u64 shadow_bytes_ns;
	__u64 since_ns; /* when this ban began */
	__u32 offences; /* bans since the last quiet period of forget_ns */
	__u16 class_id; /* the class that imposed it */
	__u8 epoch;     /* ...and its epoch (a class given that id later is another) */
	__u8 pad;
};

#ifndef __bpf__
LV_STATIC_ASSERT(sizeof(struct lv_key) == 20, "lv_key layout");
LV_STATIC_ASSERT(sizeof(struct lv_state) == 40, "lv_state layout");
LV_STATIC_ASSERT(sizeof(struct lv_watch) == sizeof(struct lv_state), "lv_watch layout");
LV_STATIC_ASSERT(sizeof(struct lv_ban) == 48, "lv_ban layout");
#endif

#endif /* LEVEE_PER_SOURCE_H */
