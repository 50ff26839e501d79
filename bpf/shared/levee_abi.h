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

#define LV_ABI_VERSION 11

#define LV_NSEC_PER_SEC 1000000000ULL

/* Map names as the kernel sees them (BPF_OBJ_NAME_LEN is 16) and as they are pinned. */
#define LV_MAP_STATE "lv_state"
#define LV_MAP_POLICY "lv_policy"
#define LV_MAP_PERCPU "lv_percpu"
#define LV_MAP_LIST4_0 "lv_list4_0"
#define LV_MAP_LIST4_1 "lv_list4_1"
#define LV_MAP_LIST6_0 "lv_list6_0"
#define LV_MAP_LIST6_1 "lv_list6_1"
#define LV_MAP_HOST4_0 "lv_host4_0"
#define LV_MAP_HOST4_1 "lv_host4_1"
#define LV_MAP_HOST6_0 "lv_host6_0"
#define LV_MAP_HOST6_1 "lv_host6_1"
#define LV_MAP_SHARED "lv_shared"
#define LV_MAP_BANS "lv_bans"
#define LV_MAP_SEEN "lv_seen"
#define LV_MAP_GOOD "lv_good"
#define LV_MAP_LOCAL "lv_local"
#define LV_MAP_EVENTS "lv_events"
#define LV_MAP_CS_HOST4 "lv_cs_host4"
#define LV_MAP_CS_HOST6 "lv_cs_host6"
#define LV_MAP_CS_NET4 "lv_cs_net4"
#define LV_MAP_CS_NET6 "lv_cs_net6"
#define LV_PIN_LINK "link"

/* Default size of the per-source map; `levee attach --max-sources` overrides it. */
#define LV_DEFAULT_MAX_SOURCES 1000000
/* Entries each list trie may hold (tries allocate per entry, this is only a cap). */
#define LV_MAX_LIST_ENTRIES 1000000
/* Entries each CrowdSec map may hold (per family, hosts and ranges apart): a host hash
 * of this many costs 8 MB of buckets whether filled or not. */
#define LV_MAX_CS_ENTRIES 524288
/* Default size of the ban records map (an LRU); `max_bans` in [interface] overrides it. */
#define LV_DEFAULT_MAX_BANS 65536

#define LV_MAX_CLASSES 64   /* traffic classes; ids fit the class table's bytes */
#define LV_MAX_OVERRIDES 64 /* networks with limits of their own */
#define LV_NAME_LEN 32      /* class and override names, NUL-terminated */

/*
 * Why a packet got its verdict. Every packet ends in exactly one reason, counted per CPU
 * in packets and bytes; the verdict follows from the reason (lv_reason_drops()).
 * Values are part of the ABI: append, never renumber.
 */
