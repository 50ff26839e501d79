/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * synauth.h - SYN authentication (LV_CLASS_SYN_AUTH): a TCP source with no state proves
 * its address before it gets any.
 *
 * A SYN of such a source is answered here, with a SYN-ACK whose acknowledgment number is
 * a cookie (syncookie.h), sent back out of the interface (XDP_TX); nothing is kept. A
 * real client's stack finds that acknowledgment wrong and answers with a RST whose
 * sequence number is the cookie (RFC 793, SYN-SENT: <SEQ=SEG.ACK><CTL=RST>), and
 * retransmits its SYN a second later (Linux's first retransmission). The RST proves the
 * address: its source is marked known-good (good.h), the RST goes no further, and the
 * retransmitted SYN gets state as an arrival and reaches the listener. A spoofed source
 * never sees the SYN-ACK, so it never returns the cookie and never gets state.
 *
 * Any other TCP packet of a source with no state is a packet of a connection the host
 * already has (established before levee attached, or one the host opened: the socket
 * table, bpf_skc_lookup_tcp), which passes on to the limits, or nothing the host asked
 * for: dropped (LV_R_UNVERIFIED). An ACK or RST flood from spoofed sources is so dropped
 * after one socket lookup.
 *
 * What levee answers is limited (struct lv_answer), per destination network and in all,
 * so that a flood spoofing one victim's addresses does not make levee its hose.
 *
 * Known limits: the first connection of a new client waits for its SYN's retransmission
 * (1 s on Linux); a client whose stack does not answer a wrong SYN-ACK with a RST never
 * gets in. A blind guess of a cookie is right once in 2^24 (syncookie.h).
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

/*
 * Turn the SYN at `th` into its SYN-ACK, in place: Ethernet addresses swapped (VLAN
 * tags kept), a bare IP header (IPv4 without options, IPv6 without extension headers)
 * and a TCP header without options right after it, the frame cut to that. Returns 0,
 * or -1 if the frame could not be cut.
 */
static __always_inline int lv_synack_write(struct xdp_md *ctx, const struct lv_packet *pkt, __u32 l3, __u32 l4,
					   __u32 cookie)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct tcphdr *th, *out;
	__u32 tcp_at;
	__u8 mac[ETH_ALEN];
	__u16 sport, dport;
	__u64 sum;
	int len;

	l3 &= 0xff;
	th = data + (l4 & 0x3ff);
	if ((void *)(eth + 1) > end || (void *)(th + 1) > end)
		return -1;
	sport = th->source;
	dport = th->dest;
	__builtin_memcpy(mac, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, mac, ETH_ALEN);

	if (pkt->family == LV_AF_INET) {
		struct iphdr *ip = data + l3;
		__u32 src, dst;

		if ((void *)(ip + 1) > end)
			return -1;
		src = ip->daddr;
		dst = ip->saddr;
		tcp_at = l3 + sizeof(*ip);
		*(__u16 *)ip = bpf_htons(0x4500); /* version 4, IHL 5, TOS 0 */
		ip->tot_len = bpf_htons(sizeof(*ip) + sizeof(*th));
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
		sum = lv_csum32(src) + lv_csum32(dst) + bpf_htons(IPPROTO_TCP) + bpf_htons(sizeof(*th));
	} else {
		struct ipv6hdr *ip6 = data + l3;
		__u32 src[4], dst[4];

		if ((void *)(ip6 + 1) > end)
			return -1;
		__builtin_memcpy(src, &ip6->daddr, sizeof(src));
		__builtin_memcpy(dst, &ip6->saddr, sizeof(dst));
		tcp_at = l3 + sizeof(*ip6);
		*(__u32 *)ip6 = bpf_htonl(0x60000000); /* version 6, no traffic class or flow label */
		ip6->payload_len = bpf_htons(sizeof(*th));
		ip6->nexthdr = IPPROTO_TCP;
		ip6->hop_limit = LV_SYNACK_TTL;
		__builtin_memcpy(&ip6->saddr, src, sizeof(src));
		__builtin_memcpy(&ip6->daddr, dst, sizeof(dst));
		sum = lv_csum32(src[0]) + lv_csum32(src[1]) + lv_csum32(src[2]) + lv_csum32(src[3]) +
		      lv_csum32(dst[0]) + lv_csum32(dst[1]) + lv_csum32(dst[2]) + lv_csum32(dst[3]) +
		      bpf_htons(IPPROTO_TCP) + bpf_htons(sizeof(*th));
	}

	/* The TCP header goes right after the IP header: where the SYN's was, or before
	 * it when the SYN had IP options or extension headers. */
	out = data + (tcp_at & 0x3ff);
	if ((void *)(out + 1) > end)
		return -1;
	out->source = dport;
	out->dest = sport;
	out->seq = bpf_htonl(~cookie); /* the client answers with a RST: any value does */
	out->ack_seq = bpf_htonl(cookie);
	*((__u16 *)out + 6) = bpf_htons(5 << 12 | 0x12); /* data offset 5, SYN and ACK */
	out->window = bpf_htons(65535);
	out->check = 0;
	out->urg_ptr = 0;
	sum += sport + dport + lv_csum32(out->seq) + lv_csum32(out->ack_seq) + bpf_htons(5 << 12 | 0x12) + out->window;
	out->check = lv_csum_fold(sum);

	len = (int)(tcp_at + sizeof(*out)) - (int)(end - data);
	if (len < 0 && bpf_xdp_adjust_tail(ctx, len))
		return -1;
	return 0;
}

/* This CPU's scratch words for the cookie's input or the socket tuple: off the stack,
 * which a chain of calls shares. */
