/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * synauth.h - SYN authentication (LV_CLASS_SYN_AUTH): a TCP source proves its address
 * before it gets state.
 *
 * A SYN of a source that has not proved it (not known-good) is answered here, with a
 * SYN-ACK that carries a cookie (syncookie.h), sent back out of the interface (XDP_TX);
 * nothing is kept. A spoofed source never sees the SYN-ACK, so it never returns the
 * cookie and never gets state.
 * How a real client returns it, two modes:
 *
 * - Proxy (the default where levee's tc program is on the interface: lv_control.handoff).
 *   The SYN-ACK is a proper one: its sequence number is the cookie, and it offers the
 *   options the SYN asked for (tcp_options.h), which the cookie's low byte keeps. The
 *   client's ACK returns the cookie (its acknowledgment number less one); the source is
 *   marked known-good and the ACK passes (LV_R_PROXIED) with the cookie in the frame's
 *   metadata. The tc program (handoff.h) hands it to the listener as the request socket
 *   the kernel would have made, so the first connection completes at once, with its
 *   MSS, window scale, SACK and timestamps. It needs the listener on this host.
 * - Reset (LV_CLASS_SYN_RESET, or no tc program). The SYN-ACK's acknowledgment number is
 *   the cookie. A real client's stack finds it wrong and answers with a RST whose
 *   sequence number is the cookie (RFC 793, SYN-SENT: <SEQ=SEG.ACK><CTL=RST>), and
 *   retransmits its SYN a second later (Linux's first retransmission). The RST proves
 *   the address: its source is marked known-good (good.h), the RST goes no further, and
 *   the retransmitted SYN gets state as an arrival and reaches the listener. It works
 *   for a listener anywhere (levee on a router), at the cost of that second.
 *
 * Only a known-good source's TCP goes straight on to the limits: state alone is no
 * proof, so a SYN of any other source is answered (one of a source from before the
 * class authenticated SYNs too, once). Any other packet, neither a SYN nor a good
 * cookie, goes on if its source may have state (lv_seen), else if it belongs to a
 * connection the host has (established before levee attached, or one the host opened:
 * the socket table, bpf_skc_lookup_tcp), which proves its source as a cookie would
 * (marked known-good); else it is nothing the host asked for: dropped
 * (LV_R_UNVERIFIED). An ACK or RST flood from spoofed sources is so dropped after one
 * cookie check and one socket lookup.
 *
 * What levee answers is limited (struct lv_answer), per destination network and in all,
 * so that a flood spoofing one victim's addresses does not make levee its hose.
 *
 * Known limits: in reset mode, the first connection of a new client waits for its
 * SYN's retransmission, and a client whose stack does not answer a wrong SYN-ACK with a
 * RST never gets in. In proxy mode, an ACK whose frame the stack drops after levee
 * verified it (a full accept queue) is not handed again: its retransmission meets a
 * known-good source and no metadata, and the stack resets it; the client's next
 * connection goes straight through. A blind guess of a cookie is right once in 2^23
 * (syncookie.h).
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
#include "cas.h"
#include "context.h"
#include "events.h"
#include "good.h"
#include "maps.h"
#include "parse.h"
#include "seen.h"
#include "stage.h"
#include "syncookie.h"
#include "tcp_options.h"

#define LV_SYNACK_TTL 64

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

/* Fold a one's complement sum of 16-bit words to 16 bits. */
static __always_inline __u16 lv_csum_fold(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* The sum of a 32-bit word's two halves (network byte order in, as stored). */
static __always_inline __u64 lv_csum32(__u32 w)
{
	return (w & 0xffff) + (w >> 16);
}

/* A network's answers were refused: an event naming it, once per LV_ANSWER_SAY_NS per
 * cell (the CPU that wins the CAS sends it), so a flood raises a handful, not one a SYN. */
static __always_inline void lv_answer_say(struct lv_ctx *c, struct lv_answer_cell *cell, const struct lv_answer *a)
{
	__u64 said = LV_READ_ONCE(cell->said_ns);
	struct lv_key net;

	if (said && (__s64)(c->now - said) < (__s64)LV_ANSWER_SAY_NS)
		return;
	if (__sync_val_compare_and_swap(&cell->said_ns, said, c->now) != said)
		return;
	lv_key_mask(&net, c->pkt->addr, c->pkt->family, a->mask4, a->mask6, 0, 0, 0);
	lv_event_of(c, net.addr, LV_EV_ANSWER_LIMITED, LV_R_ANSWER_LIMIT, 0, a->per_network.rate);
}

/*
 * Is a SYN-ACK towards this source's network, and from this CPU, within what levee may
 * send (struct lv_answer)? Charges both when it is.
 */
static __always_inline int lv_answer_allowed(struct lv_ctx *c)
{
	const struct lv_answer *a = &c->pol->answer;
	const __u32 *addr = c->pkt->addr;
	struct lv_answer_cell *cell;
	__u64 ready, h;
	__u32 i;

	if (a->cap_per_cpu.cost) {
		ready = c->pc->answer_ready;
		if (!lv_gcra_conforms(ready, c->now))
			return 0;
	}
	if (a->per_network.cost) {
		if (c->pkt->family == LV_AF_INET)
			h = (__u64)(addr[3] & a->mask4) * 0x9E3779B97F4A7C15ULL;
		else
			h = (((__u64)(addr[0] & a->mask6[0]) << 32 | (addr[1] & a->mask6[1])) * 0x9E3779B97F4A7C15ULL) ^
			    (((__u64)(addr[2] & a->mask6[2]) << 32 | (addr[3] & a->mask6[3])) * 0xC2B2AE3D27D4EB4FULL);
		h ^= c->ctl->seen_seed;
		i = (__u32)(h >> (64 - LV_ANSWER_LOG2));
		cell = bpf_map_lookup_elem(&lv_answers, &i);
		if (!cell)
			return 0;
		if (lv_gcra_take(&cell->ready, LV_READ_ONCE(cell->ready), c->now, a->per_network.cost,
				 a->per_network.tau_ns, 1)) {
			lv_answer_say(c, cell, a);
			return 0;
		}
	}
	if (a->cap_per_cpu.cost)
		c->pc->answer_ready =
			lv_gcra_after(c->pc->answer_ready, c->now, a->cap_per_cpu.cost, a->cap_per_cpu.tau_ns);
	return 1;
}

/* What goes into a SYN-ACK's TCP header: the numbers and the options (network order). */
struct lv_synack {
	__u32 seq, ack;
	__u32 nopt; /* words of opt */
	__u32 opt[LV_SYNACK_OPT_WORDS];
};

/*
 * Turn the SYN at `th` into its SYN-ACK, in place: Ethernet addresses swapped (VLAN
 * tags kept), a bare IP header (IPv4 without options, IPv6 without extension headers)
 * and the TCP header with its options right after it, the frame cut to that. Returns
 * 0, or -1 if the frame does not hold it (the caller makes sure it does: it only
 * shrinks).
 */
static __always_inline int lv_synack_write(struct xdp_md *ctx, __u8 family, __u32 l3, __u32 l4,
					   const struct lv_synack *sa)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct tcphdr *th, *out;
	__u32 tcp_at, tcp_len = sizeof(*th) + 4 * (sa->nopt & 7), i;
	__u16 sport, dport, flags;
	__u8 mac[ETH_ALEN];
	__u32 *opt;
	__u64 sum, frame;
	int len;

	if (sa->nopt > LV_SYNACK_OPT_WORDS)
		return -1;
	l3 &= 0xff;
	th = data + (l4 & 0x3ff);
	if ((void *)(eth + 1) > end || (void *)(th + 1) > end)
		return -1;
	sport = th->source;
	dport = th->dest;
	__builtin_memcpy(mac, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, mac, ETH_ALEN);

	if (family == LV_AF_INET) {
		struct iphdr *ip = data + l3;
		__u32 src, dst;

		if ((void *)(ip + 1) > end)
			return -1;
		src = ip->daddr;
		dst = ip->saddr;
		tcp_at = l3 + sizeof(*ip);
		*(__u16 *)ip = bpf_htons(0x4500); /* version 4, IHL 5, TOS 0 */
		ip->tot_len = bpf_htons(sizeof(*ip) + tcp_len);
		ip->id = 0;
		ip->frag_off = bpf_htons(0x4000); /* DF */
		ip->ttl = LV_SYNACK_TTL;
		ip->protocol = IPPROTO_TCP;
		ip->check = 0;
		ip->saddr = src;
		ip->daddr = dst;
		sum = bpf_htons(0x4500) + ip->tot_len + ip->frag_off + bpf_htons(LV_SYNACK_TTL << 8 | IPPROTO_TCP) +
		      lv_csum32(src) + lv_csum32(dst);
		ip->check = lv_csum_fold(sum);
		/* The TCP pseudo-header. */
		sum = lv_csum32(src) + lv_csum32(dst) + bpf_htons(IPPROTO_TCP) + bpf_htons(tcp_len);
	} else {
		struct ipv6hdr *ip6 = data + l3;
		__u32 src[4], dst[4];

		if ((void *)(ip6 + 1) > end)
			return -1;
		__builtin_memcpy(src, &ip6->daddr, sizeof(src));
		__builtin_memcpy(dst, &ip6->saddr, sizeof(dst));
		tcp_at = l3 + sizeof(*ip6);
		*(__u32 *)ip6 = bpf_htonl(0x60000000); /* version 6, no traffic class or flow label */
		ip6->payload_len = bpf_htons(tcp_len);
		ip6->nexthdr = IPPROTO_TCP;
		ip6->hop_limit = LV_SYNACK_TTL;
		__builtin_memcpy(&ip6->saddr, src, sizeof(src));
		__builtin_memcpy(&ip6->daddr, dst, sizeof(dst));
		sum = lv_csum32(src[0]) + lv_csum32(src[1]) + lv_csum32(src[2]) + lv_csum32(src[3]) +
		      lv_csum32(dst[0]) + lv_csum32(dst[1]) + lv_csum32(dst[2]) + lv_csum32(dst[3]) +
		      bpf_htons(IPPROTO_TCP) + bpf_htons(tcp_len);
	}

	/* The TCP header goes right after the IP header: where the SYN's was, or before
	 * it when the SYN had IP options or extension headers. */
	out = data + (tcp_at & 0x3ff);
	if ((void *)(out + 1) > end)
		return -1;
	flags = bpf_htons((tcp_len / 4) << 12 | 0x12); /* data offset, SYN and ACK */
	out->source = dport;
	out->dest = sport;
	out->seq = bpf_htonl(sa->seq);
	out->ack_seq = bpf_htonl(sa->ack);
	*((__u16 *)out + 6) = flags;
	out->window = bpf_htons(65535);
	out->check = 0;
	out->urg_ptr = 0;
	sum += sport + dport + lv_csum32(out->seq) + lv_csum32(out->ack_seq) + flags + out->window;
	opt = (__u32 *)(out + 1);
	for (i = 0; i < LV_SYNACK_OPT_WORDS; i++) {
		if (i >= sa->nopt)
			break;
		if ((void *)(opt + i + 1) > end)
			return -1;
		opt[i] = sa->opt[i];
		sum += lv_csum32(sa->opt[i]);
	}
	out->check = lv_csum_fold(sum);

	frame = end - data;
	barrier_var(frame); /* a length, not pointer arithmetic the verifier refuses */
	len = (int)(tcp_at + tcp_len) - (int)frame;
	if (len < 0 && bpf_xdp_adjust_tail(ctx, len))
		return -1;
	return 0;
}

/* This CPU's scratch words for the cookie's input and the SYN-ACK's header, or the
 * socket tuple: off the stack, which a chain of calls shares. */
struct lv_syn_work {
	struct lv_cookie_in in;
	struct lv_synack sa;
	__u32 l3, l4; /* the packet's IP and TCP headers, for lv_syn_proxy() and lv_syn_host() */
};
static __always_inline struct lv_syn_work *lv_syn_scratch(struct lv_percpu *pc)
{
	return (struct lv_syn_work *)&pc->scratch.words[LV_SCRATCH_SYN];
}
_Static_assert(LV_SCRATCH_EVENT * 8 + sizeof(struct lv_event) <= LV_SCRATCH_SYN * 8, "events stay below");
_Static_assert(sizeof(struct lv_syn_work) <= (LV_SCRATCH_OPTS - LV_SCRATCH_SYN) * 8, "lv_scratch holds it");
_Static_assert(sizeof(struct bpf_sock_tuple) <= (LV_SCRATCH_OPTS - LV_SCRATCH_SYN) * 8, "and a tuple");

/* ...and for a SYN's options, which bpf_loop's steps walk. */
static __always_inline struct lv_tcp_opts *lv_opts_scratch(struct lv_percpu *pc)
{
	return (struct lv_tcp_opts *)&pc->scratch.words[LV_SCRATCH_OPTS];
}
_Static_assert(sizeof(struct lv_tcp_opts) <= sizeof(struct lv_scratch) - LV_SCRATCH_OPTS * 8, "lv_scratch holds them");

/* One step of the walk over the options in this CPU's scratch (bpf_loop passes no
 * pointer to a map value: the step looks the scratch up again, an inlined lookup). */
static long lv_tcp_opt_walk(__u32 index, void *unused)
{
	struct lv_percpu *pc;
	__u32 zero = 0;

	pc = bpf_map_lookup_elem(&lv_percpu, &zero);
	if (!pc)
		return 1;
	return lv_tcp_opt_step(lv_opts_scratch(pc));
}

/* The options of the TCP header at `l4` (its data offset `doff` bytes long), read. */
static __always_inline struct lv_tcp_opts *lv_tcp_opts_read(struct xdp_md *ctx, struct lv_percpu *pc, __u32 l4,
							    __u32 doff)
{
	struct lv_tcp_opts *o = lv_opts_scratch(pc);
	__u32 len = doff - sizeof(struct tcphdr);

	barrier_var(len);
	if (doff < sizeof(struct tcphdr) || len > LV_TCP_OPT_BYTES || !len ||
	    bpf_xdp_load_bytes(ctx, l4 + sizeof(struct tcphdr), o->buf, len)) {
		lv_tcp_opts_start(o, 0);
		return o;
	}
	lv_tcp_opts_start(o, len);
	bpf_loop(LV_TCP_OPT_BYTES, lv_tcp_opt_walk, NULL, 0);
	return o;
}

/* Reset mode's SYN-ACK: its acknowledgment number is the cookie, which the client's
 * RST returns; its sequence number is anything. */
static __always_inline int lv_synack_reset(struct xdp_md *ctx, const struct lv_ctx *c, const struct lv_packet *pkt,
					   __u32 l3, __u32 l4, struct lv_syn_work *w)
{
	w->sa.ack = lv_cookie_make(&w->in, c->now, c->ctl->cookie_key, &c->pc->cookie_memo);
	w->sa.seq = ~w->sa.ack;
	w->sa.nopt = 0;
	return lv_synack_write(ctx, pkt->family, l3, l4, &w->sa);
}

/*
 * Proxy mode's SYN-ACK for the SYN at `th`: the cookie binds the client's ISN and the
 * options it asked for, which the SYN-ACK offers back. levee's own MSS is left out only
 * when the client sent none and the frame has no room for it: the frame never grows
 * (XDP tail room is scarce on some drivers), and a SYN-ACK without it means 536.
 */
static __always_inline int lv_synack_proxy(struct xdp_md *ctx, struct lv_percpu *pc, const struct lv_control *ctl,
					   __u64 now, __u8 family, struct lv_syn_work *w)
{
	__u32 l3 = w->l3, l4 = w->l4;
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct tcphdr *th = data + (l4 & 0x3ff);
	struct lv_cookie_in *in = &w->in;
	struct lv_synack *sa = &w->sa;
	struct lv_tcp_opts *o;
	__u32 frame, need, tsval;
	__u64 wide;
	__u16 mss;

	if ((void *)(th + 1) > end)
		return -1;
	frame = end - data;
	in->isn = bpf_ntohl(th->seq);
	o = lv_tcp_opts_read(ctx, pc, l4, th->doff * 4);
	in->opts = lv_cookie_opts_of(o, family);
	wide = lv_cookie_make_wide(in, now, ctl->cookie_key, &pc->cookie_memo);
	tsval = (__u32)(now >> 20) + (__u32)(wide >> 32); /* a ~1 ms clock, offset per connection */
	mss = family == LV_AF_INET ? ctl->mss4 : ctl->mss6;
	sa->seq = (__u32)wide;
	sa->ack = in->isn + 1;
	sa->nopt = lv_synack_options(in->opts, mss, tsval, o->tsval, sa->opt);
	need = (l3 & 0xff) + (family == LV_AF_INET ? sizeof(struct iphdr) : sizeof(struct ipv6hdr)) +
	       sizeof(struct tcphdr) + 4 * sa->nopt;
	if (need > frame && !o->mss)
		sa->nopt = lv_synack_options(in->opts, 0, tsval, o->tsval, sa->opt);
	return lv_synack_write(ctx, family, l3, l4, sa);
}

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

/* Does the host have a socket for this packet's connection other than a listener (an
 * established connection, one it opened, one in TIME_WAIT)? */
static __always_inline int lv_host_connection(struct xdp_md *ctx, struct lv_percpu *ctx_pc, const struct lv_packet *pkt,
					      const void *l3, const struct tcphdr *th)
{
	struct bpf_sock_tuple *t = (struct bpf_sock_tuple *)lv_syn_scratch(ctx_pc);
	struct bpf_sock *sk;
	__u32 size;
	int found;

	__builtin_memset(t, 0, sizeof(*t));
	if (pkt->family == LV_AF_INET) {
		t->ipv4.saddr = ((const struct iphdr *)l3)->saddr;
		t->ipv4.daddr = ((const struct iphdr *)l3)->daddr;
		t->ipv4.sport = th->source;
		t->ipv4.dport = th->dest;
		size = sizeof(t->ipv4);
	} else {
		__builtin_memcpy(t->ipv6.saddr, &((const struct ipv6hdr *)l3)->saddr, sizeof(t->ipv6.saddr));
		__builtin_memcpy(t->ipv6.daddr, &((const struct ipv6hdr *)l3)->daddr, sizeof(t->ipv6.daddr));
		t->ipv6.sport = th->source;
		t->ipv6.dport = th->dest;
		size = sizeof(t->ipv6);
	}
	sk = bpf_skc_lookup_tcp(ctx, t, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	found = sk->state != BPF_TCP_LISTEN;
	bpf_sk_release(sk);
	return found;
}

/* Where the staged TCP packet's IP and TCP headers are: the Ethernet header walked again
 * for the first (its tags), the parser's word for the second (lv_packet.l4_tail; the
 * frame's length has not changed since). 0, or -1 if the frame does not start as the
 * parser found it. */
static __always_inline int lv_tcp_at(struct xdp_md *ctx, const struct lv_packet *pkt, __u32 *l3, __u32 *l4)
{
	void *data = (void *)(long)ctx->data;
	struct lv_cursor cur = { .pos = data, .end = (void *)(long)ctx->data_end };
	int proto = lv_parse_eth(&cur);

	if (proto != bpf_htons(pkt->family == LV_AF_INET ? ETH_P_IP : ETH_P_IPV6))
		return -1;
	*l3 = cur.pos - data;
	*l4 = (__u32)(cur.end - data) - pkt->l4_tail;
	return 0;
}

/* The IP and TCP headers at `l3` and `l4`, checked to lie in the frame: 0, or -1. */
static __always_inline int lv_syn_headers(struct xdp_md *ctx, __u32 l3, __u32 l4, void **ip, struct tcphdr **th)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	*ip = data + (l3 & 0xff);
	*th = data + (l4 & 0x3ff);
	return *ip + sizeof(struct ipv6hdr) > end || (void *)(*th + 1) > end ? -1 : 0;
}

/* lv_syn_auth()'s word for a SYN that proxy mode answers: lv_syn_proxy() answers it, in
 * a frame of its own (the two would not fit in the stack a chain of calls shares). */
#define LV_SYN_ANSWER_PROXY LV_REASON_MAX
/* ...and for a packet that is neither a SYN nor a good cookie, of a source without
 * state: lv_syn_host() looks for its connection among the host's sockets (the stack
 * again). */
#define LV_SYN_ASK_HOST (LV_REASON_MAX + 1)

/*
 * The TCP packet staged (lv_stage) of a source not known-good, in a class with SYN
 * authentication: 0 when it goes on to the limits, else LV_R_CHALLENGED (the frame is
 * now its SYN-ACK), LV_R_ANSWER_LIMIT, LV_R_VERIFIED, LV_R_PROXIED, LV_R_UNVERIFIED,
 * LV_SYN_ANSWER_PROXY or LV_SYN_ASK_HOST. A SYN is answered, a returned cookie checked;
 * anything else goes on if its source may have state (lv_seen; `no_state`: the caller
 * looked and it has none) or its connection is one the host has, which proves the
 * source as a cookie would. A global function, verified once; its one pointer is the
 * packet's context.
 */
__attribute__((noinline)) __u32 lv_syn_auth(struct xdp_md *ctx, __u32 no_state)
{
	const struct lv_packet *pkt;
	struct lv_cookie_in *in;
	struct lv_syn_work *w;
	struct lv_ctx c = {};
	struct tcphdr *th;
	__u32 l3, l4, cookie;
	int proxy, reply;
	void *ip;

	if (!ctx || lv_unstage(&c))
		return LV_R_UNVERIFIED;
	w = lv_syn_scratch(c.pc);
	in = &w->in;
	pkt = c.pkt;
	/* A SYN levee may not answer is refused before anything else is read. */
	if (pkt->kind == LV_L4_TCP_SYN && !lv_answer_allowed(&c))
		return LV_R_ANSWER_LIMIT;
	/* Cannot fail: the pipeline parsed it so. */
	if (lv_tcp_at(ctx, pkt, &l3, &l4) || lv_syn_headers(ctx, l3, l4, &ip, &th))
		return LV_R_UNVERIFIED;
	w->l3 = l3; /* for lv_syn_proxy() and lv_syn_host() */
	w->l4 = l4;
	proxy = c.ctl->handoff && !(c.cls->flags & LV_CLASS_SYN_RESET);
	/* What returns a cookie: proxy mode's ACK, reset mode's RST. */
	reply = proxy ? th->ack && !th->rst && !th->syn : th->rst && !th->ack && !th->syn;
	if (pkt->kind == LV_L4_TCP_SYN || reply)
		lv_cookie_in_of(in, pkt, ip, th); /* only what makes or returns a cookie is hashed */
	if (pkt->kind == LV_L4_TCP_SYN) {
		/* Monitor mode answers nothing: it passes the SYN and counts what it would do. */
		if (c.cls->flags & LV_CLASS_MONITOR)
			return LV_R_CHALLENGED;
		if (proxy)
			return LV_SYN_ANSWER_PROXY;
		if (lv_synack_reset(ctx, &c, pkt, l3, l4, w))
			return LV_R_UNVERIFIED;
		return LV_R_CHALLENGED;
	}
	if (reply && proxy) {
		in->isn = bpf_ntohl(th->seq) - 1;
		cookie = bpf_ntohl(th->ack_seq) - 1;
		if (lv_cookie_check(in, cookie, c.now, c.ctl->cookie_key, &c.pc->cookie_memo)) {
			lv_good_mark(&c);
			lv_handoff_leave(ctx, c.pc, cookie, pkt->family, l4 - l3);
			return LV_R_PROXIED;
		}
	} else if (reply) {
		if (lv_cookie_check(in, bpf_ntohl(th->seq), c.now, c.ctl->cookie_key, &c.pc->cookie_memo)) {
			lv_good_mark(&c);
			return LV_R_VERIFIED;
		}
	}
	if (!no_state && (lv_seen_check(&c) & LV_SEEN_KNOWN))
		return 0;
	return LV_SYN_ASK_HOST;
}

/* Is the packet lv_syn_auth() staged (where its headers are) one of a connection the
 * host has? Then it proves its source (marked known-good) and goes on (0); else
 * LV_R_UNVERIFIED. A frame of its own, like lv_syn_proxy(). */
__attribute__((noinline)) __u32 lv_syn_host(struct xdp_md *ctx)
{
	struct lv_syn_work *w;
	struct lv_ctx c = {};
	struct tcphdr *th;
	void *ip;

	if (!ctx || lv_unstage(&c))
		return LV_R_UNVERIFIED;
	w = lv_syn_scratch(c.pc);
	if (lv_syn_headers(ctx, w->l3, w->l4, &ip, &th))
		return LV_R_UNVERIFIED;
	if (!lv_host_connection(ctx, c.pc, c.pkt, ip, th))
		return LV_R_UNVERIFIED;
	lv_good_mark(&c);
	return 0;
}

/* Proxy mode's SYN-ACK for the SYN lv_syn_auth() staged (the cookie's input, where its
 * headers are): LV_R_CHALLENGED, or LV_R_UNVERIFIED if the frame could not hold it. */
__attribute__((noinline)) __u32 lv_syn_proxy(struct xdp_md *ctx)
{
	const struct lv_control *ctl;
	const struct lv_req *q;
	struct lv_percpu *pc;
	__u32 zero = 0;

	pc = bpf_map_lookup_elem(&lv_percpu, &zero);
	ctl = bpf_map_lookup_elem(&lv_policy, &zero);
	if (!ctx || !pc || !ctl) /* cannot happen: one-entry arrays */
		return LV_R_UNVERIFIED;
	q = (const struct lv_req *)&pc->scratch.words[LV_SCRATCH_REQ];
	if (lv_synack_proxy(ctx, pc, ctl, q->now, q->pkt.family, lv_syn_scratch(pc)))
		return LV_R_UNVERIFIED;
	return LV_R_CHALLENGED;
}

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
 * `no_state`: lv_syn_auth().
 */
static __always_inline __u32 lv_syn_gate(struct lv_ctx *c, struct xdp_md *xdp, __u32 no_state)
{
	__u32 r;

	if (lv_good_known(c))
		return 0;
	lv_stage(c);
	r = lv_syn_auth(xdp, no_state);
	if (r == LV_SYN_ANSWER_PROXY)
		r = lv_syn_proxy(xdp);
	else if (r == LV_SYN_ASK_HOST)
		r = lv_syn_host(xdp);
	return r & (LV_REASON_MAX - 1); /* a global function's result is unbounded */
}

#endif /* LEVEE_SYNAUTH_H */
