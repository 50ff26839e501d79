// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * peer_sink.bpf.c - the sender's end of the veth in the SYN authentication tests. What
 * levee answers with XDP_TX reaches this end only because it runs an XDP program
 * (veth wakes a peer for XDP frames only then). Answers to spoofed flood sources
 * (destinations in sink4 / sink6, set by the test) are dropped here, as a NIC would send
 * them away, instead of costing the sender's stack; everything else goes on to it.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Prefixes in network byte order, masks likewise; a zero mask matches nothing. */
const volatile __u32 sink4 = 0, sink4_mask = 0;
const volatile __u32 sink6_hi = 0, sink6_hi_mask = 0;     /* the first 32 bits of an IPv6 destination */
const volatile __u32 sink6_next = 0, sink6_next_mask = 0; /* the next 32 */

__u64 sunk = 0;

SEC("xdp")
int peer_sink(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) <= end && sink4_mask && (ip->daddr & sink4_mask) == sink4) {
			__sync_fetch_and_add(&sunk, 1);
			return XDP_DROP;
		}
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) <= end && sink6_hi_mask &&
		    (ip6->daddr.in6_u.u6_addr32[0] & sink6_hi_mask) == sink6_hi &&
		    (ip6->daddr.in6_u.u6_addr32[1] & sink6_next_mask) == sink6_next) {
			__sync_fetch_and_add(&sunk, 1);
			return XDP_DROP;
		}
	}
	return XDP_PASS;
}
