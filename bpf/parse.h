/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * parse.h - cursor parse helpers: Ethernet, up to two VLAN tags, IPv4, IPv6.
 *
 * Each helper takes the cursor, checks bounds once, advances it, and returns the next
 * protocol or a negative lv_reason-style code; lv_parse() runs them for the entry and
 * returns the reason itself (0: parsed). Only the uapi headers are needed.
 *
 * No legal header is a way around a limit: the source address sits at a fixed offset
 * whatever follows it, so IPv4 options, IPv6 extension headers, fragments and VLAN tags
 * only change which class a packet falls in, never whether it is limited. What levee
 * cannot parse (a third VLAN tag, more than LV_MAX_EXT_HDRS IPv6 extension headers) is
 * dropped and counted, not passed; so is what the stack would discard unread (a
 * hop-by-hop header anywhere but first).
 */
#ifndef LEVEE_PARSE_H
#define LEVEE_PARSE_H

#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"

struct lv_cursor {
	void *pos;
	void *end;
};

/* Advance the cursor over `len` bytes and return where they start, or NULL if the
 * frame is shorter. The one bounds-check idiom every parser below uses. */
static __always_inline void *lv_pull(struct lv_cursor *c, __u32 len)
{
	void *p = c->pos;

	if (p + len > c->end)
		return NULL;
	c->pos = p + len;
	return p;
}

struct lv_vlan_hdr {
	__be16 tci;
	__be16 encap_proto;
};

/* What the datapath needs of a packet: who sent it, and what kind of traffic it is. */
struct lv_packet {
	__u32 addr[4];       /* source, IPv4-mapped for IPv4, network byte order */
	__u8 family;         /* enum lv_family */
	__u8 kind : 4;       /* enum lv_l4_kind */
	__u8 more_frags : 1; /* a fragment with more to come (IPv4 MF, IPv6 M): no whole segment
			      * (a bit beside kind: the packet is on the stack, which is full) */
	__u16 dport;         /* destination port, host order, for kinds < LV_L4_PORTED */
	__u16 sport;         /* source port, likewise */
	__u16 l4_tail;       /* bytes from the transport header to the frame's end, likewise */
};

#define LV_MAX_VLAN_TAGS 2

static __always_inline int lv_is_vlan(__be16 proto)
{
	return proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD);
}

/*
 * An IEEE 802.3 frame: the type field is its length (below ETH_P_802_3_MIN). A runt that
 * a driver padded with zeros up to the Ethernet minimum reads as one of length 0, so a
 * length with no room for the LLC header (3 bytes) or beyond the frame is a truncated
 * frame, not a frame of another protocol.
 */
static __always_inline int lv_eth_payload(const struct lv_cursor *c, __be16 proto)
{
	__u32 len = bpf_ntohs(proto);

	if (len < ETH_P_802_3_MIN && (len < 3 || c->pos + len > c->end))
		return -LV_R_MALFORMED;
	return proto;
}

/*
 * Ethernet and up to two VLAN tags (802.1Q and 802.1ad, in any order).
 * Returns the ethertype of the payload (network order) or -reason.
 * A third tag is not parsed: the frame is dropped (LV_R_VLAN_DEPTH) rather than
 * passed, because passing it unparsed would let a stacked-VLAN host be flooded past
 * every limit.
 */
static __always_inline int lv_parse_eth(struct lv_cursor *c)
{
	struct ethhdr *eth = lv_pull(c, sizeof(*eth));
	__be16 proto;

	if (!eth)
		return -LV_R_MALFORMED;
	proto = eth->h_proto;

#pragma unroll
	for (int i = 0; i < LV_MAX_VLAN_TAGS; i++) {
		struct lv_vlan_hdr *vh;

		if (!lv_is_vlan(proto))
			return lv_eth_payload(c, proto);
		vh = lv_pull(c, sizeof(*vh));
		if (!vh)
			return -LV_R_MALFORMED;
		proto = vh->encap_proto;
	}
	if (lv_is_vlan(proto))
		return -LV_R_VLAN_DEPTH;
	return lv_eth_payload(c, proto);
}

/* A TCP or UDP header of `len` bytes, which must lie within the IP payload (`avail`),
 * not in Ethernet padding: its destination port (at the same offset in both) into
 * pkt->dport. NULL if the frame or the payload is shorter: malformed. */
