/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * parse.h - cursor parse helpers: Ethernet, up to two VLAN tags, IPv4, IPv6.
 *
 * Each helper takes the cursor, checks bounds once, advances it, and returns the next
 * protocol or a negative lv_reason-style code. Only the uapi headers are needed.
 */
#ifndef LEVEE_PARSE_H
#define LEVEE_PARSE_H

#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
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

/* What the datapath needs of a packet: who sent it. */
struct lv_packet {
	__u32 addr[4]; /* source, IPv4-mapped for IPv4, network byte order */
	__u8 family;   /* enum lv_family */
	__u8 l4proto;  /* IPPROTO_* of the first header after IP (not yet used) */
};

#define LV_MAX_VLAN_TAGS 2

static __always_inline int lv_is_vlan(__be16 proto)
{
	return proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD);
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
			return proto;
		vh = lv_pull(c, sizeof(*vh));
		if (!vh)
			return -LV_R_MALFORMED;
		proto = vh->encap_proto;
	}
	if (lv_is_vlan(proto))
		return -LV_R_VLAN_DEPTH;
	return proto;
}

/*
 * IPv4: version 4, IHL >= 5 and within the frame, total length >= IHL and within the
 * frame (Ethernet padding may follow it). Options are skipped, never a way around the
 * limit: the source address sits at a fixed offset. Fragments carry the source of the
 * datagram and are limited like any other packet; each fragment counts as a packet.
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
	pkt->l4proto = iph->protocol;
	return 0;
}

/*
 * IPv6: version 6 and payload within the frame. Extension headers are not walked: the
 * source address sits at a fixed offset, so they cannot carry a packet past the limit.
 * A payload length of 0 is accepted as the kernel does (jumbogram or empty).
 */
static __always_inline int lv_parse_ipv6(struct lv_cursor *c, struct lv_packet *pkt)
{
	struct ipv6hdr *ip6 = lv_pull(c, sizeof(*ip6));

	if (!ip6 || ip6->version != 6)
		return -LV_R_MALFORMED;
	if (c->pos + bpf_ntohs(ip6->payload_len) > c->end)
		return -LV_R_MALFORMED;

	pkt->family = LV_AF_INET6;
	__builtin_memcpy(pkt->addr, &ip6->saddr, sizeof(pkt->addr));
	pkt->l4proto = ip6->nexthdr;
	return 0;
}

#endif /* LEVEE_PARSE_H */
