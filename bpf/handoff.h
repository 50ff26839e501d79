/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * handoff.h - SYN authentication's proxy mode, its second half: the tc ingress program
 * that hands a connection levee proved (synauth.h) to the host's listener.
 *
 * The XDP program answered the SYN itself and kept nothing. When the client's ACK
 * returns a good cookie, the XDP program passes it with the cookie in the frame's
 * metadata (struct lv_handoff). Here, after the stack made an skb of it, the listener
 * is looked up and given the request socket the kernel would have made had it sent the
 * SYN-ACK (the kfunc bpf_sk_assign_tcp_reqsk, Linux 6.9 and later), with the options
 * the cookie kept: the stack then completes the connection as if it had answered the
 * SYN with a SYN cookie of its own (cookie_bpf_check), with MSS, window scale, SACK and
 * timestamps. The kernel needs net.ipv4.tcp_syncookies on for it (levee checks at
 * attach).
 *
 * Only a frame with levee's metadata is looked at: everything else costs a bounds check.
 * The metadata is trusted only for the ACK whose acknowledgment number it names (the
 * XDP program checked that ACK's cookie). Whatever happens, the frame goes on to the
 * hook's next filter, if any, and to the stack (TC_ACT_UNSPEC: TC_ACT_OK would end the
 * chain for filters of other tools): without a request socket the stack treats it as
 * any ACK to a listener, and resets it. It sees the ACK only if nothing before it ended the
 * chain: TCX programs run before every clsact filter, levee's included (tc_filter.hpp).
 */
#ifndef LEVEE_HANDOFF_H
#define LEVEE_HANDOFF_H

#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "maps.h"
#include "syncookie.h"
#include "tcp_options.h"

/* The kfunc's attributes, as the kernel defines them (it checks the size we pass). */
struct bpf_tcp_req_attrs {
	__u32 rcv_tsval;
	__u32 rcv_tsecr;
	__u16 mss;
	__u8 rcv_wscale;
	__u8 snd_wscale;
	__u8 ecn_ok;
	__u8 wscale_ok;
	__u8 sack_ok;
	__u8 tstamp_ok;
	__u8 usec_ts_ok;
	__u8 reserved[3];
};

/* The kernel's socket, only ever pointed to here. Not a forward declaration: libbpf
 * 1.1 holds a kfunc's pointer to an incomplete struct incompatible with the kernel's. */
struct sock {
	__u8 opaque;
};
struct tcp_sock;

/* Weak: the controller does not load this program where the kernel lacks it. */
extern int bpf_sk_assign_tcp_reqsk(struct __sk_buff *skb, struct sock *sk, struct bpf_tcp_req_attrs *attrs,
				   int attrs__sz) __ksym __weak;

static long lv_tcp_opt_walk_stack(__u32 index, void *opts)
{
	return lv_tcp_opt_step(opts);
}

/* The request socket's attributes: the cookie's options, and the ACK's timestamps when
 * the handshake has them (like the kernel: an ACK without one means none). */
static __always_inline void lv_handoff_attrs(struct __sk_buff *skb, __u32 l4, __u32 doff, __u32 opts, __u8 family,
					     struct bpf_tcp_req_attrs *a)
{
	struct lv_tcp_opts o = {};
	__u32 len = doff - sizeof(struct tcphdr);

	a->mss = lv_cookie_mss(opts, family);
	if ((opts & LV_COOKIE_OPT_WSCALE) != LV_COOKIE_NO_WSCALE) {
		a->wscale_ok = 1;
		a->snd_wscale = opts & LV_COOKIE_OPT_WSCALE;
		a->rcv_wscale = LV_SYNACK_WSCALE;
	}
	a->sack_ok = !!(opts & LV_COOKIE_OPT_SACK);
	if (!(opts & LV_COOKIE_OPT_TS))
		return;
	barrier_var(len);
	if (doff < sizeof(struct tcphdr) || !len || len > LV_TCP_OPT_BYTES ||
	    bpf_skb_load_bytes_relative(skb, l4 + sizeof(struct tcphdr), o.buf, len, BPF_HDR_START_NET))
		return;
	lv_tcp_opts_start(&o, len);
	bpf_loop(LV_TCP_OPT_BYTES, lv_tcp_opt_walk_stack, &o, 0);
	if (!o.ts)
		return;
	a->tstamp_ok = 1;
	a->rcv_tsval = o.tsval;
	a->rcv_tsecr = o.tsecr; /* levee's TSval, echoed: the kernel takes its offset from it */
}

/* The listener of the ACK's connection, referenced (bpf_sk_release), or NULL. */
static __always_inline struct bpf_sock *lv_handoff_listener(struct __sk_buff *skb, const struct lv_handoff *h,
							    const struct tcphdr *th)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	__u32 size;

	if (h->family == LV_AF_INET) {
		if (bpf_skb_load_bytes_relative(skb, 12, &t.ipv4.saddr, 8, BPF_HDR_START_NET))
			return NULL;
		t.ipv4.sport = th->source;
		t.ipv4.dport = th->dest;
		size = sizeof(t.ipv4);
	} else {
		if (bpf_skb_load_bytes_relative(skb, 8, t.ipv6.saddr, 32, BPF_HDR_START_NET))
			return NULL;
		t.ipv6.sport = th->source;
		t.ipv6.dport = th->dest;
		size = sizeof(t.ipv6);
	}
	sk = bpf_skc_lookup_tcp(skb, &t, size, BPF_F_CURRENT_NETNS, 0);
	if (sk && sk->state != BPF_TCP_LISTEN) { /* the connection exists: an ACK again */
		bpf_sk_release(sk);
		return NULL;
	}
	return sk;
}

static __always_inline int lv_handoff(struct __sk_buff *skb)
{
	const struct lv_handoff *h = (void *)(long)skb->data_meta;
	struct bpf_tcp_req_attrs attrs = {};
	struct lv_percpu *pc;
	struct tcp_sock *tp;
	struct bpf_sock *sk;
	struct tcphdr th;
	__u32 zero = 0, l4;
	__u64 *count;

	if ((void *)(h + 1) > (void *)(long)skb->data || h->magic != LV_HANDOFF_MAGIC)
		return TC_ACT_UNSPEC;
	pc = bpf_map_lookup_elem(&lv_percpu, &zero);
	if (!pc) /* cannot happen: a one-entry array */
		return TC_ACT_UNSPEC;
	l4 = h->l4; /* an offset for a helper that checks it: never masked into range */
	if (bpf_skb_load_bytes_relative(skb, l4, &th, sizeof(th), BPF_HDR_START_NET) ||
	    bpf_ntohl(th.ack_seq) - 1 != h->cookie)
		return TC_ACT_UNSPEC;
	sk = lv_handoff_listener(skb, h, &th);
	if (!sk) {
		pc->handoff[LV_HO_NO_LISTENER]++;
		return TC_ACT_UNSPEC;
	}
	count = &pc->handoff[LV_HO_REFUSED];
	tp = bpf_skc_to_tcp_sock(sk);
	if (tp && bpf_sk_assign_tcp_reqsk) {
		lv_handoff_attrs(skb, l4, th.doff * 4, h->cookie, h->family, &attrs);
		if (!bpf_sk_assign_tcp_reqsk(skb, (struct sock *)tp, &attrs, sizeof(attrs)))
			count = &pc->handoff[LV_HO_HANDED];
	}
	(*count)++;
	bpf_sk_release(sk);
	return TC_ACT_UNSPEC;
}

#endif /* LEVEE_HANDOFF_H */
