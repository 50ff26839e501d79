/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * policy_types.h - the configuration the controller writes and packets read: classes,
 * their autopilot and limits, overrides, the class table, and the two policy slots of
 * lv_control that a change flips between.
 */
#ifndef LEVEE_POLICY_TYPES_H
#define LEVEE_POLICY_TYPES_H

#include "common_types.h"
#include "synauth_types.h"

/* ---- configuration: lv_policy, one mmapable array entry ------------------------- */

enum lv_class_flags {
	/*
	 * Reject on the per-CPU cached clock (a lower bound of now) before reading the
	 * fine clock. It can only reject early, by the cache's staleness, never admit
	 * late. The cache is used only on a CPU busy with packets, where it is refreshed
	 * every few microseconds (lv_clock_cached); its staleness is bounded by a tick
	 * even where packets are sparse. Set by the controller only when the tau of every limit
	 * of the class covers two ticks, so a source sending at or below its rate from a
	 * refilled bucket, which keeps tau of credit, is never rejected by it. A source
	 * that spent its burst and goes on at exactly its rate has no credit left and may
	 * lose a packet to it, as it would to any jitter on the wire.
	 */
	LV_CLASS_FAST_REJECT = 1u << 0,
	LV_CLASS_MONITOR = 1u << 1,     /* count would-be drops (LV_MONITORABLE), drop nothing */
	LV_CLASS_BAN = 1u << 2,         /* a source over its limit is banned (ban_ns) */
	LV_CLASS_BAN_ALL = 1u << 3,     /* ...in every class, not only this one */
	LV_CLASS_ADMIT = 1u << 4,       /* new sources within the admit budget only */
	LV_CLASS_NETWORK = 1u << 5,     /* net_pkt or net_bytes set */
	LV_CLASS_TOTAL = 1u << 6,       /* total_pkt or total_bytes set */
	LV_CLASS_MONITOR_OWN = 1u << 7, /* the class's own mode is monitor (LV_CLASS_MONITOR
					 * is that or the interface's LV_POL_MONITOR) */
	LV_CLASS_AUTO_ADMIT = 1u << 8,  /* the admission autopilot (struct lv_auto, lv_guard) */
	LV_CLASS_ESCALATE = 1u << 9,    /* the network watch (struct lv_auto, lv_watch) */
	LV_CLASS_SYN_AUTH = 1u << 10,   /* TCP sources prove their address first (syncookie.h) */
	LV_CLASS_SYN_RESET = 1u << 11,  /* ...by reset, even where levee's tc program could hand
					 * the connection to the listener (synauth.h) */
	LV_CLASS_SYN_AUTO = 1u << 12,   /* ...only while the autopilot is engaged, and only a source
					 * without state (syn_auto.h); not with LV_CLASS_SYN_AUTH */
};

/* A class that may answer SYNs: it needs the cookie keys, and levee's tc program to proxy. */
#define LV_CLASS_SYN_ANY (LV_CLASS_SYN_AUTH | LV_CLASS_SYN_AUTO)

/*
 * The class's autopilot: what it takes as normal and how it reacts (the controller
 * compiles it from [auto] and the class's new_sources and escalate; its state is in
 * lv_shared, struct lv_guard, and in lv_state, struct lv_watch).
 *
 * Admission. A packet of a source with no state is an arrival. Arrivals are measured
 * against a threshold: a GCRA of `margin` x the learned arrivals per second, never
 * below the floor, with `burst_ns` of tolerance. While the class is calm, every
 * arrival gets state, exactly as without an autopilot. An arrival over the threshold
 * is abnormal: it still gets state, but on probation (LV_KEY_PROBATION), and the class
 * is no longer calm. Abnormal arrivals for `sustain_ns` engage the class: from then on
 * the threshold is a budget, and arrivals over it get nothing (admission), but those
 * of known-good sources (lv_good); sources on probation share one allowance (the
 * threshold's rate, in packets: newcomer). `release_ns` without an abnormal arrival
 * makes the class calm: it releases, and sources on probation are promoted.
 *
 * Escalation. One passed packet in 2^sample_shift of the class is charged,
 * 2^sample_shift times over, to its source's network's limit (`watch`, per
 * watch_mask4/6). A network over it is escalated: from then on each of its packets is
 * charged once, and refused over the limit (escalated), until `release_ns` passes
 * without one refused.
 */