enum lv_reason {
	/* passed */
	LV_R_CONFORMING = 0, /* limited traffic that was within its limits */
	LV_R_NOT_IP = 1,     /* ARP, LLDP, ...: not IP, never limited */
	LV_R_ALLOW = 2,      /* on the allow list: never limited */
	LV_R_MONITORED = 3,  /* would have been dropped, passed because its class is in
			      * monitor mode: lv_percpu.would says for which reason */
	LV_R_PROXIED = 4,    /* SYN authentication's proxy mode: an ACK that returned a valid
			      * cookie, its source now known-good, passed with the cookie in
			      * the frame's metadata for levee's tc program to make the
			      * connection of (struct lv_handoff) */
	LV_R_RETRIED = 5,    /* SYN authentication's reset mode: the SYN a client retried after
			      * its RST returned the cookie, passed once to the listener (struct
			      * lv_syn: a retry pass), without state */
	LV_R_OPENING = 6,    /* SYN authentication: a packet of a connection the host is opening
			      * (a request socket: the listener answered its SYN), passed
			      * without state; the stack checks it */
	LV_R_PASS_END = 7,   /* one past the last pass reason: a new one takes it and moves this */
	/* 7 reserved */
	LV_R_FIRST_DROP = 8,
	/* dropped */
	LV_R_RATE = 8,         /* over its per-source packet limit */
	LV_R_MALFORMED = 9,    /* truncated or inconsistent L2/L3/L4 header */
	LV_R_VLAN_DEPTH = 10,  /* more than two VLAN tags: not parsed, so not let through */
	LV_R_MAP_FULL = 11,    /* the kernel could not create state for a new source */
	LV_R_CONTENDED = 12,   /* lost the compare-and-swap race too often (fails closed) */
	LV_R_DENY = 13,        /* on the deny list */
	LV_R_BYTES = 14,       /* over its per-source byte limit */
	LV_R_EXT_DEPTH = 15,   /* more IPv6 extension headers than levee walks, or a TCP header
				* deeper than SYN authentication reads (LV_SYN_L4_MAX) */
	LV_R_BAN = 16,         /* its source is banned (struct lv_ban) */
	LV_R_ADMISSION = 17,   /* a new source over its class's new-source budget */
	LV_R_NETWORK = 18,     /* over the limit of its enclosing network (/24, /48, ...) */
	LV_R_CLASS_LIMIT = 19, /* over the limit of its class as a whole */
	LV_R_NEWCOMER = 20,    /* a source admitted during an attack, over what such sources
				* share while the class's autopilot is engaged (struct lv_guard) */
	LV_R_ESCALATED = 21,   /* its network was escalated: over that network's limit (struct lv_watch) */
	/* SYN authentication (LV_CLASS_SYN_AUTH, syncookie.h): TCP of a source with no state */
	LV_R_CHALLENGED = 22,   /* a SYN answered with a SYN-ACK that carries a cookie (XDP_TX): the
			       * stack never sees it */
	LV_R_UNVERIFIED = 23,   /* not a SYN, no valid cookie, no connection the host has */
	LV_R_VERIFIED = 24,     /* reset mode: a RST that returned a valid cookie: the SYN its
			       * client retries may pass (LV_R_RETRIED); the RST itself goes no
			       * further, and proves nothing more (any host answers a SYN-ACK it
			       * did not ask for with one) */
	LV_R_ANSWER_LIMIT = 25, /* a SYN left unanswered: SYN-ACKs towards its network, or
				 * all SYN-ACKs, over their rate (struct lv_answer) */
	LV_R_CROWDSEC = 26,     /* its source is under a CrowdSec decision (struct lv_cs_value) */
	LV_R_MARTIAN = 27,      /* a SYN no stack answers: from or to an address that is not unicast
				 * (multicast, broadcast, loopback, zero), from or to a group MAC,
				 * or to an address this host neither owns nor forwards */
	LV_R_NO_LISTENER = 28,  /* a SYN to a port of this host without a listener */
	LV_R_DROP_END = 29,     /* one past the last drop reason: a new one takes it and moves this */
	/* 29..31 reserved */
	LV_REASON_MAX = 32,
};

static inline int lv_reason_drops(unsigned int reason)
{
	return reason >= LV_R_FIRST_DROP;
}

/* Reasons a class in monitor mode counts (lv_percpu.would) instead of dropping: the
 * limiter's decisions. Malformed and unparsed frames are dropped in every mode; the
 * deny list only when the policy says so (LV_POL_MONITOR_DENY). */
#define LV_MONITORABLE                                                                                                \
	((1u << LV_R_RATE) | (1u << LV_R_MAP_FULL) | (1u << LV_R_CONTENDED) | (1u << LV_R_BYTES) | (1u << LV_R_BAN) | \
	 (1u << LV_R_ADMISSION) | (1u << LV_R_NETWORK) | (1u << LV_R_CLASS_LIMIT) | (1u << LV_R_NEWCOMER) |           \
	 (1u << LV_R_ESCALATED) | (1u << LV_R_CHALLENGED) | (1u << LV_R_UNVERIFIED) | (1u << LV_R_ANSWER_LIMIT) |     \
	 (1u << LV_R_CROWDSEC) | (1u << LV_R_MARTIAN) | (1u << LV_R_NO_LISTENER))

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
 * 32 bytes keeps a tracked source under 128 bytes of kernel memory (16 B bucket +
 * 48 B element header + 24 B key + 32 B value at 1M entries).
 */
struct lv_state {
	__u64 ready_ns;       /* packet limit: CLOCK_MONOTONIC ns */
	__u64 ready_bytes_ns; /* byte limit */
	__u64 passed;         /* lo32 packets, hi32 bytes */
	__u64 dropped;        /* lo32 packets, hi32 bytes */
};

