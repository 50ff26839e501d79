// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * progbench.bpf.c - programs levee is measured against, and variants of levee that
 * BPF_PROG_TEST_RUN cannot produce from one frame.
 *
 * It includes the datapath itself, so bench_levee_newsrc runs exactly levee's code
 * after rewriting the source address.
 */
#include "../../bpf/levee.bpf.c"

/* Results the compiler must not discard. */
volatile __u64 bench_sink;
/* bench_levee_remade: the frame every run starts from (the previous run may have turned
 * it into its answer and cut it), set by the controller before loading. */
#define BENCH_FRAME_LEN 64
__u8 bench_frame[BENCH_FRAME_LEN];
/* Next source address of bench_levee_newsrc and bench_levee_remade (host order). */
__u32 bench_next_src = 0xc6120000; /* 198.18.0.0 */
/* bench_levee_newsrc's sources: (next & mask) | base, all of one network if asked. */
__u32 bench_src_mask = 0xffffffff;
__u32 bench_src_base = 0;
/* bench_levee_rr: sources round robin, bench_rr_count of them from 198.18.64.0. */
__u32 bench_rr_next = 0;
__u32 bench_rr_count = 10000;

/* Per-source map of the floor program, same key and value as levee's. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1 << 16);
	__type(key, struct lv_key);
	__type(value, struct lv_state);
} bench_lru SEC(".maps");

/* Parse to the source address exactly as levee does: 0, or the reason it stops. */
static __always_inline int bench_parse_src(struct xdp_md *ctx, struct lv_packet *pkt)
{
	struct lv_cursor cur = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};

	return lv_parse(&cur, pkt);
}

/* A bare XDP_DROP: the cost of running any XDP program at all. */
SEC("xdp")
int bench_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* Parse to the source address, then drop. */
SEC("xdp")
int bench_parse(struct xdp_md *ctx)
{
	struct lv_packet pkt;

	if (bench_parse_src(ctx, &pkt) == 0)
		bench_sink = pkt.addr[3];
	return XDP_DROP;
}

/* The floor of any per-source limiter: parse, one LRU lookup, one clock read, drop. */
SEC("xdp")
int bench_floor(struct xdp_md *ctx)
{
	struct lv_packet pkt;
	struct lv_key key = {};
	struct lv_state *st;
	__u64 now;

	if (bench_parse_src(ctx, &pkt) != 0)
		return XDP_DROP;
	__builtin_memcpy(key.addr, pkt.addr, sizeof(key.addr));
	key.family = pkt.family;
	st = bpf_map_lookup_elem(&bench_lru, &key);
	now = bpf_ktime_get_ns();
	if (st)
		bench_sink = now - st->ready_ns;
	return XDP_DROP;
}

/* levee with bench_rr_count IPv4 sources round robin (untagged IPv4 frames only): a
 * botnet of real addresses, each over its limit. */
SEC("xdp")
int bench_levee_rr(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *iph = data + sizeof(struct ethhdr);
	__u32 n = bench_rr_next++;

	if ((void *)(iph + 1) > end)
		return XDP_ABORTED;
	if (bench_rr_next >= bench_rr_count)
		bench_rr_next = 0;
	iph->saddr = bpf_htonl(0xc6124000 + n);
	return levee_main(ctx);
}

/* levee with a new IPv4 source on every packet (untagged IPv4 frames only). */
SEC("xdp")
int bench_levee_newsrc(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *iph = data + sizeof(struct ethhdr);

	if ((void *)(iph + 1) > end)
		return XDP_ABORTED;
	iph->saddr = bpf_htonl((bench_next_src++ & bench_src_mask) | bench_src_base);
	return levee_main(ctx);
}

/* The next source into an IPv4 header, and a TCP checksum after it kept right (RFC 1624:
 * the pseudo-header holds the source), as SYN authentication checks it. */
/* A checksum at `check` after a 32-bit word it covers went from `old` to `now`
 * (RFC 1624's incremental update). */
static __always_inline void bench_csum_replace(__u16 *check, __u32 old, __u32 now)
{
	__u32 sum = (__u16) ~*check + (__u16) ~(old & 0xffff) + (__u16) ~(old >> 16) + (now & 0xffff) + (now >> 16);

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	*check = (__u16)~sum;
}

static __always_inline void bench_new_source(struct iphdr *iph, void *data, void *end)
{
	__u32 old = iph->saddr, now = bpf_htonl(bench_next_src++);
	__u16 *check = data + sizeof(struct ethhdr) + sizeof(struct iphdr) + 16;

	iph->saddr = now;
	bench_csum_replace(&iph->check, old, now); /* a SYN with a wrong header sum is not answered */
	if (iph->protocol != IPPROTO_TCP || (void *)(check + 1) > end)
		return;
	bench_csum_replace(check, old, now);
}

/* levee with a new IPv4 source on every packet, the frame made again from bench_frame
 * first: SYN authentication answers a SYN in place (a SYN-ACK, cut to its headers). */
SEC("xdp")
int bench_levee_remade(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	int len = end - data;
	struct iphdr *iph;

	if (len != BENCH_FRAME_LEN) {
		if (bpf_xdp_adjust_tail(ctx, BENCH_FRAME_LEN - len))
			return XDP_ABORTED;
		data = (void *)(long)ctx->data;
		end = (void *)(long)ctx->data_end;
	}
	if (data + BENCH_FRAME_LEN > end)
		return XDP_ABORTED;
	__builtin_memcpy(data, bench_frame, BENCH_FRAME_LEN);
	iph = data + sizeof(struct ethhdr);
	bench_new_source(iph, data, end);
	return levee_main(ctx);
}