struct lv_auto {
	__u64 floor_cost;      /* ns per arrival at the floor rate: the threshold is never stricter */
	__u64 burst_ns;        /* the threshold's tolerance (its tau) */
	__u64 sustain_ns;      /* abnormal this long: engage */
	__u64 release_ns;      /* calm after this long without an abnormal arrival (or refused
			      * packet of an escalated network) */
	__u32 margin;          /* threshold = margin x learned arrivals/s */
	__u32 sample_shift;    /* the watch charges one passed packet in 2^sample_shift */
	struct lv_limit watch; /* a network's limit */
	__u32 watch_mask4;     /* the watched networks' prefix masks, network byte order */
	__u32 watch_mask6[4];
	__u8 watch_prefix4; /* for display */
	__u8 watch_prefix6;
	__u8 pad[2];
	__u32 floor;           /* the floor, new sources per second (for display) */
	__u32 network_sources; /* `watch` is this many sources' worth of the class's per-source
				* packet limit; 0: watch.rate as the operator gave it */
	__u32 pad2;
};

struct lv_class {
	struct lv_limit pkt; /* per source */
	struct lv_limit bytes;
	struct lv_limit admit;   /* new sources per second that may create state (per class) */
	struct lv_limit net_pkt; /* per enclosing network (net_mask*): all its sources */
	struct lv_limit net_bytes;
	struct lv_limit total_pkt; /* the class as a whole (struct lv_shared, lv_lease) */
	struct lv_limit total_bytes;
	__u64 ban_ns;     /* first ban; 0: no bans */
	__u64 ban_max_ns; /* repeat offences double the ban up to this */
	__u64 forget_ns;  /* an offence this long after the last ban ended starts over */
	__u64 lease_ns;   /* most of the class total one CPU takes at once (lv_lease) */
	__u32 mask4;      /* IPv4 source prefix mask, network byte order */
	__u32 mask6[4];   /* IPv6 source prefix mask, network byte order */
	__u32 net_mask4;  /* the network limit's prefix masks */
	__u32 net_mask6[4];
	__u32 flags;  /* enum lv_class_flags */
	__u8 prefix4; /* for display */
	__u8 prefix6;
	__u8 net_prefix4;
	__u8 net_prefix6;
	__u8 epoch; /* bumped when the id is given to a new class (struct lv_key) */
	__u8 pad[7];
	char name[LV_NAME_LEN];
	struct lv_auto autop; /* LV_CLASS_AUTO_ADMIT, LV_CLASS_ESCALATE */
};

/* Limits of a network of its own, replacing a class's for the classes in `classes`. */
struct lv_override {
	struct lv_limit pkt;
	struct lv_limit bytes;
	__u64 classes; /* bit i: applies to class i */
	__u32 flags;   /* enum lv_class_flags, for these limits */
	__u32 pad;
	char name[LV_NAME_LEN];
};

/*
 * What the classifier knows of a packet. The first three carry a destination port
 * and are looked up by it; the rest are one entry each. A non-first fragment carries
 * no transport header: it is classified by its protocol alone (*_FRAG), as the first
 * class without a port or SYN condition that matches the protocol.
 */
enum lv_l4_kind {
	LV_L4_TCP_SYN = 0, /* TCP with SYN and without ACK */
	LV_L4_TCP = 1,     /* any other TCP */
	LV_L4_UDP = 2,
	LV_L4_PORTED = 3,
	LV_L4_ICMP = 3,  /* ICMP over IPv4 */
	LV_L4_ICMP6 = 4, /* ICMPv6 over IPv6 */
	LV_L4_OTHER = 5, /* any other protocol */
	LV_L4_TCP_FRAG = 6,
	LV_L4_UDP_FRAG = 7,
	LV_L4_KINDS = 8,
};

/*
 * First match wins, compiled by the controller into a table: a packet's class is one
 * byte load whatever the number of classes. Classes that match source ports
 * (match.sport: reflection from UDP services) have a table of their own, by_sport,
 * read only when the policy has one (LV_POL_SPORT): a packet takes the first-placed of
 * its by_port and its by_sport class (rank: position in first-match order). A class
 * matches source or destination ports, never both, so each table is exact.
 */
#define LV_NO_SPORT_CLASS 0xff /* by_sport: no class matches this source port */

struct lv_class_table {
	__u8 by_port[LV_L4_PORTED][65536];  /* class id by destination port */
	__u8 by_sport[LV_L4_PORTED][65536]; /* class id by source port, or LV_NO_SPORT_CLASS */
	__u8 by_kind[LV_L4_KINDS];          /* class id for kinds >= LV_L4_PORTED */
	__u8 rank[LV_MAX_CLASSES];          /* by id: position in first-match order */
};

/*
 * Classes are kept at stable ids, not positions: a class keeps its id across reloads
 * (matched by name), so its sources' state (keyed by id) and its counters stay with
 * it when classes are added or removed around it. `order` lists the ids in
 * first-match order, the default class last; the class table holds ids.
 */