#define LV_COUNT_PACKETS(v) ((__u32)(v))
#define LV_COUNT_BYTES(v) ((__u32)((v) >> 32))

/* ---- configuration: lv_policy, one mmapable array entry ------------------------- */

struct lv_counter {
	__u64 packets;
	__u64 bytes;
};

struct lv_class_counters {
	struct lv_counter passed;
	struct lv_counter dropped;
};

/*
 * One GCRA limit. cost == 0 means "no limit of this kind".
 * Packets: cost is the emission interval in ns, ceil(1e9 / rate).
 * Bytes: cost is ns per byte in fixed point, ceil(1e9 << LV_BYTE_SHIFT / rate); a
 * packet of len bytes costs ceil(len * cost >> LV_BYTE_SHIFT) ns.
 */
struct lv_limit {
	__u64 cost;
	__u64 tau_ns; /* burst tolerance: packets (burst - 1) * T; bytes burst * cost */
	__u64 rate;   /* as the operator gave it, for display */
	__u64 burst;  /* as the operator gave it, for display */
};

#define LV_BYTE_SHIFT 16

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
};

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

/*
 * What levee may answer of a SYN flood (LV_CLASS_SYN_AUTH): a SYN-ACK is the size of the
 * SYN it answers, but a flood that spoofs one victim's addresses must not make levee
 * that victim's hose. SYN-ACKs towards one network (answer_mask*) share `per_network`,
 * kept in LV_ANSWER_CELLS cells of lv_answers by a hash of the network (networks that
 * share a cell share its rate: stricter, never looser); all of one CPU's share
 * `cap_per_cpu` (the interface's cap divided among the CPUs). A SYN over either is
 * dropped unanswered (LV_R_ANSWER_LIMIT); its client retransmits.
 */
struct lv_answer {
	struct lv_limit per_network;
	struct lv_limit cap_per_cpu;
	__u32 mask4;
	__u32 mask6[4];
	__u8 prefix4; /* for display */
	__u8 prefix6;
	__u8 pad[2];
	__u32 marks_per_network; /* known-good marks one network (answer_mask*) may make in an
				  * ageing of lv_good (lv_syn_mark_take()); 0: no bound */
	__u32 pad2;
};

#define LV_ANSWER_LOG2 14
#define LV_ANSWER_CELLS (1u << LV_ANSWER_LOG2)
#define LV_ANSWER_SAY_NS (10 * LV_NSEC_PER_SEC) /* an answer_limited event per cell at most */

/* One cell of lv_answers: the GCRA ready time of the networks hashed to it, and when it
 * last said it refused an answer (LV_EV_ANSWER_LIMITED), claimed with a CAS. */
