// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * levee.bpf.c - the XDP entry: parse -> classify -> lists -> limits -> one counted exit.
 *
 * Per packet: two one-entry array lookups (counters, policy; both inlined by the
 * verifier), the parse, one byte of the class table, the list trie when the policy has
 * list entries for the family, one LRU lookup, and a clock read. The drop path of a
 * flooding source, for classes whose burst allows it, reads no fine clock, writes
 * nothing shared and mostly skips the LRU lookup (struct lv_hot).
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

/* No class: frames counted before classification (not IP, malformed). */
#define LV_NO_CLASS LV_MAX_CLASSES

/* The one exit: count the packet under its reason and its class, per CPU, and turn the
 * reason into the verdict. */
static __always_inline int lv_exit(struct lv_percpu *pc, __u32 reason, __u32 class_id, __u64 len)
{
	struct lv_counter *c;
	int drop;

	if (reason >= LV_REASON_MAX) /* cannot happen; keeps the index provably bounded */
		reason = LV_R_MALFORMED;
	drop = lv_reason_drops(reason);
	c = &pc->by_reason[reason];
	c->packets++;
	c->bytes += len;
	if (class_id < LV_MAX_CLASSES) {
		c = drop ? &pc->by_class[class_id].dropped : &pc->by_class[class_id].passed;
		c->packets++;
		c->bytes += len;
	}
	return drop ? XDP_DROP : XDP_PASS;
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

/* Pass one packet of `cost` ns through a GCRA whose state lives at *ready_p,
 * CPU-safely. Returns LV_R_CONFORMING or `over`. */
static __always_inline __u32 lv_gcra_take(__u64 *ready_p, __u64 ready, __u64 now, __u64 cost,
					  __u64 tau, __u32 over)
{
	for (int i = 0; i < LV_CAS_TRIES; i++) {
		__u64 seen;

		if (!lv_gcra_conforms(ready, now))
			return over;
		seen = __sync_val_compare_and_swap(ready_p, ready, lv_gcra_after(ready, now, cost, tau));
		if (seen == ready)
			return LV_R_CONFORMING;
		ready = seen; /* another CPU passed one: decide again on its result */
	}
	return LV_R_CONTENDED;
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
	key->epoch = cls->epoch;
}

static __always_inline int lv_key_eq(const struct lv_key *a, const struct lv_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	/* 20 bytes, five words. */
	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4];
}

/* The limits that apply to one packet: its class's, or its network's override. */
struct lv_limits {
	const struct lv_limit *pkt;
	const struct lv_limit *bytes;
	__u32 flags;
};

/*
 * A drop decided on the real path. The source's drop count is kept pending in this
 * CPU's hot entry and written to its state once per LV_HOT_MAX_HITS drops (or when
 * another source takes the entry, losing what was pending): a flood costs one write
 * per LV_HOT_MAX_HITS packets, not one cache line bounced between CPUs per packet.
 * When the cached clock may reject (`fast`), the entry also lets the source's next
 * packets skip the lookup.
 */
static __always_inline __u32 lv_reject(struct lv_percpu *pc, const struct lv_policy *pol,
				       struct lv_state *st, const struct lv_key *key,
				       const struct lv_packet *pkt, __u64 ready, __u32 reason, int fast,
				       __u64 len)
{
	struct lv_hot *hot = &pc->hot;
	__u64 n = 1;

	/* Pending drops belong to the key (the source's state); the address only says
	 * which host the entry may reject for (see lv_hot_rejects()). */
	if (hot->generation == pol->generation && lv_key_eq(&hot->key, key)) {
		if (hot->hits < LV_HOT_MAX_HITS) {
			hot->hits++;
			hot->reason = reason;
			hot->fast = fast;
			__builtin_memcpy(hot->addr, pkt->addr, sizeof(hot->addr));
			hot->ready_ns = ready;
			return reason;
		}
		n += hot->hits;
	}
	/* Display counters: a plain add, so two CPUs dropping for one source at once may
	 * lose a count, never bounce a locked cache line per packet. */
	st->dropped += n | (n * len) << 32;
	hot->key = *key;
	__builtin_memcpy(hot->addr, pkt->addr, sizeof(hot->addr));
	hot->hits = 0;
	hot->reason = reason;
	hot->fast = fast;
	hot->ready_ns = ready;
	hot->generation = pol->generation;
	return reason;
}

