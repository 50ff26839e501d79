/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * synauth.h - SYN authentication (LV_CLASS_SYN_AUTH): a TCP source proves its address
 * before it gets state. The gate (lv_syn_gate(), called by limit.h before any budget)
 * and the decisions; the answer's bytes are synack.h's, what a destination is
 * syn_where.h's, what is remembered between packets syn_cells.h's.
 *
 * A SYN of a source that has not proved it (not known-good) is answered here, with a
 * SYN-ACK that carries a cookie (syncookie.h), sent back out of the interface (XDP_TX);
 * nothing is kept. A spoofed source never sees the SYN-ACK, so it never returns the
 * cookie. Only a SYN a stack would answer is answered (syn_where.h): proper (no RST or
 * FIN with it, a data offset that fits, a good checksum), from and to unicast
 * addresses and MACs, to this host's own address with a listener on the port, or to a
 * host behind it. How a real client returns the cookie, two modes:
 *
 * - Proxy (where levee's tc program is on the interface, lv_control.handoff, and the
 *   listener is here and takes a hand-off). The SYN-ACK is a proper one: its sequence
 *   number is the cookie, and it offers the options the SYN asked for and the
 *   listener's namespace allows (tcp_options.h, lv_control.tcp_off), which the cookie's
 *   low byte keeps. The client's ACK returns the cookie (its acknowledgment number less
 *   one) and, with timestamps, echoes levee's TSval; it passes (LV_R_PROXIED) with the
 *   cookie in the frame's metadata, and the tc program (handoff.h) hands it to the
 *   listener as the request socket the kernel would have made: the first connection
 *   completes at once. Every ACK that returns a good cookie is handed over, also one
 *   that comes after its source was marked known-good (a client that opened several
 *   connections at once: syn_cells.h's fresh marks).
 * - Reset (LV_CLASS_SYN_RESET, no tc program, a listener that takes no hand-off, or a
 *   host behind this one). The SYN-ACK's acknowledgment number is the cookie. A real
 *   client's stack finds it wrong and answers with a RST whose sequence number is the
 *   cookie (RFC 9293, SYN-SENT), and retransmits its SYN a second later. The RST goes
 *   no further (LV_R_VERIFIED) and leaves a pass for that one connection
 *   (syn_cells.h): the retransmitted SYN goes to the listener (LV_R_RETRIED), which
 *   answers it itself. A RST proves no more than that: every host answers a SYN-ACK it
 *   did not ask for with one, so a SYN spoofed from a real host makes that host's own
 *   stack return the cookie.
 *
 * What makes a source known-good (good.h), so that its TCP goes straight on: a proxied
 * handshake whose ACK echoed levee's timestamp, or a connection the host has that
 * carried the host's data to the client and back (bytes_acked): the connection's own
 * sequence numbers proved it. Marks per network are bounded (syn_cells.h). A
 * connection proxied without timestamps marks nothing: its ACK was a 2^-23 guess.
 *
 * Anything else of a source that is not known-good goes on only if it belongs to a
 * connection the host has (an established one: on to the limits; one the host is
 * opening: passed, LV_R_OPENING, for the stack to check); else it is nothing the host
 * asked for: dropped (LV_R_UNVERIFIED). State is no proof, so this is asked of every
 * such packet until the connection proves its source. An ACK or RST flood from spoofed
 * sources is so dropped after one cookie check and one socket lookup.
 *
 * What levee answers is limited (struct lv_answer), per destination network and in all,
 * so that a flood spoofing one victim's addresses does not make levee its hose.
 *
 * Known limits: in reset mode, the first connection of a new client waits for its
 * SYN's retransmission, and a client whose stack does not answer a wrong SYN-ACK with a
 * RST never gets in; a SYN spoofed from a real host, and that host's RST, let one more
 * spoofed SYN of that connection through to the listener (which answers the real
 * host). In proxy mode, an ACK the stack drops after levee verified it is not handed
 * again. A SYN that carries data (TCP Fast Open) is answered without its checksum
 * checked, and its data is not kept: the client sends it again.
 */
#ifndef LEVEE_SYNAUTH_H
#define LEVEE_SYNAUTH_H

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
#include "cas.h"
#include "context.h"
#include "events.h"
#include "good.h"
#include "maps.h"
#include "parse.h"
#include "seen.h"
#include "stage.h"
#include "syn_cells.h"
#include "syn_where.h"
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

/* ---- what levee may answer ---------------------------------------------------------- */

/* The hash of a source's network under the answer prefix (struct lv_answer): its answer
 * cell's, and its mark count's (syn_cells.h). */
static __always_inline __u64 lv_answer_net_hash(const struct lv_policy *pol, const struct lv_packet *pkt, __u32 seed)
{
	const struct lv_answer *a = &pol->answer;
	const __u32 *addr = pkt->addr;
	__u64 h;

	if (pkt->family == LV_AF_INET)
		h = (__u64)(addr[3] & a->mask4) * 0x9E3779B97F4A7C15ULL;
	else
		h = (((__u64)(addr[0] & a->mask6[0]) << 32 | (addr[1] & a->mask6[1])) * 0x9E3779B97F4A7C15ULL) ^
		    (((__u64)(addr[2] & a->mask6[2]) << 32 | (addr[3] & a->mask6[3])) * 0xC2B2AE3D27D4EB4FULL);
	return h ^ seed;
}

/* The answer cell of the staged packet's network (NULL: none; cannot happen). */
static __always_inline struct lv_answer_cell *lv_answer_cell_of(const struct lv_policy *pol,
								const struct lv_packet *pkt, __u32 seed)
{
	__u32 i = (__u32)(lv_answer_net_hash(pol, pkt, seed) >> (64 - LV_ANSWER_LOG2));

	return bpf_map_lookup_elem(&lv_answers, &i);
}

/* What the answer rates say of a SYN, read only (before it is judged: a flood over its
 * network's rate is refused at the cost of one read). */
enum lv_answer_says {
	LV_ANSWER_WITHIN = 0,
	LV_ANSWER_OVER = 1, /* over a rate: refused (LV_R_ANSWER_LIMIT) */
	LV_ANSWER_SAY = 2,  /* ...and its cell has not said so lately (lv_syn_say()) */
};

static __always_inline int lv_answer_over(const struct lv_syn_ctx *s)
{
	const struct lv_answer *a = &s->pol->answer;
	struct lv_answer_cell *cell;
	__u64 said, now = s->q->now;

	if (a->cap_per_cpu.cost && !lv_gcra_conforms(s->pc->answer_ready, now))
		return LV_ANSWER_OVER;
	if (!a->per_network.cost)
		return LV_ANSWER_WITHIN;
	cell = lv_answer_cell_of(s->pol, &s->q->pkt, s->ctl->seen_seed);
	if (!cell || lv_gcra_conforms(LV_READ_ONCE(cell->ready), now))
		return cell ? LV_ANSWER_WITHIN : LV_ANSWER_OVER;
	said = LV_READ_ONCE(cell->said_ns);
	return said && (__s64)(now - said) < (__s64)LV_ANSWER_SAY_NS ? LV_ANSWER_OVER : LV_ANSWER_SAY;
}

/*
 * Is a SYN-ACK towards this source's network, and from this CPU, within what levee may
 * send (struct lv_answer)? Charges both when it is.
 */
static __always_inline int lv_answer_take(const struct lv_syn_ctx *s)
{
	const struct lv_answer *a = &s->pol->answer;
	struct lv_answer_cell *cell;
	__u64 now = s->q->now;

	if (a->cap_per_cpu.cost && !lv_gcra_conforms(s->pc->answer_ready, now))
		return 0;
	if (a->per_network.cost) {
		cell = lv_answer_cell_of(s->pol, &s->q->pkt, s->ctl->seen_seed);
		if (!cell || lv_gcra_take(&cell->ready, LV_READ_ONCE(cell->ready), now, a->per_network.cost,
					  a->per_network.tau_ns, 1))
			return 0;
	}
	if (a->cap_per_cpu.cost)
		s->pc->answer_ready =
			lv_gcra_after(s->pc->answer_ready, now, a->cap_per_cpu.cost, a->cap_per_cpu.tau_ns);
	return 1;
}

/* A network's answers were refused: an event naming it, once per LV_ANSWER_SAY_NS per
 * cell (the CPU that wins the CAS sends it), so a flood raises a handful, not one a
 * SYN. A global function (an event needs the packet's whole context): LV_R_ANSWER_LIMIT. */
__attribute__((noinline)) __u32 lv_syn_say(struct xdp_md *ctx)
{
	const struct lv_answer *a;
	struct lv_answer_cell *cell;
	struct lv_ctx c = {};
	struct lv_key net;
	__u64 said;

	if (!ctx || !lv_unstage(&c))
		return LV_R_ANSWER_LIMIT;
	a = &c.pol->answer;
	cell = lv_answer_cell_of(c.pol, c.pkt, c.ctl->seen_seed);
	if (!cell)
		return LV_R_ANSWER_LIMIT;
	said = LV_READ_ONCE(cell->said_ns);
	if (said && (__s64)(c.now - said) < (__s64)LV_ANSWER_SAY_NS)
		return LV_R_ANSWER_LIMIT;
	if (__sync_val_compare_and_swap(&cell->said_ns, said, c.now) != said)
		return LV_R_ANSWER_LIMIT;
	lv_key_mask(&net, c.pkt->addr, c.pkt->family, a->mask4, a->mask6, 0, 0, 0);
	lv_event_of(&c, net.addr, LV_EV_ANSWER_LIMITED, LV_R_ANSWER_LIMIT, 0, a->per_network.rate);
	return LV_R_ANSWER_LIMIT;
}

/* ---- what is remembered (syn_cells.h) ----------------------------------------------- */

static __always_inline __u64 *lv_syn_cell_at(__u32 i)
{
	return bpf_map_lookup_elem(&lv_syn, &i);
}

/* The hash of the staged packet's connection (its cookie input), for its retry pass. */
static __always_inline __u64 lv_conn_hash(const struct lv_cookie_in *in, __u32 seed)
{
	__u64 h = seed;
	int i;

#pragma unroll
	for (i = 0; i < 4; i++)
		h = (h ^ ((__u64)in->saddr[i] << 32 | in->daddr[i])) * 0x9E3779B97F4A7C15ULL;
	return (h ^ ((__u64)in->sport << 16 | in->dport)) * 0xC2B2AE3D27D4EB4FULL;
}

/* Reset mode: a RST returned the cookie of the connection `in`: its retried SYN may
 * pass. (Two connections on one cell: the later one's pass stands.) */
static __always_inline void lv_retry_give(const struct lv_control *ctl, __u64 now, const struct lv_cookie_in *in)
{
	__u64 h = lv_conn_hash(in, ctl->seen_seed);
	__u64 *cell = lv_syn_cell_at(lv_syn_cell(h, LV_SYN_RETRY_AT, LV_SYN_RETRY_LOG2));

	if (cell)
		LV_WRITE_ONCE(*cell, lv_syn_tag(h) | lv_syn_tick(now));
}

/* ...and the SYN of connection `in` takes its pass, if it has one: once. */
static __always_inline int lv_retry_take(const struct lv_control *ctl, __u64 now, const struct lv_cookie_in *in)
{
	__u64 h = lv_conn_hash(in, ctl->seen_seed);
	__u64 *cell = lv_syn_cell_at(lv_syn_cell(h, LV_SYN_RETRY_AT, LV_SYN_RETRY_LOG2));
	__u64 v;

	if (!cell)
		return 0;
	v = LV_READ_ONCE(*cell);
	if (!lv_syn_stamped(v, lv_syn_tag(h), lv_syn_tick(now), LV_SYN_RETRY_TICKS))
		return 0;
	return __sync_val_compare_and_swap(cell, v, 0) == v;
}

/* The fresh mark of a known-good source whose hash (lv_seen_hash64()) is `h`: marked
 * within a cookie's lifetime? */
static __always_inline int lv_fresh(const struct lv_ctx *c, __u64 h)
{
	__u64 *cell = lv_syn_cell_at(lv_syn_cell(h, LV_SYN_FRESH_AT, LV_SYN_FRESH_LOG2));

	return cell && lv_syn_stamped(LV_READ_ONCE(*cell), lv_syn_tag(h), lv_syn_tick(c->now), LV_SYN_FRESH_TICKS);
}

/*
 * Mark the packet's source known-good for a proof the datapath saw, within its
 * network's marks (syn_cells.h), and stamp the mark fresh. Returns whether it marked.
 */
static __always_inline int lv_syn_mark(struct lv_ctx *c)
{
	__u64 h = lv_answer_net_hash(c->pol, c->pkt, c->ctl->seen_seed), *cell, v, next;
	__u32 epoch = LV_READ_ONCE(c->ctl->good_epoch);

	cell = lv_syn_cell_at(lv_syn_cell(h, 0, LV_SYN_MARK_LOG2));
	if (!cell)
		return 0;
	v = LV_READ_ONCE(*cell);
	LV_CAS_LOOP
	for (int i = 0; i < LV_CAS_TRIES; i++) {
		__u64 seen;

		next = lv_syn_mark_take(v, epoch, c->pol->answer.marks_per_network);
		if (!next) {
			c->pc->marks_capped++;
			return 0;
		}
		seen = __sync_val_compare_and_swap(cell, v, next);
		if (seen == v)
			break;
		v = seen;
	}
	/* Fresh before known-good: a packet of the source on another CPU that finds it
	 * known-good must find the mark fresh too, or an ACK of a handshake answered before
	 * the mark would go on without its hand-off (and the listener reset it). */
	h = lv_seen_hash64(&c->key, c->ctl->seen_seed);
	cell = lv_syn_cell_at(lv_syn_cell(h, LV_SYN_FRESH_AT, LV_SYN_FRESH_LOG2));
	if (cell)
		LV_WRITE_ONCE(*cell, lv_syn_tag(h) | lv_syn_tick(c->now));
	lv_good_mark(c);
	return 1;
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

/* ---- a SYN ---------------------------------------------------------------------------- */

/* The SYN's options (its data offset `doff` bytes at `l4`) into this CPU's scratch: its
 * checksum sums them, and proxy mode walks them. 0, or -1 if the frame does not hold
 * them (cannot happen: the data offset was checked against the segment). */
static __always_inline int lv_syn_opts_load(struct xdp_md *ctx, struct lv_tcp_opts *o, __u32 l4, __u32 doff)
{
	__u32 olen = doff - sizeof(struct tcphdr);

	barrier_var(olen);
	if (olen > LV_TCP_OPT_BYTES || (olen && bpf_xdp_load_bytes(ctx, l4 + sizeof(struct tcphdr), o->buf, olen))) {
		lv_tcp_opts_start(o, 0);
		return -1;
	}
	lv_tcp_opts_start(o, olen);
	return 0;
}

/*
 * Is the SYN's checksum right, over its pseudo-header, its TCP header and its options
 * (`o`, loaded)? Also the checksum a host's own stack leaves to a device it hands the
 * frame to (CHECKSUM_PARTIAL: the pseudo-header's sum alone), which a veth passes on
 * as is: an XDP program cannot tell that frame from a forged one, and neither is worse
 * than a SYN with a right sum. A SYN that carries data is not checked (synauth.h's
 * known limits).
 */
static __always_inline int lv_syn_csum_ok(const void *ip, __u8 family, const struct tcphdr *th,
					  const struct lv_tcp_opts *o, __u32 tcp_len)
{
	const __u32 *w = (const __u32 *)th;
	__u32 olen = o->len, i;
	__u64 pseudo, sum = 0;
	__s64 opt_sum;

	if (tcp_len != th->doff * 4)
		return 1;
	if (family == LV_AF_INET)
		pseudo = lv_csum32(((const struct iphdr *)ip)->saddr) + lv_csum32(((const struct iphdr *)ip)->daddr);
	else
		pseudo = lv_csum128(((const struct ipv6hdr *)ip)->saddr.in6_u.u6_addr32) +
			 lv_csum128(((const struct ipv6hdr *)ip)->daddr.in6_u.u6_addr32);
	pseudo += bpf_htons(IPPROTO_TCP) + bpf_htons(tcp_len);
	if ((__u16)~lv_csum_fold(pseudo) == th->check)
		return 1; /* left to the device */
#pragma unroll
	for (i = 0; i < sizeof(*th) / 4; i++)
		sum += lv_csum32(w[i]);
	barrier_var(olen);
	if (olen > LV_TCP_OPT_BYTES)
		return 0;
	if (olen) {
		opt_sum = bpf_csum_diff(NULL, 0, (__be32 *)o->buf, olen, 0);
		if (opt_sum < 0)
			return 0;
		sum += (__u32)opt_sum;
	}
	return lv_csum_fold(pseudo + sum) == 0;
}

/*
 * The SYN levee would answer, judged: 0 if it is proper (the flags, the data offset and
 * the checksum a stack takes), from and to addresses a stack answers, and its
 * destination is one to answer (`*where`, syn_where.h); else the reason it is not.
 */
static __always_inline __u32 lv_syn_judge(struct xdp_md *ctx, const struct lv_syn_ctx *s, const void *ip,
					  const struct tcphdr *th, __u32 l3, __u32 l4, __u8 *where)
{
	const struct lv_packet *pkt = &s->q->pkt;
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 tcp_len = lv_tcp_len(ip, pkt->family, l3, l4);
	struct lv_tcp_opts *o;

	if (th->rst || th->fin || th->doff < 5 || th->doff * 4 > tcp_len)
		return LV_R_MALFORMED;
	if ((void *)(eth + 1) > end || !lv_unicast_macs(eth))
		return LV_R_MARTIAN;
	if (pkt->family == LV_AF_INET) {
		if (!lv_unicast4(((const struct iphdr *)ip)->saddr) || !lv_unicast4(((const struct iphdr *)ip)->daddr))
			return LV_R_MARTIAN;
	} else if (!lv_unicast6(((const struct ipv6hdr *)ip)->saddr.in6_u.u6_addr32) ||
		   !lv_unicast6(((const struct ipv6hdr *)ip)->daddr.in6_u.u6_addr32)) {
		return LV_R_MARTIAN;
	}
	*where = lv_syn_where(ctx, s->pc, s->ctl, lv_where_scratch(s->pc), s->q->now, pkt->family, ip, th->dest);
	if (*where == LV_WHERE_NOT_OURS)
		return LV_R_MARTIAN;
	if (*where == LV_WHERE_CLOSED)
		return LV_R_NO_LISTENER;
	o = lv_opts_scratch(s->pc);
	if (lv_syn_opts_load(ctx, o, l4, th->doff * 4) || !lv_syn_csum_ok(ip, pkt->family, th, o, tcp_len))
		return LV_R_MALFORMED;
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

/*
 * The staged SYN of a source that is not known-good: refused over the answer rates
 * (LV_R_ANSWER_LIMIT, or LV_SYN_SAY), judged (lv_syn_judge()), then answered by proxy
 * where the listener is here and takes a hand-off (LV_SYN_ANSWER_PROXY), else by reset
 * (LV_SYN_ANSWER_RESET), or passed on its retry pass (LV_R_RETRIED); its headers and its
 * cookie's input are then in the scratch for the answer. Monitor mode answers nothing:
 * it passes the SYN and counts what it would do (LV_R_CHALLENGED). A global function,
 * verified once; its one pointer is the packet's context.
 */
__attribute__((noinline)) __u32 lv_syn_check(struct xdp_md *ctx)
{
	struct lv_syn_work *w;
	struct lv_syn_ctx s;
	struct tcphdr *th;
	__u32 r;
	int over;
	void *ip;

	if (!ctx || lv_syn_open(&s))
		return LV_R_UNVERIFIED;
	w = lv_syn_scratch(s.pc);
	r = lv_syn_find(ctx, &s.q->pkt, w, &ip, &th);
	if (r)
		return r;
	over = lv_answer_over(&s);
	if (over)
		return over == LV_ANSWER_SAY ? LV_SYN_SAY : LV_R_ANSWER_LIMIT;
	r = lv_syn_judge(ctx, &s, ip, th, w->l3, w->l4, &w->where);
	if (r)
		return r;
	if (s.cls->flags & LV_CLASS_MONITOR)
		return LV_R_CHALLENGED;
	lv_cookie_in_of(&w->in, &s.q->pkt, ip, th);
	if (w->where == LV_WHERE_LISTENER && lv_syn_may_proxy(s.ctl, s.cls))
		return lv_answer_take(&s) ? LV_SYN_ANSWER_PROXY : LV_R_ANSWER_LIMIT;
	if (lv_retry_take(s.ctl, s.q->now, &w->in))
		return LV_R_RETRIED;
	return lv_answer_take(&s) ? LV_SYN_ANSWER_RESET : LV_R_ANSWER_LIMIT;
}

/*
 * The staged TCP packet, not a SYN, of a source that is not known-good: an ACK may
 * return a proxy cookie (LV_SYN_CHECK_ACK); a RST that returns a reset cookie leaves a
 * retry pass for its connection (LV_R_VERIFIED); anything else is LV_SYN_OTHER.
 */
__attribute__((noinline)) __u32 lv_syn_reply(struct xdp_md *ctx)
{
	struct lv_cookie_in *in;
	struct lv_syn_work *w;
	struct lv_syn_ctx s;
	struct tcphdr *th;
	__u32 r;
	void *ip;

	if (!ctx || lv_syn_open(&s))
		return LV_R_UNVERIFIED;
	w = lv_syn_scratch(s.pc);
	in = &w->in;
	r = lv_syn_find(ctx, &s.q->pkt, w, &ip, &th);
	if (r)
		return r;
	if (th->ack && !th->rst && !th->syn)
		return lv_syn_may_proxy(s.ctl, s.cls) ? LV_SYN_CHECK_ACK : LV_SYN_OTHER;
	if (!(th->rst && !th->ack && !th->syn))
		return LV_SYN_OTHER;
	lv_cookie_in_of(in, &s.q->pkt, ip, th);
	if (!lv_cookie_check(in, bpf_ntohl(th->seq), s.q->now, s.ctl->cookie_key, &s.pc->cookie_memo))
		return LV_SYN_OTHER;
	lv_retry_give(s.ctl, s.q->now, in);
	return LV_R_VERIFIED;
}

/* Reset mode's SYN-ACK for the SYN lv_syn_check() staged: its acknowledgment number is
 * the cookie, which the client's RST returns; its sequence number is anything.
 * LV_R_CHALLENGED, or LV_R_UNVERIFIED if the frame could not hold it. */
__attribute__((noinline)) __u32 lv_syn_reset(struct xdp_md *ctx)
{
	struct lv_syn_work *w;
	struct lv_syn_ctx s;

	if (!ctx || lv_syn_open(&s))
		return LV_R_UNVERIFIED;
	w = lv_syn_scratch(s.pc);
	w->sa.ack = lv_cookie_make(&w->in, s.q->now, s.ctl->cookie_key, &s.pc->cookie_memo);
	w->sa.seq = ~w->sa.ack;
	w->sa.nopt = 0;
	if (lv_synack_write(ctx, s.q->pkt.family, w->l3, w->l4, &w->sa))
		return LV_R_UNVERIFIED;
	return LV_R_CHALLENGED;
}

/*
 * Proxy mode's SYN-ACK for the SYN lv_syn_check() staged: the cookie binds the client's
 * ISN and the options it asked for that the listener's namespace allows, which the
 * SYN-ACK offers back. levee's own MSS is left out only when the client sent none and
 * the frame has no room for it (the frame never grows; a SYN-ACK without it means 536).
 * LV_R_CHALLENGED, or LV_R_UNVERIFIED if the frame could not hold it.
 */
__attribute__((noinline)) __u32 lv_syn_proxy(struct xdp_md *ctx)
{
	void *data, *end;
	struct lv_syn_work *w;
	struct lv_tcp_opts *o;
	struct lv_syn_ctx s;
	struct tcphdr *th;
	__u32 frame, need, tsval;
	__u64 wide, now;
	__u16 mss;
	__u8 family;

	if (!ctx || lv_syn_open(&s))
		return LV_R_UNVERIFIED;
	w = lv_syn_scratch(s.pc);
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (w->l4 > LV_SYN_L4_MAX)
		return LV_R_UNVERIFIED;
	th = data + lv_within(w->l4, LV_SYN_L4_MAX);
	if ((void *)(th + 1) > end)
		return LV_R_UNVERIFIED;
	family = s.q->pkt.family;
	now = s.q->now;
	frame = end - data;
	w->in.isn = bpf_ntohl(th->seq);
	o = lv_opts_scratch(s.pc); /* loaded by lv_syn_judge() */
	bpf_loop(LV_TCP_OPT_BYTES, lv_tcp_opt_walk, NULL, 0);
	w->in.opts = lv_cookie_opts_allowed(lv_cookie_opts_of(o, family), s.ctl->tcp_off);
	wide = lv_cookie_make_wide(&w->in, now, s.ctl->cookie_key, &s.pc->cookie_memo);
	tsval = lv_cookie_tsval(wide, now);
	mss = family == LV_AF_INET ? s.ctl->mss4 : s.ctl->mss6;
	w->sa.seq = (__u32)wide;
	w->sa.ack = w->in.isn + 1;
	w->sa.nopt = lv_synack_options(w->in.opts, mss, tsval, o->tsval, w->sa.opt);
	need = w->l3 + (family == LV_AF_INET ? sizeof(struct iphdr) : sizeof(struct ipv6hdr)) + sizeof(struct tcphdr) +
	       4 * w->sa.nopt;
	if (need > frame && !o->mss)
		w->sa.nopt = lv_synack_options(w->in.opts, 0, tsval, o->tsval, w->sa.opt);
	if (lv_synack_write(ctx, family, w->l3, w->l4, &w->sa))
		return LV_R_UNVERIFIED;
	return LV_R_CHALLENGED;
}

/* What the host's socket table says of a packet's connection. */
enum lv_host_conn {
	LV_CONN_NONE = 0,    /* nothing, or only a listener: nobody asked for it */
	LV_CONN_OPENING = 1, /* a connection being opened: a request socket, SYN_SENT */
	LV_CONN_OPEN = 2,    /* an established one (or closing, TIME_WAIT) */
	LV_CONN_PROVEN = 3,  /* ...that has carried the host's data to the client and back */
};

/* The connection of the packet at `ip` and `th` in the host's socket table. */
static __always_inline int lv_host_conn(struct xdp_md *ctx, struct lv_percpu *pc, __u8 family, const void *ip,
					const struct tcphdr *th)
{
	struct bpf_sock_tuple *t = lv_where_scratch(pc);
	struct tcp_sock___lv *tp;
	struct bpf_sock *sk;
	int conn = LV_CONN_OPEN;
	__u32 size;

	__builtin_memset(t, 0, sizeof(*t));
	if (family == LV_AF_INET) {
		t->ipv4.saddr = ((const struct iphdr *)ip)->saddr;
		t->ipv4.daddr = ((const struct iphdr *)ip)->daddr;
		t->ipv4.sport = th->source;
		t->ipv4.dport = th->dest;
		size = sizeof(t->ipv4);
	} else {
		__builtin_memcpy(t->ipv6.saddr, &((const struct ipv6hdr *)ip)->saddr, sizeof(t->ipv6.saddr));
		__builtin_memcpy(t->ipv6.daddr, &((const struct ipv6hdr *)ip)->daddr, sizeof(t->ipv6.daddr));
		t->ipv6.sport = th->source;
		t->ipv6.dport = th->dest;
		size = sizeof(t->ipv6);
	}
	sk = bpf_skc_lookup_tcp(ctx, t, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return LV_CONN_NONE;
	switch (sk->state) {
	case BPF_TCP_LISTEN:
		conn = LV_CONN_NONE;
		break;
	case BPF_TCP_SYN_SENT:
	case BPF_TCP_SYN_RECV:
	case BPF_TCP_NEW_SYN_RECV:
		conn = LV_CONN_OPENING;
		break;
	default:
		tp = (struct tcp_sock___lv *)bpf_skc_to_tcp_sock(sk);
		if (tp && tp->bytes_acked)
			conn = LV_CONN_PROVEN;
	}
	bpf_sk_release(sk);
	return conn;
}

/* ---- an ACK ----------------------------------------------------------------------------- */

/*
 * Proxy mode: an ACK whose cookie is good goes on to the tc program with it, in the
 * frame's metadata (struct lv_handoff). A driver that keeps no metadata is counted
 * (LV_HO_NO_META); its ACK goes on without, and the stack resets it.
 */
static __always_inline void lv_handoff_leave(struct xdp_md *ctx, struct lv_percpu *pc, __u32 cookie, __u8 family,
					     __u32 l4_from_l3)
{
	struct lv_handoff *h;
	void *data;

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*h)))
		goto none;
	barrier_var(ctx);
	h = (void *)(long)ctx->data_meta;
	data = (void *)(long)ctx->data;
	if ((void *)(h + 1) > data)
		goto none;
	h->magic = LV_HANDOFF_MAGIC;
	h->cookie = cookie;
	h->l4 = (__u16)l4_from_l3;
	h->family = family;
	h->pad = 0;
	return;
none:
	pc->handoff[LV_HO_NO_META]++;
}

/* Does the ACK at `l4` (its data offset `doff` bytes) echo the TSval levee gave its
 * connection (lv_cookie_tsval(), `wide`)? */
static __always_inline int lv_ack_echoes(struct xdp_md *ctx, struct lv_ctx *c, __u32 l4, __u32 doff, __u64 wide)
{
	struct lv_tcp_opts *o = lv_tcp_opts_read(ctx, c->pc, l4, doff);

	return o->ts && lv_cookie_ts_echoed(wide, o->tsecr, c->now);
}

/*
 * Proxy mode: does the staged ACK return a good cookie (and echo levee's timestamp when
 * its handshake has them), and complete its handshake (the host has no connection of
 * its yet)? Then it passes with the cookie in its metadata (LV_R_PROXIED), and its
 * source is marked known-good if the timestamp proved it (lv_syn_mark()). Else 0, or
 * LV_SYN_OTHER for a packet of a connection the host has. For a source that is not
 * known-good, and for one marked lately (a fresh mark: its handshakes answered before
 * the mark). A frame of its own.
 */
__attribute__((noinline)) __u32 lv_syn_ack(struct xdp_md *ctx, __u32 known_good)
{
	struct lv_cookie_in *in;
	struct lv_syn_work *w;
	struct lv_ctx c = {};
	struct tcphdr *th;
	__u32 cookie;
	__u64 wide;
	int ts;
	void *ip;

	if (!ctx || !lv_unstage(&c))
		return 0;
	w = lv_syn_scratch(c.pc);
	in = &w->in;
	if (lv_syn_find(ctx, c.pkt, w, &ip, &th) || !th->ack || th->rst || th->syn)
		return 0;
	lv_cookie_in_of(in, c.pkt, ip, th);
	in->isn = bpf_ntohl(th->seq) - 1;
	cookie = bpf_ntohl(th->ack_seq) - 1;
	if (!lv_cookie_check_wide(in, cookie, c.now, c.ctl->cookie_key, &c.pc->cookie_memo, &wide))
		return 0;
	ts = !!(cookie & LV_COOKIE_OPT_TS);
	if (ts && !lv_ack_echoes(ctx, &c, w->l4, th->doff * 4, wide))
		return 0;
	/* Only the ACK that completes the handshake is handed over and passed: the
	 * connection's next packets return the cookie too, until the listener has sent
	 * something, and must meet the limits like any. */
	if (lv_host_conn(ctx, c.pc, c.pkt->family, ip, th) != LV_CONN_NONE)
		return LV_SYN_OTHER;
	if (ts && !known_good)
		lv_syn_mark(&c);
	lv_handoff_leave(ctx, c.pc, cookie, c.pkt->family, w->l4 - w->l3);
	return LV_R_PROXIED;
}

/* ---- anything else ---------------------------------------------------------------------- */

/*
 * The staged TCP packet of a source that is not known-good, neither a SYN nor a good
 * cookie: 0 (on to the limits) if its connection is open in the host (a proven one
 * marks its source), LV_R_OPENING if the host is opening it, else LV_R_UNVERIFIED.
 * State is no proof, so a source with state is asked too: until its connection proves
 * it, each such packet costs a socket lookup, as a spoofed one does. A frame of its
 * own (the socket lookup's).
 */
__attribute__((noinline)) __u32 lv_syn_other(struct xdp_md *ctx)
{
	struct lv_syn_work *w;
	struct lv_ctx c = {};
	struct tcphdr *th;
	void *ip;
	int conn;

	if (!ctx || !lv_unstage(&c))
		return LV_R_UNVERIFIED;
	w = lv_syn_scratch(c.pc);
	if (lv_syn_find(ctx, c.pkt, w, &ip, &th))
		return LV_R_UNVERIFIED;
	conn = lv_host_conn(ctx, c.pc, c.pkt->family, ip, th);
	if (conn == LV_CONN_PROVEN)
		lv_syn_mark(&c);
	if (conn >= LV_CONN_OPEN)
		return 0;
	return conn == LV_CONN_OPENING ? LV_R_OPENING : LV_R_UNVERIFIED;
}

/* ---- the gate ----------------------------------------------------------------------------- */

static __always_inline int lv_syn_protected(const struct lv_ctx *c)
{
	return (c->cls->flags & LV_CLASS_SYN_AUTH) && (c->pkt->kind == LV_L4_TCP_SYN || c->pkt->kind == LV_L4_TCP);
}

/*
 * A TCP packet in a class with SYN authentication: 0 when it goes on to the limits,
 * else its reason. Only a known-good source goes on at once: state is no proof (a
 * packet of a connection the host had before levee attached, or of a source from
 * before the class authenticated, made it). Reading lv_good alone here, not lv_seen,
 * and its summary first (levee_abi.h), leaves most spoofed SYNs no cold line at all.
 * A known-good source marked lately still has its ACKs' cookies checked (lv_syn_ack()).
 */
static __always_inline __u32 lv_syn_gate(struct lv_ctx *c, struct xdp_md *xdp)
{
	__u64 h;
	__u32 r;

	if (lv_good_known_hash(c, &h)) {
		if (!lv_syn_may_proxy(c->ctl, c->cls) || c->pkt->kind != LV_L4_TCP || !lv_fresh(c, h))
			return 0;
		lv_stage(c);
		return lv_syn_ack(xdp, 1) == LV_R_PROXIED ? LV_R_PROXIED : 0;
	}
	lv_stage(c);
	r = c->pkt->kind == LV_L4_TCP_SYN ? lv_syn_check(xdp) : lv_syn_reply(xdp);
	if (r == LV_SYN_SAY)
		r = lv_syn_say(xdp);
	else if (r == LV_SYN_ANSWER_PROXY)
		r = lv_syn_proxy(xdp);
	else if (r == LV_SYN_ANSWER_RESET)
		r = lv_syn_reset(xdp);
	else if (r == LV_SYN_CHECK_ACK)
		r = lv_syn_ack(xdp, 0) ?: LV_SYN_OTHER;
	if (r == LV_SYN_OTHER)
		r = lv_syn_other(xdp);
	return r & (LV_REASON_MAX - 1); /* a global function's result is unbounded */
}

#endif /* LEVEE_SYNAUTH_H */