struct lv_answer_cell {
	__u64 ready;
	__u64 said_ns;
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

/*
 * lv_local: the host's own addresses (its local routes), for SYN authentication, which
 * answers only SYNs to them or to hosts it forwards to (syn_where.h). An LPM trie: an
 * address is a /32 or /128, a local route of a whole prefix (AnyIP) its prefix. IPv4
 * IPv4-mapped, as lv_packet holds it.
 */
struct lv_local_key {
	__u32 prefixlen; /* of the 128 bits */
	__u32 addr[4];
};
#define LV_MAX_LOCAL 65536

/* lv_control.tcp_off: the options of net.ipv4.tcp_timestamps, tcp_sack and
 * tcp_window_scaling when they are 0. */
enum lv_tcp_off {
	LV_TCP_OFF_TS = 1u << 0,
	LV_TCP_OFF_SACK = 1u << 1,
	LV_TCP_OFF_WSCALE = 1u << 2,
};

/* lv_control.tc_flags */
enum lv_tc_flags {
	LV_TC_OWN_HOOK = 1u << 0, /* levee created the clsact qdisc: detach removes it once empty */
};

/*
 * SYN authentication's proxy mode: what the XDP program leaves in the metadata before
 * an ACK that returned a valid cookie (LV_R_PROXIED), for the tc program (handoff.h),
 * which checks that `cookie` is the ACK's and hands the connection to the listener.
 */
#define LV_HANDOFF_MAGIC 0x4c564831u /* "LVH1" */
struct lv_handoff {
	__u32 magic;
	__u32 cookie;
	__u16 l4;    /* the TCP header's offset from the IP header's start */
	__u8 family; /* enum lv_family */
	__u8 pad;
};

/* What the tc program did with the ACKs the XDP program handed it (lv_percpu.handoff). */
enum lv_handoff_result {
	LV_HO_HANDED = 0,      /* the listener has the connection (bpf_sk_assign_tcp_reqsk) */
	LV_HO_NO_LISTENER = 1, /* no listening socket for it: the stack answers with a RST */
	LV_HO_REFUSED = 2,     /* the kernel refused the request socket (see the kernel log) */
	LV_HO_NO_META = 3,     /* the driver kept no metadata: the ACK went on without it */
	LV_HO_MAX = 4,
};

enum lv_attach_mode {
	LV_MODE_AUTO = 0,
	LV_MODE_NATIVE = 1,
	LV_MODE_GENERIC = 2,
};

/*
 * ---- lists: per policy slot, a hash of host entries (a /32 or /128: most lists are
 * mostly hosts, and a hash lookup costs a fraction of a trie walk) and an LPM trie of
 * the rest, per family: lv_host{4,6}_{0,1}, lv_list{4,6}_{0,1}. A host entry is the
 * most specific an address can match, so when it exists it decides; otherwise the
 * trie does. Userspace sees one list per family (PolicyMap splits and merges).
 */

struct lv_lpm4 {
	__u32 prefixlen;
	__u32 addr; /* network byte order */
};

struct lv_lpm6 {
	__u32 prefixlen;
	__u32 addr[4];
};

struct lv_in6 {
	__u32 addr[4];
};

enum lv_list_kind {
	LV_LIST_NONE = 0, /* no entry: limited by its class */
	LV_LIST_ALLOW = 1,
	LV_LIST_DENY = 2,
	LV_LIST_OVERRIDE = 3,
};

enum lv_list_origin {
	LV_ORIGIN_CONFIG = 0, /* from the config file: replaced by a reload */
	LV_ORIGIN_CLI = 1,    /* levee allow|deny|override add: kept across reloads */
	LV_ORIGIN_IMPORT = 2, /* levee deny import: kept across reloads */
};

/*
 * The allow, deny and override lists are one trie per family: the most specific entry
 * for an address decides (for one prefix, allow beats deny beats override). A deny
 * entry may expire; once it has, the entry covering it decides. The controller stores
 * that entry's verdict in it (after_*), whenever the lists change; when the covering
 * entry expires too, later, the one covering both (then_*) decides. Deeper nestings of
 * expiring entries skip to the nearest entry that never expires.
 */
struct lv_list_value {
	__u8 kind;         /* enum lv_list_kind */
	__u8 origin;       /* enum lv_list_origin */
	__u16 override_id; /* LV_LIST_OVERRIDE: index into lv_policy.overrides */
	__u8 after_kind;   /* once this entry expired: the covering entry's kind */
	__u8 then_kind;    /* once that one expired too */
	__u16 after_override;
	__u64 expires_ns;       /* CLOCK_MONOTONIC ns this entry stops matching at; 0 = never */
	__u64 after_expires_ns; /* when the covering entry stops; 0 = never */
	__u16 then_override;
	__u8 pad[6];
};

/*
 * ---- CrowdSec decisions: lv_cs_host{4,6} (hashes of single addresses) and
 * lv_cs_net{4,6} (LPM tries of ranges), written only by the bouncer of `levee run`
 * (userspace/daemon/bouncer.*). A list of their own, apart from the operator's: not per
 * policy slot (a reload does not touch them), checked after the operator's allow and
 * deny lists, so an allow-listed network is never dropped by a fleet decision. Each
 * entry expires in the datapath (expires_ns against the program's clock), so a stale one
 * stops matching even when the daemon is gone.
 */
struct lv_cs_value {
	__u64 expires_ns; /* CLOCK_MONOTONIC ns this decision stops matching at */
	__u64 id;         /* the LAPI's decision id: a delete must name the one held */
};

/* lv_control.cs_present: a bit per CrowdSec map that may hold entries; 0 skips the
 * lookups. Set before the first entry is written, cleared after the last is gone. */
enum lv_cs_present {
	LV_CS_HOST4 = 1u << 0,
	LV_CS_NET4 = 1u << 1,
	LV_CS_HOST6 = 1u << 2,
	LV_CS_NET6 = 1u << 3,
};

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
#define LV_GUARD_PERIOD_NS LV_NSEC_PER_SEC /* the learning period */
#define LV_GUARD_FP 4                      /* baseline's fixed point: 1/16 arrival/s */
#define LV_GUARD_EWMA_SHIFT 6              /* each calm period moves the baseline 1/64 of
					    * the way to what it saw: about a minute */
#define LV_GUARD_NOTE_NS 1000000ULL        /* last_over_ns written at most once a ms */
#define LV_GUARD_GAP_NS 50000000ULL        /* abnormal arrivals further apart start a new run */
/* clang-format on */

/*
 * A network the autopilot watches (struct lv_auto), kept in lv_state under the key of
 * the network (LV_KEY_WATCH) in place of a struct lv_state of the same size.
 */
struct lv_watch {
	__u64 ready_ns;     /* the network's limit (lv_auto.watch), a GCRA */
	__u64 escalated_ns; /* when it was escalated; 0: only watched */
	__u64 last_over_ns; /* its last packet refused, or its escalation */
	__u64 dropped;      /* refused while escalated: lo32 packets, hi32 bytes (display) */
};

/*
 * ---- events: lv_events, a ring buffer the controller reads ----------------------------
 *
 * State changes worth a line in a log. A flood must not become an event flood: every
 * event passes one GCRA shared by all CPUs (lv_policy.events, default 100/s), and the
 * budget-exhausted and map-full events are sent at most once a second per class. An
 * event refused by the rate (or a full ring) is counted per CPU, and the next event that
 * CPU sends carries the count. Ban ends are not seen by the datapath (a banned source's
 * next packet after its ban simply conforms): the controller reports them from lv_bans.
 */
#define LV_EVENTS_BYTES (256 * 1024)
#define LV_EVENT_EVERY_NS LV_NSEC_PER_SEC

enum lv_event_type {
	LV_EV_LIMITED = 1,         /* a source's first drop since its state was created (reason) */
	LV_EV_BANNED = 2,          /* a ban started: value = its duration in ns, count = offences */
	LV_EV_ADMISSION = 3,       /* the class's new-source budget refused a source */
	LV_EV_MAP_FULL = 4,        /* no state could be created for a new source */
	LV_EV_BAN_ENDED = 5,       /* written by the controller: a ban ran out */
	LV_EV_ENGAGED = 6,         /* the class's autopilot engaged: value = its threshold, new
			      * sources per second; count = engagements so far (no address) */
	LV_EV_RELEASED = 7,        /* ...released: value = ns it was engaged (no address) */
	LV_EV_ESCALATED = 8,       /* a network was escalated: the address is the network's,
			      * value = its limit, packets per second */
	LV_EV_DEESCALATED = 9,     /* ...released: value = ns it was escalated */
	LV_EV_ANSWER_LIMITED = 10, /* SYN-ACKs towards a network went over its answer rate: the
				    * address is the network's (lv_answer's prefix), value = the
				    * rate a second; once per LV_ANSWER_SAY_NS per cell at most */
};

struct lv_event {
	__u64 time_ns; /* CLOCK_MONOTONIC (the per-CPU cached clock: within a tick) */
	__u32 addr[4]; /* the source as keyed (masked to its class prefix), IPv4-mapped */
	__u8 type;     /* enum lv_event_type */
	__u8 family;   /* enum lv_family */
	__u16 class_id;
	__u8 reason; /* enum lv_reason of the drop that caused it */
	__u8 pad[3];
	__u32 count;
	__u32 suppressed; /* events this CPU could not send since the last one it sent */
	__u64 value;
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

/*
 * ---- lv_seen: which sources may have state, in a bitmap that stays in cache --------
 *
 * Under a spoofed flood past the admission budget every packet is from an unknown
 * source, and the lookup that finds no state is a cache (and TLB) miss in the LRU's
 * bucket array (16 MB at 1M sources): most of the cost of refusing it. A bit per
 * hash of a source key, set whenever a source's state is created, says "certainly no
 * state" when clear, so such a packet is refused without the lookup. A set bit only
 * means "look it up". Bits are never cleared by the datapath: evicted sources leave
 * theirs set, and a filter that fills up only costs lookups again. Two halves, both
 * set on every creation: the controller may clear the inactive half, refill it from
 * the map and flip lv_control.seen_active to drop stale bits.
 *
 * Each word of sources with state sits beside the same word for sources on probation
 * (LV_KEY_PROBATION, struct lv_auto), in one cache line: an engaged class refuses a
 * source that is on probation, once their allowance is spent, on the same read.
 * A source's bit is the same in both words, and the same as the first of its three
 * bits in the known-good filter (lv_good), whose words are laid out as the known
 * words: a refill ORs lv_good's words into the known ones, so every known-good source
 * also reads as "may have state", and the refusal that reads only lv_seen never turns
 * away a known-good source.
 */
#define LV_SEEN_LOG2 23                          /* bits per half: 1 MB */
#define LV_SEEN_WORDS (1u << (LV_SEEN_LOG2 - 6)) /* u64 words per half */

struct lv_seen_pair {
	__u64 known;     /* sources with state */
	__u64 probation; /* sources on probation */
};

static inline __u64 lv_seen_hash64(const struct lv_key *k, __u32 seed)
{
	const __u32 *w = (const __u32 *)k;
	__u64 h = seed;

	/* Five words, multiplied through: cheap, and spread well enough for a filter an
	 * attacker who does not know the seed cannot aim at. */
	h = (h ^ w[0]) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ w[1]) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ w[2]) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ w[3]) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ w[4]) * 0x9E3779B97F4A7C15ULL;
	return h;
}