static __always_inline void *lv_syn_scratch(struct lv_percpu *pc)
{
	return &pc->scratch.words[LV_SCRATCH_SYN];
}
_Static_assert(LV_SCRATCH_EVENT * 8 + sizeof(struct lv_event) <= LV_SCRATCH_SYN * 8, "events stay below");
_Static_assert(sizeof(struct lv_cookie_in) <= sizeof(struct lv_scratch) - LV_SCRATCH_SYN * 8, "lv_scratch holds it");
_Static_assert(sizeof(struct bpf_sock_tuple) <= sizeof(struct lv_scratch) - LV_SCRATCH_SYN * 8, "and a tuple");

/* Does the host have a socket for this packet's connection other than a listener (an
 * established connection, one it opened, one in TIME_WAIT)? */
static __always_inline int lv_host_connection(struct xdp_md *ctx, struct lv_percpu *ctx_pc, const struct lv_packet *pkt,
					      const void *l3, const struct tcphdr *th)
{
	struct bpf_sock_tuple *t = lv_syn_scratch(ctx_pc);
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

/*
 * The frame again, to its TCP header: the parser's own steps (parse.h), for the offsets
 * of the IP and TCP headers that struct lv_packet does not keep (the pipeline's stack
 * has no room for them). 0, or -1 if it is not TCP with a header.
 */
static __always_inline int lv_tcp_at(struct xdp_md *ctx, struct lv_packet *pkt, __u32 *l3, __u32 *l4)
{
	void *data = (void *)(long)ctx->data;
	struct lv_cursor cur = { .pos = data, .end = (void *)(long)ctx->data_end };
	int proto = lv_parse_eth(&cur), err;

	if (proto < 0)
		return -1;
	*l3 = cur.pos - data;
	if (proto == bpf_htons(ETH_P_IP))
		err = lv_parse_ipv4(&cur, pkt);
	else if (proto == bpf_htons(ETH_P_IPV6))
		err = lv_parse_ipv6(&cur, pkt);
	else
		return -1;
	if (err || (pkt->kind != LV_L4_TCP_SYN && pkt->kind != LV_L4_TCP))
		return -1;
	*l4 = cur.pos - data - sizeof(struct tcphdr); /* the parser stops right after it */
	return 0;
}

/*
 * The TCP packet staged (lv_stage) of a source with no state and not known-good, in a
 * class with SYN authentication: 0 when it goes on to the limits (the packet belongs to
 * a connection the host has), else LV_R_CHALLENGED (the frame is now its SYN-ACK),
 * LV_R_ANSWER_LIMIT, LV_R_VERIFIED or LV_R_UNVERIFIED. A global function, verified
 * once; its one pointer is the packet's context.
 */
__attribute__((noinline)) __u32 lv_syn_auth(struct xdp_md *ctx)
{
	void *data, *end;
	struct lv_cookie_in *in;
	struct lv_packet pkt;
	struct lv_ctx c = {};
	struct tcphdr *th;
	__u32 l3, l4;
	void *ip;

	if (!ctx || lv_unstage(&c))
		return LV_R_UNVERIFIED;
	in = lv_syn_scratch(c.pc);
	/* A SYN levee may not answer is refused before anything else is read. */
	if (c.pkt->kind == LV_L4_TCP_SYN && !lv_answer_allowed(&c))
		return LV_R_ANSWER_LIMIT;
	if (lv_tcp_at(ctx, &pkt, &l3, &l4))
		return LV_R_UNVERIFIED; /* cannot happen: the pipeline parsed it so */
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	ip = data + (l3 & 0xff);
	th = data + (l4 & 0x3ff);
	if (ip + sizeof(struct ipv6hdr) > end || (void *)(th + 1) > end)
		return LV_R_UNVERIFIED;
	if (pkt.kind == LV_L4_TCP_SYN) {
		/* Monitor mode answers nothing: it passes the SYN and counts what it would do. */
		if (c.cls->flags & LV_CLASS_MONITOR)
			return LV_R_CHALLENGED;
		lv_cookie_in_of(in, &pkt, ip, th);
		if (lv_synack_write(ctx, &pkt, l3, l4, lv_cookie_make(in, c.now, c.ctl->cookie_key)))
			return LV_R_UNVERIFIED;
		return LV_R_CHALLENGED;
	}
	if (th->rst && !th->ack && !th->syn) {
		lv_cookie_in_of(in, &pkt, ip, th);
		if (!lv_cookie_check(in, bpf_ntohl(th->seq), c.now, c.ctl->cookie_key))
			return LV_R_UNVERIFIED;
		lv_good_mark(&c);
		return LV_R_VERIFIED;
	}
	return lv_host_connection(ctx, c.pc, &pkt, ip, th) ? 0 : LV_R_UNVERIFIED;
}

static __always_inline int lv_syn_protected(const struct lv_ctx *c)
{
	return (c->cls->flags & LV_CLASS_SYN_AUTH) && (c->pkt->kind == LV_L4_TCP_SYN || c->pkt->kind == LV_L4_TCP);
}

/* A TCP packet of a source with no state, in a class with SYN authentication: 0 when
 * it goes on to the limits (its source is known-good, or its connection the host's),
 * else its reason. */
static __always_inline __u32 lv_syn_gate(struct lv_ctx *c, struct xdp_md *xdp)
{
	if (lv_good_known(c))
		return 0;
	lv_stage(c);
	return lv_syn_auth(xdp) & (LV_REASON_MAX - 1); /* a global function's result is unbounded */
}

#endif /* LEVEE_SYNAUTH_H */
