// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * benchrx.bpf.c - the receivers levee is measured against end to end (scripts/bench.sh).
 * Each one counts every frame per CPU, the way levee counts its verdicts, so a
 * receiver's rate is its own counter's delta over the flood's wall time:
 *
 *   rx_drop   count, XDP_DROP: the ceiling of any XDP filter on this path
 *   rx_floor  parse to the source (levee's parser), one LRU lookup (insert on a miss),
 *             one bpf_ktime_get_ns, count, XDP_DROP: the floor of any exact
 *             per-source limiter (progbench's bench_floor plus the count)
 *   rx_pass   count, XDP_PASS: in front of nftables/iptables, since live frames
 *             redirected into a veth vanish unless the peer runs an XDP program
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "levee_abi.h"
#include "parse.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Frames seen, one slot per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rx_count SEC(".maps");

/* Per-source map of the floor, same key and value as levee's lv_state. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1 << 16);
	__type(key, struct lv_key);
	__type(value, struct lv_state);
} rx_lru SEC(".maps");

/* Keeps the floor's clock read and lookup from being optimised away. */
volatile __u64 rx_sink;

static __always_inline void rx_count_one(void)
{
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&rx_count, &zero);

	if (c)
		(*c)++;
}

SEC("xdp")
int rx_drop(struct xdp_md *ctx)
{
	rx_count_one();
	return XDP_DROP;
}

SEC("xdp")
int rx_pass(struct xdp_md *ctx)
{
	rx_count_one();
	return XDP_PASS;
}

SEC("xdp")
int rx_floor(struct xdp_md *ctx)
{
	struct lv_cursor cur = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	struct lv_key key = {};
	struct lv_packet pkt;
	struct lv_state *st;
	int proto, err = -1;
	__u64 now;

	rx_count_one();
	proto = lv_parse_eth(&cur);
	if (proto == bpf_htons(ETH_P_IP))
		err = lv_parse_ipv4(&cur, &pkt);
	else if (proto == bpf_htons(ETH_P_IPV6))
		err = lv_parse_ipv6(&cur, &pkt);
	if (err)
		return XDP_DROP;
	__builtin_memcpy(key.addr, pkt.addr, sizeof(key.addr));
	key.family = pkt.family;
	st = bpf_map_lookup_elem(&rx_lru, &key);
	now = bpf_ktime_get_ns();
	if (st) {
		rx_sink = now - st->ready_ns;
	} else {
		struct lv_state init = { .ready_ns = now };

		bpf_map_update_elem(&rx_lru, &key, &init, BPF_NOEXIST);
	}
	return XDP_DROP;
}