/* A source's bit in lv_seen: word (h >> 6), bit (h & 63). */
static inline __u32 lv_seen_hash(const struct lv_key *k, __u32 seed)
{
	return (__u32)(lv_seen_hash64(k, seed) >> (64 - LV_SEEN_LOG2));
}

/*
 * ---- lv_good: known-good sources, beyond the LRU ---------------------------------------
 *
 * Sources that behaved before an attack (the controller decides: docs/CONFIG.md,
 * known_good_after) are remembered in a blocked Bloom filter: three bits in one word,
 * the word and first bit those of lv_seen (lv_seen_hash()), the other two from lower
 * bits of the same hash. Marking sets both halves; the controller clears the inactive
 * half and flips lv_control.good_active every known_good_for, so a mark lasts between
 * one and two of those periods unless it is renewed. Pinned: it survives restarts.
 * False positives for random sources, with the summary below (measured by the unit
 * tests, filters_test.cpp): under 2e-4 at 100k marked sources, 1 % at some 600k,
 * 3.2 % at 1M, 14 % at 2M. levee run therefore ages the filter early once its fill
 * says 1 % (good_fill(), at most once a minute), and bounds the marks of one network
 * (lv_answer.marks_per_network), so one /48 cannot fill it.
 */
static inline __u64 lv_good_bits(__u64 h)
{
	return (1ULL << ((h >> (64 - LV_SEEN_LOG2)) & 63)) | (1ULL << ((h >> 32) & 63)) | (1ULL << ((h >> 26) & 63));
}

