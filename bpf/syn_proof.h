/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * syn_proof.h - what proves a source that is not known-good: a RST that returns a
 * reset-mode cookie, an ACK that returns a proxy cookie (handed to the tc program), or
 * a connection the host has; anything else is dropped unverified.
 */
#ifndef LEVEE_SYN_PROOF_H
#define LEVEE_SYN_PROOF_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "syn_frame.h"
#include "syn_marks.h"
#include "synack.h"
#include "tcp_options.h"

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

#endif /* LEVEE_SYN_PROOF_H */
