// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * levee.bpf.c - the XDP entry: parse -> classify -> limit -> one counted exit.
 *
 * Per packet: two one-entry array lookups (counters, policy; both inlined by the
 * verifier), the parse, one LRU lookup, and a clock read. The drop path of a source
 * over its limit writes nothing shared and, for classes whose burst allows it, reads
 * no fine clock (see lv_clock_cached()).
 */
#include <linux/bpf.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "levee_abi.h"
#include "limiter.h"
#include "maps.h"
#include "parse.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define LV_READ_ONCE(x) (*(volatile typeof(x) *)&(x))

/* A CAS fails only when another CPU passed a packet of the same source in between;
 * each retry re-decides on the newer state. Exhausting the tries drops the packet
 * (counted as LV_R_CONTENDED): failing closed keeps the limit exact. */
#define LV_CAS_TRIES 4

/* The one exit: count the packet under its reason, per CPU, and turn the reason into
 * the verdict. */
static __always_inline int lv_exit(struct lv_percpu *pc, __u32 reason, __u64 len)
{
	struct lv_counter *c;

	if (reason >= LV_REASON_MAX) /* cannot happen; keeps the index provably bounded */
		reason = LV_R_MALFORMED;
	c = &pc->by_reason[reason];
	c->packets++;
	c->bytes += len;
	return lv_reason_drops(reason) ? XDP_DROP : XDP_PASS;
}

/* The fine clock. Every reading also refreshes this CPU's cached lower bound. */
static __always_inline __u64 lv_clock_fine(struct lv_clock *ck)
{
	__u64 now = bpf_ktime_get_ns();

	ck->ns = now;
	ck->jiffies = bpf_jiffies64();
	ck->uses = 0;
	return now;
}

/*
 * A lower bound of now, nearly free: the last fine reading taken on this CPU, reused
 * while jiffies (inlined by the verifier: a load) has not moved and for at most
 * LV_CLOCK_REFRESH_PKTS packets. Any earlier reading is <= now, so deciding "not yet"
 * on it can only reject a packet early, never admit one late: it may make levee
 * stricter by the cache's staleness, never looser. The staleness is at most one tick
 * (4 ms at HZ=250) at low packet rates and a few microseconds under a flood.
 * *fresh says whether the value was just read from the fine clock.
 */
static __always_inline __u64 lv_clock_cached(struct lv_clock *ck, int *fresh)
{
	if (bpf_jiffies64() != ck->jiffies || ++ck->uses >= LV_CLOCK_REFRESH_PKTS) {
		*fresh = 1;
		return lv_clock_fine(ck);
	}
	*fresh = 0;
	return ck->ns;
}

/* Pass one packet through a GCRA whose state lives at *ready_p, CPU-safely. */
static __always_inline __u32 lv_gcra_take(__u64 *ready_p, __u64 ready, __u64 now,
					  const struct lv_limit *l)
{
	for (int i = 0; i < LV_CAS_TRIES; i++) {
		__u64 seen;

		if (!lv_gcra_conforms(ready, now))
			return LV_R_RATE;
		seen = __sync_val_compare_and_swap(ready_p, ready,
						   lv_gcra_after_pass(ready, now, l));
		if (seen == ready)
			return LV_R_CONFORMING;
		ready = seen; /* another CPU passed one: decide again on its result */
	}
	return LV_R_CONTENDED;
}

/*
 * First packet of a source: create its state with this packet already passed.
 * BPF_NOEXIST so two CPUs racing on a new source cannot both install a full bucket:
 * the loser takes from the winner's state.
 */
static __always_inline __u32 lv_new_source(struct lv_percpu *pc, const struct lv_class *cls,
					   const struct lv_key *key)
{
	__u64 now = lv_clock_fine(&pc->clock);
	struct lv_state init = { .ready_ns = lv_gcra_first(now, &cls->pkt) };
	struct lv_state *st;
	long err;

	err = bpf_map_update_elem(&lv_state, key, &init, BPF_NOEXIST);
	if (err == 0)
		return LV_R_CONFORMING;
	if (err == -EEXIST) {
		st = bpf_map_lookup_elem(&lv_state, key);
		if (st)
			return lv_gcra_take(&st->ready_ns, LV_READ_ONCE(st->ready_ns), now,
					    &cls->pkt);
	}
	/* The LRU could not free a node (all CPUs inserting at once on a tiny map). */
	return LV_R_MAP_FULL;
}