/*
 * Each half has a summary after both halves: a bit for every 2^LV_GOOD_SUM_SHIFT
 * positions of a source's first bit (its lv_seen position), set by every mark after
 * the source's bits, cleared only with its half and before its words. A clear bit
 * means no source there is marked, so a source is tested without reading its word, a
 * cold line in 1 MB, while the 64 KB summary stays in cache: most sources of a random
 * flood are settled there while the filter holds up to some 100k marks (a summary bit
 * is set for 2 % of sources at 10k, 18 % at 100k, 93 % at 1M). A mark racing the clear
 * of its half may be lost, as it may be in the words themselves.
 */
#define LV_GOOD_SUM_SHIFT 4
#define LV_GOOD_SUM_WORDS (1u << (LV_SEEN_LOG2 - LV_GOOD_SUM_SHIFT - 6)) /* u64 words of a half's summary */
#define LV_GOOD_ENTRIES (2 * LV_SEEN_WORDS + 2 * LV_GOOD_SUM_WORDS)      /* lv_good's words in all */

/* The entry of lv_good that holds, in half `half`, the bits of the sources whose first
 * bit is at lv_seen position `s` (lv_seen_hash()): lv_seen's word. */
static inline __u32 lv_good_entry(__u32 half, __u32 s)
{
	return (half & 1) * LV_SEEN_WORDS + (s >> 6) % LV_SEEN_WORDS;
}