/*
 * First packet of a source: create its state with this packet already passed.
 * BPF_NOEXIST so two CPUs racing on a new source cannot both install a full bucket:
 * the loser goes through the winner's state.
 */
static __always_inline int lv_new_source(struct lv_percpu *pc, const struct lv_limits *lim,
					 const struct lv_key *key, __u64 len, __u64 *now)
{
	struct lv_state init = {};
	long err;

	*now = lv_clock_fine(&pc->clock);
	if (lim->pkt->cost)
		init.ready_ns = lv_gcra_first(*now, lim->pkt);
	if (lim->bytes->cost)
		init.ready_bytes_ns = lv_gcra_after(0, *now, lv_byte_cost(len, lim->bytes),
						    lim->bytes->tau_ns);
	init.passed = 1 | len << 32;
	err = bpf_map_update_elem(&lv_state, key, &init, BPF_NOEXIST);
	if (err == 0)
		return LV_R_CONFORMING;
	if (err == -EEXIST)
		return -1; /* look it up again */
	/* The LRU could not free a node (all CPUs inserting at once on a tiny map). */
	return LV_R_MAP_FULL;
}

/* The cached clock, read at most once per packet. */
struct lv_now {
	__u64 ns;
	int read;  /* ns holds a value */
	int fresh; /* ...straight from the fine clock */
};

static __always_inline __u64 lv_now_cached(struct lv_percpu *pc, struct lv_now *n)
{
	if (!n->read) {
		n->ns = lv_clock_cached(&pc->clock, &n->fresh);
		n->read = 1;
	}
	return n->ns;
}

static __always_inline __u64 lv_now_fine(struct lv_percpu *pc, struct lv_now *n)
{
	if (!n->fresh) {
		n->ns = lv_clock_fine(&pc->clock);
		n->read = n->fresh = 1;
	}
	return n->ns;
}

/*
 * The flood's next packet: this CPU's last rejected source again, in the same policy
 * generation, still not eligible by the cached clock. Rejected without the list lookup
 * or the map lookup (struct lv_hot).
 */
static __always_inline int lv_hot_rejects(struct lv_percpu *pc, const struct lv_policy *pol,
					  const struct lv_key *key, const struct lv_packet *pkt,
					  struct lv_now *now)
{
	struct lv_hot *hot = &pc->hot;
	__u32 listed = pkt->family == LV_AF_INET ? pol->nr_list4 | pol->nr_host4 : pol->nr_list6 | pol->nr_host6;

	if (!hot->fast || hot->hits >= LV_HOT_MAX_HITS || hot->generation != pol->generation ||
	    !lv_key_eq(&hot->key, key))
		return 0;
	if (listed && (hot->addr[0] != pkt->addr[0] || hot->addr[1] != pkt->addr[1] ||
		       hot->addr[2] != pkt->addr[2] || hot->addr[3] != pkt->addr[3]))
		return 0;
	if (lv_gcra_conforms(hot->ready_ns, lv_now_cached(pc, now)))
		return 0;
	hot->hits++;
	return 1;
}

