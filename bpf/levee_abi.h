/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * levee_abi.h - everything that crosses the kernel/user boundary, defined once.
 *
 * The XDP program (bpf/levee.bpf.c) and the controller (userspace/) both include this
 * file. Pinned maps outlive the controller that created them, so a controller adopting
 * pinned state checks LV_ABI_VERSION before it touches anything: change it whenever a
 * layout below changes.
 */
#ifndef LEVEE_ABI_H
#define LEVEE_ABI_H

#include <linux/types.h>

#define LV_ABI_VERSION 1

#define LV_NSEC_PER_SEC 1000000000ULL

/* Map names as the kernel sees them (BPF_OBJ_NAME_LEN is 16) and as they are pinned. */
#define LV_MAP_STATE "lv_state"
#define LV_MAP_POLICY "lv_policy"
#define LV_MAP_PERCPU "lv_percpu"
#define LV_PIN_LINK "link"

/* Default size of the per-source map; `levee attach --max-sources` overrides it. */
#define LV_DEFAULT_MAX_SOURCES 1000000

/* Room for the traffic classes of issue 4 (>= 32 required); class 0 is the default. */
#define LV_MAX_CLASSES 64

/*
 * Why a packet got its verdict. Every packet ends in exactly one reason, counted per CPU
 * in packets and bytes; the verdict follows from the reason (lv_reason_drops()).
 * Values are part of the ABI: append, never renumber.
 */
enum lv_reason {
	/* passed */
	LV_R_CONFORMING = 0, /* limited traffic that was within its limit */
	LV_R_NOT_IP = 1,     /* ARP, LLDP, ...: not IP, never limited */
	LV_R_ALLOW = 2,      /* reserved: allow list */
	LV_R_FIRST_DROP = 8,
	/* dropped */
	LV_R_RATE = 8,       /* over its per-source packet limit */
	LV_R_MALFORMED = 9,  /* truncated or inconsistent L2/L3 header */
	LV_R_VLAN_DEPTH = 10, /* more than two VLAN tags: not parsed, so not let through */
	LV_R_MAP_FULL = 11,  /* the kernel could not create state for a new source */
	LV_R_CONTENDED = 12, /* lost the compare-and-swap race too often (fails closed) */
	/* 13..23 reserved: deny, ban, admission, bytes, ... */
	LV_REASON_MAX = 24,
};

static inline int lv_reason_drops(unsigned int reason)
{
	return reason >= LV_R_FIRST_DROP;
}

/* ---- per-source state: LRU hash lv_state ---------------------------------------- */

enum lv_family {
	LV_AF_INET = 4,
	LV_AF_INET6 = 6,
};

/*
 * One tracked source in one class. IPv4 addresses are stored IPv4-mapped
 * (::ffff:a.b.c.d) and the family is kept beside them, so an IPv6 packet from
 * ::ffff:a.b.c.d never shares a bucket with the IPv4 host a.b.c.d. The address is
 * masked to the class's prefix length before lookup, which is how a whole /24 or /64
 * becomes one source.
 */
struct lv_key {
	__u32 addr[4];  /* network byte order */
	__u16 class_id; /* index into lv_policy.classes */
	__u8 family;    /* enum lv_family */
	__u8 pad;       /* must be zero: keys are hashed bytewise */
};

/*
 * GCRA state in "earliest eligible time" form: a packet conforms when now >= ready_ns,
 * and passing it moves ready_ns forward by one emission interval (see limiter.h).
 * Storing the eligible time rather than the theoretical arrival time (TAT = ready +
 * tau) makes a live limit change take effect at once: a source that was being
 * limited continues at the new rate, unused burst credit is capped by the new burst.
 *
 * 32 bytes keeps a tracked source under 128 bytes of kernel memory (16 B bucket +
 * 48 B element header + 24 B key + 32 B value at 1M entries).
 */
struct lv_state {
	__u64 ready_ns;       /* packets: CLOCK_MONOTONIC ns */
	__u64 ready_bytes_ns; /* reserved: byte budget */
	__u64 reserved[2];    /* reserved: per-source counters, bans */
};

/* ---- configuration: lv_policy, one mmapable array entry ------------------------- */

/* One GCRA limit. interval_ns == 0 means "no limit of this kind". */
struct lv_limit {
	__u64 interval_ns; /* emission interval T = ceil(1e9 / rate) */
	__u64 tau_ns;      /* burst tolerance (burst - 1) * T */
	__u64 rate;        /* as the operator gave it, for display */
	__u64 burst;       /* as the operator gave it, for display */
};