static __always_inline void lv_key_init(struct lv_key *key, const struct lv_packet *pkt,
					const struct lv_class *cls, __u32 class_id)
{
	if (pkt->family == LV_AF_INET) {
		key->addr[0] = 0;
		key->addr[1] = 0;
		key->addr[2] = pkt->addr[2];
		key->addr[3] = pkt->addr[3] & cls->mask4;
	} else {
		key->addr[0] = pkt->addr[0] & cls->mask6[0];
		key->addr[1] = pkt->addr[1] & cls->mask6[1];
		key->addr[2] = pkt->addr[2] & cls->mask6[2];
		key->addr[3] = pkt->addr[3] & cls->mask6[3];
	}
	key->class_id = class_id;
	key->family = pkt->family;
	key->pad = 0;
}

static __always_inline int lv_key_eq(const struct lv_key *a, const struct lv_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	/* 20 bytes, five words; the pad byte is always zero. */
	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4];
}

/* The per-source limit of one class. */
static __always_inline __u32 lv_limit_source(struct lv_percpu *pc, const struct lv_policy *pol,
					     __u32 class_id, const struct lv_packet *pkt)
{
	const struct lv_class *cls = &pol->classes[class_id];
	const int fast = cls->flags & LV_CLASS_FAST_REJECT;
	struct lv_hot *hot = &pc->hot;
	struct lv_key key;
	struct lv_state *st;
	__u64 ready, now = 0;
	int fresh = 0;

	if (cls->pkt.interval_ns == 0) /* class without a packet limit */
		return LV_R_CONFORMING;

	lv_key_init(&key, pkt, cls, class_id);
	if (fast) {
		now = lv_clock_cached(&pc->clock, &fresh);
		/* The flood's next packet: rejected without touching the map. */
		if (hot->hits < LV_HOT_MAX_HITS && hot->generation == pol->generation &&
		    lv_key_eq(&hot->key, &key) && !lv_gcra_conforms(hot->ready_ns, now)) {
			hot->hits++;
			return LV_R_RATE;
		}
	}

	st = bpf_map_lookup_elem(&lv_state, &key);
	if (!st)
		return lv_new_source(pc, cls, &key);

	ready = LV_READ_ONCE(st->ready_ns);
	if (fast && !lv_gcra_conforms(ready, now)) {
		/* The drop path: no fine clock, no write to the source's state. */
		hot->key = key;
		hot->ready_ns = ready;
		hot->generation = pol->generation;
		hot->hits = 0;
		return LV_R_RATE;
	}
	if (!fresh)
		now = lv_clock_fine(&pc->clock);
	return lv_gcra_take(&st->ready_ns, ready, now, &cls->pkt);
}

/* The whole pipeline, inlined into the entry below (and into benchmark variants that
 * include this file). */
static __always_inline int levee_main(struct xdp_md *ctx)
{
	struct lv_cursor cur = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	__u64 len = cur.end - cur.pos;
	const struct lv_policy *pol;
	struct lv_control *ctl;
	struct lv_packet pkt;
	struct lv_percpu *pc;
	__u32 zero = 0;
	int proto, err;

	pc = bpf_map_lookup_elem(&lv_percpu, &zero);
	ctl = bpf_map_lookup_elem(&lv_policy, &zero);
	if (!pc || !ctl) /* cannot happen: one-entry arrays */
		return XDP_PASS;

	proto = lv_parse_eth(&cur);
	if (proto < 0)
		return lv_exit(pc, -proto, len);
	if (proto == bpf_htons(ETH_P_IP))
		err = lv_parse_ipv4(&cur, &pkt);
	else if (proto == bpf_htons(ETH_P_IPV6))
		err = lv_parse_ipv6(&cur, &pkt);
	else
		return lv_exit(pc, LV_R_NOT_IP, len);
	if (err)
		return lv_exit(pc, -err, len);

	/* One load of the active slot; the whole packet uses that slot. The slot address
	 * depends on the loaded index, which orders the reads after it. */
	pol = &ctl->slot[LV_READ_ONCE(ctl->active) & 1];

	/* Classification (issue 4) picks a class here; for now every packet is class 0. */
	return lv_exit(pc, lv_limit_source(pc, pol, 0, &pkt), len);
}

SEC("xdp")
int levee_xdp(struct xdp_md *ctx)
{
	return levee_main(ctx);
}