/* The per-source limits of one class (or override). */
static __always_inline __u32 lv_limit_source(struct lv_percpu *pc, const struct lv_policy *pol,
					     const struct lv_limits *lim, const struct lv_key *key,
					     const struct lv_packet *pkt, struct lv_now *now, __u64 len)
{
	const int fast = lim->flags & LV_CLASS_FAST_REJECT;
	__u64 ready, ready_b, t;
	struct lv_state *st;
	__u32 r;

	if (!lim->pkt->cost && !lim->bytes->cost) /* a class without limits */
		return LV_R_CONFORMING;

	st = bpf_map_lookup_elem(&lv_state, key);
	if (!st) {
		int created = lv_new_source(pc, lim, key, len, &t);

		if (created >= 0)
			return created;
		st = bpf_map_lookup_elem(&lv_state, key); /* another CPU created it */
		if (!st)
			return LV_R_MAP_FULL;
		now->ns = t;
		now->read = now->fresh = 1;
	}

	ready = LV_READ_ONCE(st->ready_ns);
	ready_b = LV_READ_ONCE(st->ready_bytes_ns);
	if (fast) {
		/* The drop path: no fine clock, no write but the drop count. */
		t = lv_now_cached(pc, now);
		if (lim->pkt->cost && !lv_gcra_conforms(ready, t))
			return lv_reject(pc, pol, st, key, pkt, ready, LV_R_RATE, fast, len);
		if (lim->bytes->cost && !lv_gcra_conforms(ready_b, t))
			return lv_reject(pc, pol, st, key, pkt, ready_b, LV_R_BYTES, fast, len);
	}
	t = lv_now_fine(pc, now);

	if (lim->pkt->cost) {
		r = lv_gcra_take(&st->ready_ns, ready, t, lim->pkt->cost, lim->pkt->tau_ns, LV_R_RATE);
		if (r != LV_R_CONFORMING)
			return lv_reject(pc, pol, st, key, pkt, LV_READ_ONCE(st->ready_ns), r, fast, len);
	}
	if (lim->bytes->cost) {
		r = lv_gcra_take(&st->ready_bytes_ns, ready_b, t, lv_byte_cost(len, lim->bytes),
				 lim->bytes->tau_ns, LV_R_BYTES);
		if (r != LV_R_CONFORMING) {
			/* Refused by the byte limit: the packet limit gets its charge back, so a
			 * packet dropped at a later limit costs the earlier ones nothing. */
			if (lim->pkt->cost)
				__sync_fetch_and_add(&st->ready_ns, -lim->pkt->cost);
			return lv_reject(pc, pol, st, key, pkt, LV_READ_ONCE(st->ready_bytes_ns), r, fast, len);
		}
	}
	st->passed += 1 | len << 32; /* display counter: see lv_reject() */
	return LV_R_CONFORMING;
}

/* The class of a packet: one byte of the compiled first-match table. */
static __always_inline __u32 lv_classify(const struct lv_policy *pol, const struct lv_packet *pkt)
{
	__u32 kind = pkt->kind;

	if (kind < LV_L4_PORTED)
		return pol->table.by_port[kind][pkt->dport] & (LV_MAX_CLASSES - 1);
	return pol->table.by_kind[kind & (LV_L4_KINDS - 1)] & (LV_MAX_CLASSES - 1);
}

/*
 * The list entry deciding for the packet's source, from the active slot's maps, or
 * NULL: the host hash first (an exact entry is the most specific), then the trie.
 * Either is skipped when the slot has no entries in it for the family.
 */