enum lv_class_flags {
	/*
	 * Reject on the per-CPU cached clock (a lower bound of now) before reading the
	 * fine clock. It can only reject early, by the cache's staleness (at most about a
	 * tick), never admit late. Set by the controller only when tau covers two ticks,
	 * so a source sending at or below its rate from a refilled bucket, which keeps
	 * tau of credit, is never rejected by it. A source that spent its burst and goes
	 * on at exactly its rate has no credit left and may lose a packet to it, as it
	 * would to any jitter on the wire.
	 */
	LV_CLASS_FAST_REJECT = 1u << 0,
};

struct lv_class {
	struct lv_limit pkt;
	struct lv_limit bytes; /* reserved: byte budget */
	__u32 mask4;           /* IPv4 prefix mask, network byte order */
	__u32 mask6[4];        /* IPv6 prefix mask, network byte order */
	__u32 flags;           /* enum lv_class_flags */
	__u8 prefix4;          /* for display */
	__u8 prefix6;
	__u8 pad[6];
};

struct lv_policy {
	__u32 nr_classes; /* >= 1 */
	__u32 flags;      /* reserved: monitor mode, ... */
	__u64 generation; /* bumped by every change the controller makes */
	struct lv_class classes[LV_MAX_CLASSES];
};

/*
 * A policy change writes the slot packets are not reading, waits until no packet can
 * still be reading it (a grace period), then flips `active` with one aligned store.
 * A packet loads `active` once and uses that slot throughout, so it sees either the
 * old policy or the new one, never a mix.
 */
struct lv_control {
	__u32 abi_version; /* LV_ABI_VERSION of the controller that attached */
	__u32 active;      /* 0 or 1: the slot packets use */
	__u32 ifindex;     /* interface attached to, to notice it went away */
	__u32 attach_mode; /* enum lv_attach_mode as requested */
	struct lv_policy slot[2];
};

enum lv_attach_mode {
	LV_MODE_AUTO = 0,
	LV_MODE_NATIVE = 1,
	LV_MODE_GENERIC = 2,
};

/* ---- per-CPU counters and scratch: lv_percpu, one per-CPU array entry ----------- */

struct lv_counter {
	__u64 packets;
	__u64 bytes;
};

/*
 * Lower bound of CLOCK_MONOTONIC cached per CPU: the fine clock costs ~40 ns a read
 * here, jiffies nothing. Refreshed whenever jiffies moves, every
 * LV_CLOCK_REFRESH_PKTS packets, and by every fine read.
 */
struct lv_clock {
	__u64 ns;      /* a bpf_ktime_get_ns() reading taken on this CPU */
	__u64 jiffies; /* jiffies when it was taken */
	__u64 uses;    /* packets that used it since */
};

#define LV_CLOCK_REFRESH_PKTS 16

/*
 * The last source this CPU rejected for its rate, with the eligible time its state
 * had then. A repeat packet of that source is rejected while that time is still ahead
 * of the cached clock, without the LRU lookup (hashing the key is the largest cost
 * left on the drop path). Exact for the same reason as the fast reject: the datapath
 * only ever moves a source's ready_ns forward, so the remembered value is <= the real
 * one and rejecting on it can only reject early, never admit. Every
 * LV_HOT_MAX_HITS-th repeat takes the real path, which keeps the source recent in the
 * LRU and notices an eviction. A policy change bumps the generation and invalidates
 * every CPU's entry: userspace that lowers a ready_ns (unban, a test) must publish.
 */
struct lv_hot {
	struct lv_key key;
	__u32 hits;       /* packets rejected from this entry */
	__u64 ready_ns;   /* the source's ready_ns when it was remembered */
	__u64 generation; /* lv_policy.generation it was decided under */
};

#define LV_HOT_MAX_HITS 16

struct lv_percpu {
	struct lv_clock clock;
	__u64 pad;
	struct lv_hot hot;
	struct lv_counter by_reason[LV_REASON_MAX];
};

#ifndef __bpf__
/* Sizes are ABI: catch accidental changes on the userspace side (C or C++). */
#ifdef __cplusplus
#define LV_STATIC_ASSERT static_assert
#else
#define LV_STATIC_ASSERT _Static_assert
#endif
LV_STATIC_ASSERT(sizeof(struct lv_key) == 20, "lv_key layout");
LV_STATIC_ASSERT(sizeof(struct lv_state) == 32, "lv_state layout");
LV_STATIC_ASSERT(sizeof(struct lv_limit) == 32, "lv_limit layout");
LV_STATIC_ASSERT(sizeof(struct lv_class) == 96, "lv_class layout");
LV_STATIC_ASSERT(sizeof(struct lv_policy) == 16 + 96 * LV_MAX_CLASSES, "lv_policy layout");
LV_STATIC_ASSERT(sizeof(struct lv_hot) == 40, "lv_hot layout");
LV_STATIC_ASSERT(sizeof(struct lv_percpu) == 32 + 40 + 16 * LV_REASON_MAX, "lv_percpu layout");
#endif

#endif /* LEVEE_ABI_H */
