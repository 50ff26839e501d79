/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * syn_frame.h - what every step of SYN authentication (synauth.h) shares: its light
 * context (the staged packet, the policy and this CPU's entry), the codes its global
 * functions hand the gate, and where the packet's IP and TCP headers are.
 */
#ifndef LEVEE_SYN_FRAME_H
#define LEVEE_SYN_FRAME_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "levee_abi.h"
#include "tunables.h"
#include "context.h"
#include "maps.h"
#include "parse.h"
#include "stage.h"
#include "synack.h"
#include "syncookie.h"
#include "tcp_options.h"

/* The kernel's TCP socket, for the one field levee reads (CO-RE: its offset is the
 * running kernel's). */
struct tcp_sock___lv {
	__u64 bytes_acked;
} __attribute__((preserve_access_index));

/* The connection a TCP header of the staged packet belongs to, as the client sent it. */
static __always_inline void lv_cookie_in_of(struct lv_cookie_in *in, const struct lv_packet *pkt, const void *l3,
					    const struct tcphdr *th)
{
	__builtin_memcpy(in->saddr, pkt->addr, sizeof(in->saddr));
	if (pkt->family == LV_AF_INET) {
		in->daddr[0] = 0;
		in->daddr[1] = 0;
		in->daddr[2] = bpf_htonl(0xffff);
		in->daddr[3] = ((const struct iphdr *)l3)->daddr;
	} else {
		__builtin_memcpy(in->daddr, &((const struct ipv6hdr *)l3)->daddr, sizeof(in->daddr));
	}
	in->sport = bpf_ntohs(th->source);
	in->dport = bpf_ntohs(th->dest);
	in->family = pkt->family;
	in->isn = 0; /* proxy mode sets the ISN and the options */
	in->opts = 0;
}

/* ---- the SYN path's light context ---------------------------------------------------- */

/* What a global function of the SYN path that raises no event and marks nothing needs of
 * the staged packet: no struct lv_ctx (its stack, its lookups). */
struct lv_syn_ctx {
	struct lv_percpu *pc;
	const struct lv_control *ctl;
	const struct lv_req *q;
	const struct lv_policy *pol;
	const struct lv_class *cls;
};

static __always_inline int lv_syn_open(struct lv_syn_ctx *s)
{
	__u32 zero = 0;

	s->pc = bpf_map_lookup_elem(&lv_percpu, &zero);
	s->ctl = bpf_map_lookup_elem(&lv_policy, &zero);
	if (!s->pc || !s->ctl) /* cannot happen: one-entry arrays */
		return -1;
	s->q = (const struct lv_req *)&s->pc->scratch.words[LV_SCRATCH_REQ];
	s->pol = &s->ctl->slot[s->q->slot & 1];
	s->cls = &s->pol->classes[s->q->class_id & (LV_MAX_CLASSES - 1)];
	return 0;
}

/* What the SYN path's global functions tell the gate to call next (each a frame of its
 * own: the stack a chain of calls shares would not hold them all). */
#define LV_SYN_ANSWER_PROXY LV_REASON_MAX       /* lv_syn_proxy() answers the SYN */
#define LV_SYN_ANSWER_RESET (LV_REASON_MAX + 1) /* lv_syn_reset() answers it */
#define LV_SYN_CHECK_ACK (LV_REASON_MAX + 2)    /* lv_syn_ack() checks the ACK's cookie */
#define LV_SYN_OTHER (LV_REASON_MAX + 3)        /* lv_syn_other() judges the packet */
#define LV_SYN_SAY (LV_REASON_MAX + 4)          /* lv_syn_say() names the network it refused */

/* Does proxy mode apply to a class (it may still answer in reset mode where the
 * destination needs it)? */
static __always_inline int lv_syn_may_proxy(const struct lv_control *ctl, const struct lv_class *cls)
{
	return ctl->handoff && !(cls->flags & LV_CLASS_SYN_RESET);
}

/* ---- the packet's headers ----------------------------------------------------------- */

/* This CPU's scratch words for the cookie's input and the SYN-ACK's header, and where
 * the packet's headers are: off the stack, which a chain of calls shares. */
struct lv_syn_work {
	struct lv_cookie_in in;
	struct lv_synack sa;
	__u32 l3, l4; /* the packet's IP and TCP headers' offsets in the frame */
	__u8 where;   /* a SYN's destination (enum lv_where) */
};
static __always_inline struct lv_syn_work *lv_syn_scratch(struct lv_percpu *pc)
{
	return (struct lv_syn_work *)&pc->scratch.words[LV_SCRATCH_SYN];
}
static __always_inline void *lv_where_scratch(struct lv_percpu *pc)
{
	return &pc->scratch.words[LV_SCRATCH_WHERE];
}
_Static_assert(LV_SCRATCH_EVENT * 8 + sizeof(struct lv_event) <= LV_SCRATCH_SYN * 8, "events stay below");
_Static_assert(sizeof(struct lv_syn_work) <= (LV_SCRATCH_OPTS - LV_SCRATCH_SYN) * 8, "lv_scratch holds it");
_Static_assert(LV_SCRATCH_OPTS * 8 + sizeof(struct lv_tcp_opts) <= LV_SCRATCH_WHERE * 8, "options stay below");
_Static_assert(sizeof(struct bpf_fib_lookup) <= sizeof(struct lv_scratch) - LV_SCRATCH_WHERE * 8, "a route lookup");
_Static_assert(sizeof(struct bpf_sock_tuple) <= sizeof(struct lv_scratch) - LV_SCRATCH_WHERE * 8, "a tuple");

/*
 * Where the staged TCP packet's IP and TCP headers are, exactly: the Ethernet header
 * walked again for the first (its tags), the parser's word for the second
 * (lv_packet.l4_tail; the frame's length has not changed since). 0; LV_R_EXT_DEPTH for
 * a TCP header deeper than levee reads (LV_SYN_L4_MAX: never masked into range, or
 * the bytes read would be another header's); LV_R_UNVERIFIED if the frame does not
 * start as the parser found it (cannot happen).
 */
static __always_inline __u32 lv_tcp_at(struct xdp_md *ctx, const struct lv_packet *pkt, __u32 *l3, __u32 *l4)
{
	void *data = (void *)(long)ctx->data;
	struct lv_cursor cur = { .pos = data, .end = (void *)(long)ctx->data_end };
	int proto = lv_parse_eth(&cur);

	if (proto != bpf_htons(pkt->family == LV_AF_INET ? ETH_P_IP : ETH_P_IPV6))
		return LV_R_UNVERIFIED;
	*l3 = cur.pos - data;
	*l4 = (__u32)(cur.end - data) - pkt->l4_tail;
	if (*l3 > LV_SYN_L3_MAX || *l4 > LV_SYN_L4_MAX || *l4 < *l3)
		return LV_R_EXT_DEPTH;
	return 0;
}

/* The IP and TCP headers at `l3` and `l4` (lv_tcp_at()), checked to lie in the frame:
 * 0, or -1. */
static __always_inline int lv_syn_headers(struct xdp_md *ctx, __u32 l3, __u32 l4, void **ip, struct tcphdr **th)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	if (l3 > LV_SYN_L3_MAX || l4 > LV_SYN_L4_MAX)
		return -1;
	*ip = data + lv_within(l3, LV_SYN_L3_MAX);
	*th = data + lv_within(l4, LV_SYN_L4_MAX);
	return *ip + sizeof(struct ipv6hdr) > end || (void *)(*th + 1) > end ? -1 : 0;
}

/* The staged packet's headers, found and checked, their offsets kept in the scratch:
 * 0 or a reason. */
static __always_inline __u32 lv_syn_find(struct xdp_md *ctx, const struct lv_packet *pkt, struct lv_syn_work *w,
					 void **ip, struct tcphdr **th)
{
	__u32 l3, l4, r = lv_tcp_at(ctx, pkt, &l3, &l4);

	if (r)
		return r;
	if (lv_syn_headers(ctx, l3, l4, ip, th))
		return LV_R_UNVERIFIED;
	w->l3 = l3;
	w->l4 = l4;
	return 0;
}

/* The bytes of the TCP segment at `l4`: from its header to the IP datagram's end (the
 * IP header at `ip`, `l3`; not the frame's: Ethernet pads short frames). */
static __always_inline __u32 lv_tcp_len(const void *ip, __u8 family, __u32 l3, __u32 l4)
{
	__u32 end = family == LV_AF_INET
			    ? bpf_ntohs(((const struct iphdr *)ip)->tot_len)
			    : sizeof(struct ipv6hdr) + bpf_ntohs(((const struct ipv6hdr *)ip)->payload_len);

	return l3 + end - l4;
}

#endif /* LEVEE_SYN_FRAME_H */
