/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * syn_answer.h - a SYN of a source that is not known-good: judged (flags, data offset,
 * checksum, where it goes), refused over the answer rate, else answered with a cookie
 * in proxy or reset mode (the SYN-ACK's bytes are synack.h's).
 */
#ifndef LEVEE_SYN_ANSWER_H
#define LEVEE_SYN_ANSWER_H

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
#include "syn_rate.h"
#include "syn_where.h"
#include "synack.h"
#include "tcp_options.h"

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
 * What the stack would make of the datagram around a proper SYN: 0, or LV_R_MALFORMED
 * for an IPv4 header whose checksum is wrong (RFC 1122 3.2.1.2) or the first fragment
 * of a datagram not yet whole (IPv4 MF, IPv6 M: the stack answers only the reassembled
 * one), and LV_R_MARTIAN for a source that is one of the host's own addresses (RFC 1812
 * 5.3.7: the answer would go on the wire to the host itself).
 */
static __always_inline __u32 lv_syn_datagram(struct xdp_md *ctx, const struct lv_syn_ctx *s, const void *ip)
{
	const __u32 *src = s->q->pkt.addr;

	if (s->q->pkt.family == LV_AF_INET) {
		const struct iphdr *iph = ip;
		const __u32 *w = ip;
		void *end = (void *)(long)ctx->data_end;
		__u64 sum = 0;
		int i;

		/* The header, options included (the parser checked they are in the frame),
		 * word by word: ihl is at most 15 words. */
#pragma unroll
		for (i = 0; i < 15; i++) {
			if (i >= iph->ihl)
				break;
			if ((void *)(w + i + 1) > end)
				return LV_R_MALFORMED;
			sum += lv_csum32(w[i]);
		}
		if (lv_csum_fold(sum) != 0)
			return LV_R_MALFORMED;
	}
	if (s->q->pkt.more_frags)
		return LV_R_MALFORMED;
	if (s->ctl->local_known && lv_host_owns(s->ctl, lv_where_scratch(s->pc), src[0], src[1], src[2], src[3]))
		return LV_R_MARTIAN;
	return 0;
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
	return lv_syn_datagram(ctx, s, ip);
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

#endif /* LEVEE_SYN_ANSWER_H */
