/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * synack.h - SYN authentication's answer: the SYN-ACK, written over the SYN it answers
 * and sent back out of the interface (XDP_TX), with its checksums; and the options of
 * the SYN it offers back (proxy mode, tcp_options.h).
 *
 * The frame keeps its Ethernet header (addresses swapped: the answer goes back to the
 * host that sent the SYN, which synauth.h made sure is a unicast one) and its VLAN tags;
 * the IP header becomes a bare one (IPv4 without options, IPv6 without extension
 * headers), the TCP header follows it, and the frame is cut to that. It only shrinks:
 * XDP tail room is scarce on some drivers.
 */
#ifndef LEVEE_SYNACK_H
#define LEVEE_SYNACK_H

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
#include "maps.h"
#include "syncookie.h"
#include "tcp_options.h"

#define LV_SYNACK_TTL 64

/* Where a SYN's headers may be for levee to answer it: the IP header within the first
 * 256 bytes (Ethernet and two tags), the TCP header within the first 4 KB. The offsets
 * are checked against these before use, never masked into range: a header beyond them
 * is refused (LV_R_EXT_DEPTH), so that every byte levee reads is the byte the kernel
 * reads. */
#define LV_SYN_L3_MAX 0xff
#define LV_SYN_L4_MAX 0xfff

/* An offset already checked against `max` (a power of two less one), masked so that
 * the verifier sees the bound too: the mask never changes it. (The barrier keeps the
 * compiler from dropping a mask it knows to be redundant.) */
static __always_inline __u32 lv_within(__u32 off, __u32 max)
{
	barrier_var(off);
	return off & max;
}

/* Fold a one's complement sum of 16-bit words to 16 bits, complemented: a checksum. */
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

/* The sum of an IPv6 address's words. */
static __always_inline __u64 lv_csum128(const __u32 a[4])
{
	return lv_csum32(a[0]) + lv_csum32(a[1]) + lv_csum32(a[2]) + lv_csum32(a[3]);
}

/* What goes into a SYN-ACK's TCP header: the numbers and the options (network order). */
struct lv_synack {
	__u32 seq, ack;
	__u32 nopt; /* words of opt */
	__u32 opt[LV_SYNACK_OPT_WORDS];
};

/* The IPv4 header of the answer, at `l3`: the SYN's addresses swapped. Returns the
 * TCP pseudo-header's sum, or -1 if the frame does not hold it. */
static __always_inline __s64 lv_synack_ip4(void *data, void *end, __u32 l3, __u32 tcp_len)
{
	struct iphdr *ip = data + lv_within(l3, LV_SYN_L3_MAX);
	__u32 src, dst;
	__u64 sum;

	if ((void *)(ip + 1) > end)
		return -1;
	src = ip->daddr;
	dst = ip->saddr;
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
	return (__s64)(lv_csum32(src) + lv_csum32(dst) + bpf_htons(IPPROTO_TCP) + bpf_htons(tcp_len));
}

/* The IPv6 header of the answer, at `l3`, likewise. */
static __always_inline __s64 lv_synack_ip6(void *data, void *end, __u32 l3, __u32 tcp_len)
{
	struct ipv6hdr *ip6 = data + lv_within(l3, LV_SYN_L3_MAX);
	__u32 src[4], dst[4];

	if ((void *)(ip6 + 1) > end)
		return -1;
	__builtin_memcpy(src, &ip6->daddr, sizeof(src));
	__builtin_memcpy(dst, &ip6->saddr, sizeof(dst));
	*(__u32 *)ip6 = bpf_htonl(0x60000000); /* version 6, no traffic class or flow label */
	ip6->payload_len = bpf_htons(tcp_len);
	ip6->nexthdr = IPPROTO_TCP;
	ip6->hop_limit = LV_SYNACK_TTL;
	__builtin_memcpy(&ip6->saddr, src, sizeof(src));
	__builtin_memcpy(&ip6->daddr, dst, sizeof(dst));
	return (__s64)(lv_csum128(src) + lv_csum128(dst) + bpf_htons(IPPROTO_TCP) + bpf_htons(tcp_len));
}

/* The answer's TCP header at `tcp_at`, from the SYN's ports, with its checksum over
 * the pseudo-header's sum `sum`. 0, or -1 if the frame does not hold it. */
static __always_inline int lv_synack_tcp(void *data, void *end, __u32 tcp_at, __u16 sport, __u16 dport,
					 const struct lv_synack *sa, __u32 tcp_len, __u64 sum)
{
	struct tcphdr *out = data + lv_within(tcp_at, LV_SYN_L4_MAX);
	__u16 flags = bpf_htons((tcp_len / 4) << 12 | 0x12); /* data offset, SYN and ACK */
	__u32 *opt, i;

	if ((void *)(out + 1) > end)
		return -1;
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
	return 0;
}

/*
 * Turn the SYN (IP header at `l3`, TCP header at `l4`, both checked against the
 * LV_SYN_*_MAX) into its SYN-ACK, in place, and cut the frame to it. Returns 0, or -1
 * if the frame does not hold it (the caller makes sure it does).
 */
static __always_inline int lv_synack_write(struct xdp_md *ctx, __u8 family, __u32 l3, __u32 l4,
					   const struct lv_synack *sa)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 tcp_len = sizeof(struct tcphdr) + 4 * (sa->nopt & 7), tcp_at;
	struct ethhdr *eth = data;
	struct tcphdr *th;
	__u16 sport, dport;
	__u8 mac[ETH_ALEN];
	__s64 sum;
	__u64 frame;
	int len;

	if (sa->nopt > LV_SYNACK_OPT_WORDS || l3 > LV_SYN_L3_MAX || l4 > LV_SYN_L4_MAX)
		return -1;
	th = data + lv_within(l4, LV_SYN_L4_MAX);
	if ((void *)(eth + 1) > end || (void *)(th + 1) > end)
		return -1;
	sport = th->source;
	dport = th->dest;
	__builtin_memcpy(mac, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, mac, ETH_ALEN);

	/* The TCP header goes right after the IP header: where the SYN's was, or before
	 * it when the SYN had IP options or extension headers. */
	if (family == LV_AF_INET) {
		sum = lv_synack_ip4(data, end, l3, tcp_len);
		tcp_at = l3 + sizeof(struct iphdr);
	} else {
		sum = lv_synack_ip6(data, end, l3, tcp_len);
		tcp_at = l3 + sizeof(struct ipv6hdr);
	}
	if (sum < 0 || lv_synack_tcp(data, end, tcp_at, sport, dport, sa, tcp_len, (__u64)sum))
		return -1;

	frame = end - data;
	barrier_var(frame); /* a length, not pointer arithmetic the verifier refuses */
	len = (int)(tcp_at + tcp_len) - (int)frame;
	if (len < 0 && bpf_xdp_adjust_tail(ctx, len))
		return -1;
	return 0;
}

/* This CPU's scratch words for a SYN's TCP options, which bpf_loop's steps walk: off
 * the stack, which a chain of calls shares. */
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

#endif /* LEVEE_SYNACK_H */
