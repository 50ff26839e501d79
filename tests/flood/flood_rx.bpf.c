// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * flood_rx.bpf.c - the receiving end of the levee-flood tests. Counts every frame the
 * veth peer receives (and the 802.1Q-tagged ones apart), then
 *   rx_pass: strips one 802.1Q tag and passes the frame to the stack, which checks the
 *            IPv4/UDP/TCP/ICMP checksums (this kernel has no 8021q module, so a VLAN
 *            interface cannot take tagged frames in);
 *   rx_drop: drops it.
 * An XDP program on the peer is also what lets live frames arrive at all.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

enum { RX_ALL = 0, RX_TAGGED = 1, RX_MAX };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RX_MAX);
	__type(key, __u32);
	__type(value, __u64);
} rx_frames SEC(".maps");

__u32 last_vid = 0; /* VLAN id of the last tagged frame */

static __always_inline void count(__u32 key)
{
	__u64 *c = bpf_map_lookup_elem(&rx_frames, &key);

	if (c)
		(*c)++;
}

SEC("xdp")
int rx_pass(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u8 macs[12];

	count(RX_ALL);
	if ((void *)(eth + 1) + 4 > end || eth->h_proto != bpf_htons(ETH_P_8021Q))
		return XDP_PASS;
	count(RX_TAGGED);
	last_vid = bpf_ntohs(*(__be16 *)(eth + 1)) & 0x0fff;
	__builtin_memcpy(macs, data, 12);
	if (bpf_xdp_adjust_head(ctx, 4))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + 12 > end)
		return XDP_DROP;
	__builtin_memcpy(data, macs, 12);
	return XDP_PASS;
}

SEC("xdp")
int rx_drop(struct xdp_md *ctx)
{
	count(RX_ALL);
	return XDP_DROP;
}
