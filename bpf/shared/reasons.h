/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * reasons.h - why a packet got its verdict: every packet ends in exactly one reason,
 * counted per CPU; the verdict and what monitor mode counts follow from it.
 */
#ifndef LEVEE_REASONS_H
#define LEVEE_REASONS_H

#include <linux/types.h>

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

#endif /* LEVEE_REASONS_H */