static __always_inline void *lv_pull_ported(struct lv_cursor *c, __u32 len, __u32 avail, struct lv_packet *pkt)
{
	struct udphdr *h = lv_pull(c, len);

	if (!h || avail < len)
		return NULL;
	pkt->dport = bpf_ntohs(h->dest);
	pkt->sport = bpf_ntohs(h->source);
	pkt->l4_tail = (__u16)(c->end - (void *)h);
	return h;
}

/*
 * The transport header: `proto` as the IP header (or the last extension header) names
 * it, `avail` bytes of IP payload left, `nonfirst` for a fragment that does not start
 * the datagram (it carries no transport header). A first fragment too short to hold
 * its ports is malformed (RFC 1858's tiny fragments).
 */
static __always_inline int lv_parse_l4(struct lv_cursor *c, __u8 proto, __u32 avail, int nonfirst,
				       struct lv_packet *pkt)
{
	struct tcphdr *th;

	pkt->dport = 0;
	pkt->sport = 0;
	pkt->l4_tail = 0;
	switch (proto) {
	case IPPROTO_TCP:
		if (nonfirst) {
			pkt->kind = LV_L4_TCP_FRAG;
			return 0;
		}
		th = lv_pull_ported(c, sizeof(*th), avail, pkt);
		if (!th)
			return -LV_R_MALFORMED;
		pkt->kind = th->syn && !th->ack ? LV_L4_TCP_SYN : LV_L4_TCP;
		return 0;
	case IPPROTO_UDP:
		if (nonfirst) {
			pkt->kind = LV_L4_UDP_FRAG;
			return 0;
		}
		if (!lv_pull_ported(c, sizeof(struct udphdr), avail, pkt))
			return -LV_R_MALFORMED;
		pkt->kind = LV_L4_UDP;
		return 0;
	case IPPROTO_ICMP:
		pkt->kind = pkt->family == LV_AF_INET ? LV_L4_ICMP : LV_L4_OTHER;
		return 0;
	case IPPROTO_ICMPV6:
		pkt->kind = pkt->family == LV_AF_INET6 ? LV_L4_ICMP6 : LV_L4_OTHER;
		return 0;
	default:
		pkt->kind = LV_L4_OTHER;
		return 0;
	}
}

/*
 * IPv4: version 4, IHL >= 5 and within the frame, total length >= IHL and within the
 * frame (Ethernet padding may follow it). Options are skipped. Fragments carry the
 * source of the datagram and are limited like any other packet; each fragment counts
 * as a packet, and one that does not start its datagram is classified by protocol.
 */
static __always_inline int lv_parse_ipv4(struct lv_cursor *c, struct lv_packet *pkt)
{
	struct iphdr *iph = lv_pull(c, sizeof(*iph));
	__u32 hdr_len, tot_len;

	if (!iph || iph->version != 4 || iph->ihl < 5)
		return -LV_R_MALFORMED;
	hdr_len = iph->ihl * 4;
	tot_len = bpf_ntohs(iph->tot_len);
	if (tot_len < hdr_len || (void *)iph + tot_len > c->end)
		return -LV_R_MALFORMED;
	if (hdr_len > sizeof(*iph) && !lv_pull(c, hdr_len - sizeof(*iph)))
		return -LV_R_MALFORMED;

	pkt->family = LV_AF_INET;
	pkt->addr[0] = 0;
	pkt->addr[1] = 0;
	pkt->addr[2] = bpf_htonl(0xffff);
	pkt->addr[3] = iph->saddr;
	pkt->more_frags = (bpf_ntohs(iph->frag_off) & 0x2000) != 0;
	return lv_parse_l4(c, iph->protocol, tot_len - hdr_len, (bpf_ntohs(iph->frag_off) & 0x1fff) != 0, pkt);
}

/* IPv6 extension headers levee walks to find the transport header. */
#define LV_MAX_EXT_HDRS 8
#define LV_NEXTHDR_MOBILITY 135
#define LV_NEXTHDR_HIP 139
#define LV_NEXTHDR_SHIM6 140

