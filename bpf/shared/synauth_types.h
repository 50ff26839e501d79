/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * synauth_types.h - what SYN authentication shares with the controller: the answer
 * rate, the host's own addresses (lv_local), the TCP options a listener turned off, and
 * the hand-off of a proven connection to the tc program.
 */
#ifndef LEVEE_SYNAUTH_TYPES_H
#define LEVEE_SYNAUTH_TYPES_H

#include "common_types.h"

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

/* One cell of lv_answers: the GCRA ready time of the networks hashed to it, and when it
 * last said it refused an answer (LV_EV_ANSWER_LIMITED), claimed with a CAS. */
struct lv_answer_cell {
	__u64 ready;
	__u64 said_ns;
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

#ifndef __bpf__
LV_STATIC_ASSERT(sizeof(struct lv_local_key) == 20, "lv_local_key layout");
#endif

#endif /* LEVEE_SYNAUTH_TYPES_H */
