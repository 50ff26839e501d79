/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * syn_where.h - what a SYN is before levee answers it: from and to addresses a stack
 * would answer at all, and to what on this host: a listener here, a port here with
 * none, a host behind this one (forwarded), or nothing this host owns or forwards.
 *
 * levee answers a SYN only where the host's own stack would: from a unicast address
 * that is not loopback or zero, through unicast MACs (the answer goes back to the
 * sender's MAC: never to a group), to an address this host owns (with a listener on
 * the port: a scan during an attack sees the ports that are open, not every port) or
 * forwards (reset mode: the listener is behind it). The routing table says which (a
 * route lookup, bpf_fib_lookup, as the stack makes for the packet: local, forwarded,
 * or neither), the socket table whether a port listens (bpf_skc_lookup_tcp, as the
 * stack's own lookup): both followed live, with each CPU keeping its last answer for a
 * few milliseconds (struct lv_syn_where), so that a flood to one port asks once.
 *
 * The kernel's route lookup (bpf_fib_lookup) answers only on an interface that forwards;
 * on one that does not (most servers) the host's own addresses are what the controller
 * wrote into lv_local (levee run follows them). Where it says "not forwarded" (a local
 * route, or any link-local address, which it does not look up), lv_local decides too:
 * a SYN from fe80::/10 to an address of nobody's is not the host's to answer. Known limit, where the interface
 * forwards: the route lookup does not tell the host's own addresses from its subnets'
 * directed broadcast addresses (both are "local" to it). A SYN to a directed broadcast
 * address that comes to levee's unicast MAC is then answered as one to the host; the
 * answer goes to the one unicast MAC it came from, so it is never a broadcast.
 */
#ifndef LEVEE_SYN_WHERE_H
#define LEVEE_SYN_WHERE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "maps.h"
#include "syn_cells.h"

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

/* What the destination of a SYN is to this host (struct lv_syn_where's verdict). */
enum lv_where {
	LV_WHERE_LISTENER = 0,   /* a listener of this host: proxy mode can hand it the connection */
	LV_WHERE_NO_HANDOFF = 1, /* a listener that takes no hand-off (MPTCP): reset mode */
	LV_WHERE_CLOSED = 2,     /* an address of this host, a port without a listener */
	LV_WHERE_FORWARDED = 3,  /* a host this one routes to: reset mode */
	LV_WHERE_NOT_OURS = 4,   /* neither owned nor forwarded: the stack would drop it */
};

/* Is an IPv4 address (network order) one a stack answers or answers from: not zero
 * (0/8), loopback (127/8), multicast or reserved (224/4, 240/4, the broadcast)? */
static __always_inline int lv_unicast4(__u32 a)
{
	__u32 first = bpf_ntohl(a) >> 24;

	return first != 0 && first != 127 && first < 224;
}

/* ...an IPv6 one: not unspecified, loopback, multicast (ff00::/8) or IPv4-mapped. */
static __always_inline int lv_unicast6(const __u32 a[4])
{
	if ((bpf_ntohl(a[0]) >> 24) == 0xff)
		return 0;
	if (a[0] || a[1])
		return 1;
	if (a[2] == bpf_htonl(0xffff))
		return 0;
	return a[2] || (a[3] && a[3] != bpf_htonl(1));
}

/* Is the frame's Ethernet header from and to unicast MACs (the group bit clear)? */
static __always_inline int lv_unicast_macs(const struct ethhdr *eth)
{
	return !((eth->h_source[0] | eth->h_dest[0]) & 1);
}

/* Is the address (as lv_packet holds addresses) one of the host's own, as the controller
 * last wrote them (lv_local)? Any is, while it has written none. The key in `k`, a
 * scratch of this CPU's. */
static __always_inline int lv_host_owns(const struct lv_control *ctl, struct lv_local_key *k, __u32 d0, __u32 d1,
					__u32 d2, __u32 d3)
{
	if (!ctl->local_known)
		return 1;
	k->prefixlen = 128;
	k->addr[0] = d0;
	k->addr[1] = d1;
	k->addr[2] = d2;
	k->addr[3] = d3;
	return bpf_map_lookup_elem(&lv_local, k) != NULL;
}

/* The routing table's word on a SYN's destination: LV_WHERE_LISTENER for the host's
 * own (the listener is asked next), LV_WHERE_FORWARDED, or LV_WHERE_NOT_OURS. The
 * lookup's parameters in `p`, a scratch of this CPU's. The kernel's route lookup
 * answers only where the interface forwards (else BPF_FIB_LKUP_RET_FWD_DISABLED, for
 * the host's own addresses too): there lv_local says whether the address is the host's. */
static __always_inline __u8 lv_where_route(struct xdp_md *ctx, const struct lv_control *ctl, struct bpf_fib_lookup *p,
					   __u8 family, const void *ip, __u32 d0, __u32 d1, __u32 d2, __u32 d3)
{
	long rc;

	__builtin_memset(p, 0, sizeof(*p));
	p->l4_protocol = IPPROTO_TCP;
	p->ifindex = ctx->ingress_ifindex;
	if (family == LV_AF_INET) {
		p->family = AF_INET;
		p->ipv4_src = ((const struct iphdr *)ip)->saddr;
		p->ipv4_dst = ((const struct iphdr *)ip)->daddr;
	} else {
		p->family = AF_INET6;
		__builtin_memcpy(p->ipv6_src, &((const struct ipv6hdr *)ip)->saddr, sizeof(p->ipv6_src));
		__builtin_memcpy(p->ipv6_dst, &((const struct ipv6hdr *)ip)->daddr, sizeof(p->ipv6_dst));
	}
	rc = bpf_fib_lookup(ctx, p, sizeof(*p), 0);
	/* NOT_FWDED is a local route, but also any link-local source or destination (the
	 * lookup stops there, before the routes): lv_local decides both. */
	if (rc == BPF_FIB_LKUP_RET_FWD_DISABLED || rc == BPF_FIB_LKUP_RET_NOT_FWDED)
		return lv_host_owns(ctl, (struct lv_local_key *)p, d0, d1, d2, d3) ? LV_WHERE_LISTENER
										   : LV_WHERE_NOT_OURS;
	/* Forwarded out of another interface: a host behind this one. Back out of the one it
	 * came in by, it is no host levee protects, only a packet sent to the wrong MAC. */
	if ((rc == BPF_FIB_LKUP_RET_SUCCESS || rc == BPF_FIB_LKUP_RET_NO_NEIGH || rc == BPF_FIB_LKUP_RET_FRAG_NEEDED) &&
	    p->ifindex != ctx->ingress_ifindex)
		return LV_WHERE_FORWARDED;
	return LV_WHERE_NOT_OURS;
}

/* The socket table's word on a port of the host's own address: a listener (one that
 * takes a hand-off, or an MPTCP one that does not), or none. Asked as for a new
 * connection from nowhere (source 0:0), so that an established one is not found
 * instead; the tuple in `t`, a scratch of this CPU's. */
static __always_inline __u8 lv_where_listener(struct xdp_md *ctx, struct bpf_sock_tuple *t, __u8 family, const void *ip,
					      __u16 dport)
{
	struct bpf_sock *sk;
	__u32 size;
	__u8 verdict;

	__builtin_memset(t, 0, sizeof(*t));
	if (family == LV_AF_INET) {
		t->ipv4.daddr = ((const struct iphdr *)ip)->daddr;
		t->ipv4.dport = dport;
		size = sizeof(t->ipv4);
	} else {
		__builtin_memcpy(t->ipv6.daddr, &((const struct ipv6hdr *)ip)->daddr, sizeof(t->ipv6.daddr));
		t->ipv6.dport = dport;
		size = sizeof(t->ipv6);
	}
	sk = bpf_skc_lookup_tcp(ctx, t, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return LV_WHERE_CLOSED;
	verdict = sk->state != BPF_TCP_LISTEN ? LV_WHERE_CLOSED
		  : bpf_skc_to_mptcp_sock(sk) ? LV_WHERE_NO_HANDOFF
					      : LV_WHERE_LISTENER;
	bpf_sk_release(sk);
	return verdict;
}

/*
 * What the destination of the SYN at `ip` (port `dport`, network order) is to this
 * host: this CPU's last answer while it is good and for the same destination, else
 * asked of the routing and socket tables and kept.
 */
static __always_inline __u8 lv_syn_where(struct xdp_md *ctx, struct lv_percpu *pc, const struct lv_control *ctl,
					 void *scratch, __u64 now, __u8 family, const void *ip, __u16 dport)
{
	struct lv_syn_where *w = &pc->where;
	const __u32 *d = family == LV_AF_INET ? &((const struct iphdr *)ip)->daddr
					      : ((const struct ipv6hdr *)ip)->daddr.in6_u.u6_addr32;
	__u32 d0 = family == LV_AF_INET ? 0 : d[0], d1 = family == LV_AF_INET ? 0 : d[1],
	      d2 = family == LV_AF_INET ? bpf_htonl(0xffff) : d[2], d3 = family == LV_AF_INET ? d[0] : d[3];
	__u8 verdict;

	/* Word by word, no copy: lv_syn_check()'s frame has little room. */
	if (w->until_ns > now && w->family == family && w->dport == bpf_ntohs(dport) &&
	    !((w->daddr[0] ^ d0) | (w->daddr[1] ^ d1) | (w->daddr[2] ^ d2) | (w->daddr[3] ^ d3)))
		return w->verdict;
	verdict = lv_where_route(ctx, ctl, scratch, family, ip, d0, d1, d2, d3);
	if (verdict == LV_WHERE_LISTENER)
		verdict = lv_where_listener(ctx, scratch, family, ip, dport);
	/* From a link-local source the route lookup stops before the routes: its word is
	 * the source's, not the destination's, and is not kept for other sources. */
	if (family == LV_AF_INET6 &&
	    (((const struct ipv6hdr *)ip)->saddr.in6_u.u6_addr32[0] & bpf_htonl(0xffc00000)) == bpf_htonl(0xfe800000))
		return verdict;
	w->daddr[0] = d0;
	w->daddr[1] = d1;
	w->daddr[2] = d2;
	w->daddr[3] = d3;
	w->dport = bpf_ntohs(dport);
	w->family = family;
	w->verdict = verdict;
	w->until_ns = now + LV_SYN_WHERE_NS;
	return verdict;
}

#endif /* LEVEE_SYN_WHERE_H */