struct lv_ip6_frag {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off; /* offset in 8-byte units << 3 | M */
	__be32 id;
};

/* An extension header levee walks over to find the transport header (the fragment
 * header aside: it may end the walk). */
static __always_inline int lv_ipv6_ext(__u8 nh)
{
	switch (nh) {
	case IPPROTO_HOPOPTS:
	case IPPROTO_ROUTING:
	case IPPROTO_DSTOPTS:
	case LV_NEXTHDR_MOBILITY:
	case LV_NEXTHDR_HIP:
	case LV_NEXTHDR_SHIM6:
	case IPPROTO_AH:
		return 1;
	default:
		return 0;
	}
}

/*
 * IPv6: version 6, payload within the frame, then up to LV_MAX_EXT_HDRS extension
 * headers to the transport header. A longer chain is dropped (LV_R_EXT_DEPTH): its
 * class cannot be known, and passing it unclassified would let it pick the loosest
 * limit. A payload length of 0 (a jumbogram) is malformed here: XDP frames never
 * carry one.
 */
static __always_inline int lv_parse_ipv6(struct lv_cursor *c, struct lv_packet *pkt)
{
	struct ipv6hdr *ip6 = lv_pull(c, sizeof(*ip6));
	__u32 avail;
	__u8 nh;

	if (!ip6 || ip6->version != 6)
		return -LV_R_MALFORMED;
	avail = bpf_ntohs(ip6->payload_len);
	if (c->pos + avail > c->end)
		return -LV_R_MALFORMED;

	pkt->family = LV_AF_INET6;
	pkt->more_frags = 0;
	__builtin_memcpy(pkt->addr, &ip6->saddr, sizeof(pkt->addr));
	nh = ip6->nexthdr;

#pragma unroll
	for (int i = 0; i < LV_MAX_EXT_HDRS; i++) {
		struct ipv6_opt_hdr *oh;
		struct lv_ip6_frag *fh;
		__u32 len;

		/* RFC 8200 4.1: hop-by-hop options only right after the IPv6 header; the
		 * stack discards a packet with them anywhere else (a parameter problem). */
		if (i > 0 && nh == IPPROTO_HOPOPTS)
			return -LV_R_MALFORMED;
		if (lv_ipv6_ext(nh)) {
			oh = lv_pull(c, sizeof(*oh));
			if (!oh)
				return -LV_R_MALFORMED;
			len = nh == IPPROTO_AH ? (oh->hdrlen + 2) * 4 : (oh->hdrlen + 1) * 8;
			if (len > avail || !lv_pull(c, len - sizeof(*oh)))
				return -LV_R_MALFORMED;
			avail -= len;
			nh = oh->nexthdr;
		} else if (nh == IPPROTO_FRAGMENT) {
			fh = lv_pull(c, sizeof(*fh));
			if (!fh || avail < sizeof(*fh))
				return -LV_R_MALFORMED;
			avail -= sizeof(*fh);
			pkt->more_frags |= bpf_ntohs(fh->frag_off) & 1; /* any of them: a second is bogus */
			if (bpf_ntohs(fh->frag_off) & ~7)
				return lv_parse_l4(c, fh->nexthdr, avail, 1, pkt);
			nh = fh->nexthdr;
		} else {
			return lv_parse_l4(c, nh, avail, 0, pkt);
		}
	}
	if (nh == IPPROTO_FRAGMENT || lv_ipv6_ext(nh))
		return -LV_R_EXT_DEPTH;
	return lv_parse_l4(c, nh, avail, 0, pkt);
}

/*
 * A frame up to its transport header: LV_R_CONFORMING (0) with *pkt filled in, or the
 * reason it goes no further: not IP (passed, never limited), or not parsed (dropped).
 */
static __always_inline __u32 lv_parse(struct lv_cursor *c, struct lv_packet *pkt)
{
	int proto = lv_parse_eth(c), err;

	if (proto < 0)
		return -proto;
	if (proto == bpf_htons(ETH_P_IP))
		err = lv_parse_ipv4(c, pkt);
	else if (proto == bpf_htons(ETH_P_IPV6))
		err = lv_parse_ipv6(c, pkt);
	else
		return LV_R_NOT_IP;
	return -err;
}

#endif /* LEVEE_PARSE_H */
