// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * flood.bpf.c - the frame pump behind `levee-flood --method live`.
 *
 * Userspace runs this program with BPF_PROG_TEST_RUN + BPF_F_TEST_XDP_LIVE_FRAMES on a
 * template frame that already has every length and checksum right for the template's
 * source address. Per frame the program writes a new source address (round robin from a
 * per-CPU counter, or random bits inside a prefix: flood_random()), recomputes the IPv4
 * header checksum and the transport checksum from the template's known-good values
 * (RFC 1624, eqn. 3), and redirects the frame out of the sender veth.
 *
 * Live frames recycle their pages without re-initialising them: a page comes back
 * holding whatever the receiver did to it (a VLAN tag popped, a TTL decremented, MACs
 * swapped). So every frame starts by restoring the template over its first
 * cfg_copy_len bytes (the whole frame up to 128 bytes, else the headers), and the
 * checksums are derived from the template's, never from what is in the buffer.
 *
 * Everything the program needs is in .rodata, frozen at load, so the verifier sees the
 * offsets as constants and drops the branches of the modes not in use.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

enum flood_mode {
	FLOOD_FIXED = 0,  /* template as is */
	FLOOD_RR = 1,     /* base + (counter % rr_count) in the last address word */
	FLOOD_RANDOM = 2, /* (base & ~mask) | (random & mask), word by word */
};

const volatile __u32 cfg_ifindex = 0;
const volatile __u32 cfg_mode = FLOOD_FIXED;
const volatile __u32 cfg_v6 = 0;
const volatile __u32 cfg_src_off = 0;     /* offset of the source address in the frame */
const volatile __u32 cfg_ip_csum_off = 0; /* IPv4 header checksum; 0 = none (IPv6) */
const volatile __u32 cfg_l4_csum_off = 0; /* transport checksum; 0 = not address-dependent */
const volatile __u32 cfg_l4_udp = 0;      /* a computed 0 goes on the wire as 0xffff */
const volatile __u32 cfg_rr_count = 1;
/* Template source address, network byte order. */
const volatile __u32 cfg_base[4] = {};
/* Random bits per word, network byte order (FLOOD_RANDOM). */
const volatile __u32 cfg_mask[4] = {};
/* The template: the first cfg_copy_len bytes are written over every frame. */
const volatile __u32 cfg_copy_len = 0;
const volatile __u64 cfg_tmpl[16] = {};
/* One's complement sums of ~checksum + ~(template source words), host order. */
const volatile __u32 cfg_ip_csum_base = 0;
const volatile __u32 cfg_l4_csum_base = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} flood_rr SEC(".maps");

/* The random mode's per-CPU generator state (flood_random()). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} flood_rng SEC(".maps");

#define FLOOD_MAX_OFF 128 /* Ethernet + 2 VLAN tags + IPv6 + TCP is far below */

static __always_inline __u32 fold_add_be32(__u32 sum, __u32 be_word)
{
	__u32 w = bpf_ntohl(be_word);

	return sum + (w >> 16) + (w & 0xffff);
}

static __always_inline __u16 csum_finish(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

#define FLOOD_COPY_MAX 128

static __always_inline int restore_template(void *data, void *end)
{
	__u32 len = cfg_copy_len;
	__u32 i;

	if (len > FLOOD_COPY_MAX || data + len > end)
		return -1;
#pragma unroll
	for (i = 0; i < FLOOD_COPY_MAX / 8; i++) {
		if (i * 8 + 8 > len)
			break;
		((__u64 *)data)[i] = cfg_tmpl[i];
	}
	for (i = 0; i < 7; i++) {
		__u32 k = (len & ~7u) + i;

		if (k >= len)
			break;
		((__u8 *)data)[k] = ((const volatile __u8 *)cfg_tmpl)[k];
	}
	return 0;
}

/*
 * 64 random bits: splitmix64 over a per-CPU counter seeded once from
 * bpf_get_prandom_u32(). Four helper calls a frame (an IPv6 source) cost the generator
 * more than a bare receiver spends on the frame, which made every random-source flood
 * look slower against a one-source flood than the receiver is. Not for secrets: the
 * output is a bijection of the counter, so two draws a frame give a new 128-bit value
 * every frame.
 */
static __always_inline __u64 flood_random(__u64 *state)
{
	__u64 z;

	if (!*state)
		*state = (__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32() | 1;
	z = (*state += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

SEC("xdp")
int flood_xmit(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 addr[4];
	__u32 nwords = cfg_v6 ? 4 : 1;
	__u32 sum;
	__u32 i;

	if (restore_template(data, end))
		return XDP_ABORTED;
	if (cfg_mode == FLOOD_FIXED)
		return bpf_redirect(cfg_ifindex, 0);

	for (i = 0; i < 4; i++)
		addr[i] = cfg_base[i];

	if (cfg_mode == FLOOD_RR) {
		__u32 key = 0, *ctr = bpf_map_lookup_elem(&flood_rr, &key);
		__u32 idx;

		if (!ctr)
			return XDP_ABORTED;
		idx = *ctr;
		*ctr = idx + 1 >= cfg_rr_count ? 0 : idx + 1;
		/* userspace made sure the last word does not overflow */
		addr[nwords - 1] = bpf_htonl(bpf_ntohl(cfg_base[nwords - 1]) + idx);
	} else {
		__u32 key = 0, rnd[4];
		__u64 *state = bpf_map_lookup_elem(&flood_rng, &key);

		if (!state)
			return XDP_ABORTED;
		*(__u64 *)&rnd[0] = flood_random(state);
		if (cfg_v6)
			*(__u64 *)&rnd[2] = flood_random(state);
		for (i = 0; i < 4; i++) {
			if (i < nwords && cfg_mask[i])
				addr[i] = (cfg_base[i] & ~cfg_mask[i]) | (rnd[i] & cfg_mask[i]);
		}
	}

	{
		__u32 off = cfg_src_off;
		__u8 *p;

		if (off > FLOOD_MAX_OFF)
			return XDP_ABORTED;
		p = data + off;
		if ((void *)(p + 16) > end)
			return XDP_ABORTED;
		if (cfg_v6)
			__builtin_memcpy(p, addr, 16);
		else
			__builtin_memcpy(p, addr, 4);
	}

	if (cfg_ip_csum_off) {
		__u32 off = cfg_ip_csum_off;
		__u16 *c;

		if (off > FLOOD_MAX_OFF)
			return XDP_ABORTED;
		c = data + off;
		if ((void *)(c + 1) > end)
			return XDP_ABORTED;
		*c = bpf_htons(csum_finish(fold_add_be32(cfg_ip_csum_base, addr[0])));
	}

	if (cfg_l4_csum_off) {
		__u32 off = cfg_l4_csum_off;
		__u16 *c, v;

		if (off > FLOOD_MAX_OFF)
			return XDP_ABORTED;
		c = data + off;
		if ((void *)(c + 1) > end)
			return XDP_ABORTED;
		sum = cfg_l4_csum_base;
		for (i = 0; i < 4; i++)
			if (i < nwords)
				sum = fold_add_be32(sum, addr[i]);
		v = csum_finish(sum);
		if (cfg_l4_udp && v == 0)
			v = 0xffff;
		*c = bpf_htons(v);
	}

	return bpf_redirect(cfg_ifindex, 0);
}