/* The word of a half's summary for the sources whose first bit is at lv_seen position
 * `s`, its entry in lv_good for half `half`, and the bit there. */
static inline __u32 lv_good_sum_word(__u32 s)
{
	return (s >> (LV_GOOD_SUM_SHIFT + 6)) % LV_GOOD_SUM_WORDS;
}

static inline __u32 lv_good_sum_entry(__u32 half, __u32 s)
{
	return 2 * LV_SEEN_WORDS + (half & 1) * LV_GOOD_SUM_WORDS + lv_good_sum_word(s);
}

static inline __u64 lv_good_sum_bit(__u32 s)
{
	return 1ULL << ((s >> LV_GOOD_SUM_SHIFT) & 63);
}

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
#define LV_SCRATCH_REQ 0    /* words of the packet a global function is handed */
#define LV_SCRATCH_EVENT 16 /* words of an event being sent */
#define LV_SCRATCH_SYN 22   /* words of SYN authentication's cookie input or socket tuple */
#define LV_SCRATCH_OPTS 36  /* words of a SYN's TCP options (struct lv_tcp_opts) */
#define LV_SCRATCH_WHERE 48 /* words of a SYN's route lookup or socket tuple (syn_where.h) */
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
 * What the destination of a SYN is to this host (synauth.h, lv_syn_where()): this CPU's
 * last answer, good for a few milliseconds, so that a flood of SYNs to one port asks
 * the routing table and the socket table once a while, not once a SYN.
 */
struct lv_syn_where {
	__u32 daddr[4]; /* as lv_packet holds addresses */
	__u16 dport;    /* host order */
	__u8 family;
	__u8 verdict; /* synauth.h's enum lv_where */
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
	struct lv_scratch scratch;
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
LV_STATIC_ASSERT(sizeof(struct lv_class) == 344 + 112, "lv_class layout");
LV_STATIC_ASSERT(sizeof(struct lv_auto) == 112, "lv_auto layout");
LV_STATIC_ASSERT(sizeof(struct lv_watch) == sizeof(struct lv_state), "lv_watch layout");
LV_STATIC_ASSERT(sizeof(struct lv_seen_pair) == 16, "lv_seen_pair layout");
LV_STATIC_ASSERT(sizeof(struct lv_shared) == 192, "lv_shared layout");
LV_STATIC_ASSERT(sizeof(struct lv_ban) == 48, "lv_ban layout");
LV_STATIC_ASSERT(sizeof(struct lv_event) == 48, "lv_event layout");
LV_STATIC_ASSERT(sizeof(struct lv_override) == 112, "lv_override layout");
LV_STATIC_ASSERT(sizeof(struct lv_class_table) == 6 * 65536 + 8 + LV_MAX_CLASSES, "lv_class_table layout");
LV_STATIC_ASSERT(sizeof(struct lv_list_value) == 32, "lv_list_value layout");
LV_STATIC_ASSERT(sizeof(struct lv_cs_value) == 16, "lv_cs_value layout");
LV_STATIC_ASSERT(sizeof(struct lv_hot) == 64, "lv_hot layout");
LV_STATIC_ASSERT(sizeof(struct lv_syn_where) == 32, "lv_syn_where layout");
LV_STATIC_ASSERT(sizeof(struct lv_local_key) == 20, "lv_local_key layout");
LV_STATIC_ASSERT(sizeof(struct lv_percpu) == 160 + 8 * LV_HO_MAX + 32 * LV_REASON_MAX + 80 * LV_MAX_CLASSES + 448,
		 "lv_percpu layout");
#endif

#endif /* LEVEE_ABI_H */