enum lv_policy_flags {
	LV_POL_MONITOR = 1u << 0,      /* `levee set --mode monitor`: every class monitors
					* (already folded into each class's flags) */
	LV_POL_MONITOR_DENY = 1u << 1, /* the deny list drops even in monitor mode */
	LV_POL_REFUSE_FULL = 1u << 2,  /* a full map refuses new sources (map_full) instead
					* of evicting the least recently used */
	LV_POL_BAN_ALL = 1u << 3,      /* some class bans in every class: look up lv_bans */
	LV_POL_SPORT = 1u << 4,        /* some class matches source ports: read by_sport */
};

struct lv_policy {
	__u32 nr_classes;
	__u32 nr_overrides;
	__u32 flags;     /* enum lv_policy_flags */
	__u32 ban_mask4; /* source prefix of bans in every class (LV_CLASS_BAN_ALL
			   * classes share one prefix) */
	__u32 ban_mask6[4];
	__u64 full_at;          /* LV_POL_REFUSE_FULL: refuse once lv_shared's source count
			   * reaches this (a little under the map's size: the LRU starts
			   * evicting before it is full) */
	struct lv_limit events; /* events into lv_events, all CPUs together; cost 0: none */
	__u64 generation;       /* bumped by every change the controller makes */
	__u32 nr_list4;         /* entries in this slot's IPv4 list trie: 0 skips the lookup */
	__u32 nr_list6;
	__u32 nr_host4; /* entries in this slot's IPv4 host hash: 0 skips the lookup */
	__u32 nr_host6;
	struct lv_answer answer;                 /* SYN-ACKs of SYN authentication */
	__u8 order[LV_MAX_CLASSES];              /* class ids in first-match order, nr_classes of them */
	struct lv_class classes[LV_MAX_CLASSES]; /* by id; an unused id keeps its epoch */
	/* The per-class counters (lv_percpu.by_class) when the id was given to its
	 * current class: what the class has counted is the difference. */
	struct lv_class_counters class_base[LV_MAX_CLASSES];
	struct lv_override overrides[LV_MAX_OVERRIDES];
	char source[256]; /* where the policy came from (a config file), for display */
	struct lv_class_table table;
};

/*
 * A policy change writes the slot packets are not reading (and that slot's list
 * tries), waits until no packet can still be reading it (a grace period), then flips
 * `active` with one aligned store. A packet loads `active` once and uses that slot and
 * its tries throughout, so it sees either the old policy or the new one, never a mix.
 */
struct lv_control {
	__u32 abi_version; /* LV_ABI_VERSION of the controller that attached */
	__u32 active;      /* 0 or 1: the slot packets use */
	__u32 ifindex;     /* interface attached to, to notice it went away */
	__u32 attach_mode; /* enum lv_attach_mode as requested */
	struct lv_policy slot[2];
	__u32 seen_active;      /* 0 or 1: the half of lv_seen packets read */
	__u32 seen_seed;        /* lv_seen_hash()'s seed, random per attach */
	__u32 good_active;      /* 0 or 1: the half of lv_good packets read */
	__u32 cs_present;       /* enum lv_cs_present: which CrowdSec maps hold entries */
	__u64 cookie_key[2][2]; /* SYN cookies' SipHash keys, one per key epoch's parity (syncookie.h) */
	__u32 handoff;          /* 1: levee's tc program is on the interface, so SYN authentication
				 * proxies (hands a proven connection to the listener) */
	__u16 mss4, mss6;       /* the MSS levee's SYN-ACKs offer: the interface's MTU less headers */
	__u32 tcp_off;          /* LV_TCP_OFF_*: handshake options the listener's network namespace
				 * turned off, which a SYN-ACK must not offer (the kernel refuses a
				 * hand-off that has them); the controller follows the sysctls */
	__u32 good_epoch;       /* bumped by every ageing of lv_good: each network's count of
				 * marks (lv_syn) starts over */
	__u32 tc_handle;        /* levee's tc filter on the interface's clsact ingress: its handle
				 * and priority (0: none), so that only it is ever replaced or
				 * removed */
	__u16 tc_priority;
	__u8 tc_flags;    /* LV_TC_* */
	__u8 local_known; /* 1: lv_local holds the host's own addresses (levee run keeps it
				 * current); 0: any address that is not forwarded is taken for
				 * the host's */
};

enum lv_attach_mode {
	LV_MODE_AUTO = 0,
	LV_MODE_NATIVE = 1,
	LV_MODE_GENERIC = 2,
};

#ifndef __bpf__
LV_STATIC_ASSERT(sizeof(struct lv_class) == 344 + 112, "lv_class layout");
LV_STATIC_ASSERT(sizeof(struct lv_auto) == 112, "lv_auto layout");
LV_STATIC_ASSERT(sizeof(struct lv_override) == 112, "lv_override layout");
LV_STATIC_ASSERT(sizeof(struct lv_class_table) == 6 * 65536 + 8 + LV_MAX_CLASSES, "lv_class_table layout");
#endif

#endif /* LEVEE_POLICY_TYPES_H */