static __always_inline const struct lv_list_value *lv_list_lookup(__u32 slot, const struct lv_policy *pol,
								   const struct lv_packet *pkt)
{
	const struct lv_list_value *v = NULL;

	if (pkt->family == LV_AF_INET) {
		__u32 host = pkt->addr[3];
		struct lv_lpm4 k = { .prefixlen = 32, .addr = pkt->addr[3] };

		if (pol->nr_host4)
			v = slot ? bpf_map_lookup_elem(&lv_host4_1, &host) : bpf_map_lookup_elem(&lv_host4_0, &host);
		if (!v && pol->nr_list4)
			v = slot ? bpf_map_lookup_elem(&lv_list4_1, &k) : bpf_map_lookup_elem(&lv_list4_0, &k);
	} else {
		struct lv_lpm6 k = { .prefixlen = 128 };
		struct lv_in6 host;

		__builtin_memcpy(host.addr, pkt->addr, sizeof(host.addr));
		__builtin_memcpy(k.addr, pkt->addr, sizeof(k.addr));
		if (pol->nr_host6)
			v = slot ? bpf_map_lookup_elem(&lv_host6_1, &host) : bpf_map_lookup_elem(&lv_host6_0, &host);
		if (!v && pol->nr_list6)
			v = slot ? bpf_map_lookup_elem(&lv_list6_1, &k) : bpf_map_lookup_elem(&lv_list6_0, &k);
	}
	return v;
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
	const struct lv_list_value *entry;
	const struct lv_policy *pol;
	const struct lv_class *cls;
	struct lv_control *ctl;
	struct lv_now now = {};
	struct lv_limits lim;
	struct lv_packet pkt;
	struct lv_percpu *pc;
	struct lv_key key;
	__u32 zero = 0, slot, class_id, kind;
	int proto, err;

	pc = bpf_map_lookup_elem(&lv_percpu, &zero);
	ctl = bpf_map_lookup_elem(&lv_policy, &zero);
	if (!pc || !ctl) /* cannot happen: one-entry arrays */
		return XDP_PASS;

	proto = lv_parse_eth(&cur);
	if (proto < 0)
		return lv_exit(pc, -proto, LV_NO_CLASS, len);
	if (proto == bpf_htons(ETH_P_IP))
		err = lv_parse_ipv4(&cur, &pkt);
	else if (proto == bpf_htons(ETH_P_IPV6))
		err = lv_parse_ipv6(&cur, &pkt);
	else
		return lv_exit(pc, LV_R_NOT_IP, LV_NO_CLASS, len);
	if (err)
		return lv_exit(pc, -err, LV_NO_CLASS, len);

	/* One load of the active slot; the whole packet uses that slot and its tries. The
	 * slot address depends on the loaded index, which orders the reads after it. */
	slot = LV_READ_ONCE(ctl->active) & 1;
	pol = &ctl->slot[slot];
	class_id = lv_classify(pol, &pkt);
	cls = &pol->classes[class_id];
	lv_key_init(&key, &pkt, cls, class_id);
	if (lv_hot_rejects(pc, pol, &key, &pkt, &now))
		return lv_exit(pc, pc->hot.reason, class_id, len);

	lim.pkt = &cls->pkt;
	lim.bytes = &cls->bytes;
	lim.flags = cls->flags;
	entry = lv_list_lookup(slot, pol, &pkt);
	if (entry) {
		__u32 ov = entry->override_id;

		kind = entry->kind;
		/* On the cached clock: an expired deny may match up to a tick longer. */
		if (entry->expires_ns && lv_gcra_conforms(entry->expires_ns, lv_now_cached(pc, &now))) {
			kind = entry->after_kind;
			ov = entry->after_override;
			if (entry->after_expires_ns && lv_gcra_conforms(entry->after_expires_ns, now.ns)) {
				kind = entry->then_kind;
				ov = entry->then_override;
			}
		}
		if (kind == LV_LIST_ALLOW)
			return lv_exit(pc, LV_R_ALLOW, class_id, len);
		if (kind == LV_LIST_DENY)
			return lv_exit(pc, LV_R_DENY, class_id, len);
		if (kind == LV_LIST_OVERRIDE && ov < LV_MAX_OVERRIDES) {
			const struct lv_override *o = &pol->overrides[ov];

			if ((o->classes >> class_id) & 1) {
				lim.pkt = &o->pkt;
				lim.bytes = &o->bytes;
				lim.flags = o->flags;
			}
		}
	}
	return lv_exit(pc, lv_limit_source(pc, pol, &lim, &key, &pkt, &now, len), class_id, len);
}

SEC("xdp")
int levee_xdp(struct xdp_md *ctx)
{
	return levee_main(ctx);
}
