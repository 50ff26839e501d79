/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * levels.h - the levels above a source: its network (one state per network and class
 * in lv_state) and its class as a whole (a shared GCRA drawn in per-CPU leases). A
 * packet passes only if every level passes it; one refused at a later level gets the
 * earlier levels' charge back.
 */
#ifndef LEVEE_LEVELS_H
#define LEVEE_LEVELS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "limiter.h"
#include "rules.h"
#include "cas.h"
#include "context.h"
#include "hot.h"
#include "maps.h"
#include "state.h"

/* ---- network limits: one state per (network, class) in lv_state --------------------- */

static __always_inline void lv_net_key(const struct lv_ctx *c, struct lv_key *k)
{
	const struct lv_class *cls = c->cls;

	lv_key_mask(k, c->pkt->addr, c->pkt->family, cls->net_mask4, cls->net_mask6, c->class_id, LV_KEY_NETWORK,
		    cls->epoch);
}

/* Charge the packet to its network. The network's state is created when missing
 * (only for packets already admitted: a spoofed flood cannot fill the map with
 * networks). *net: the state charged, for a refund. */
static __always_inline __u32 lv_network_take(struct lv_ctx *c, __u64 now, struct lv_state **net, __u64 *hot_ready)
{
	const struct lv_class *cls = c->cls;
	struct lv_state *st;
	struct lv_key k;

	lv_net_key(c, &k);
	st = bpf_map_lookup_elem(&lv_state, &k);
	if (!st) {
		int made = lv_create(c, &k, &cls->net_pkt, &cls->net_bytes, now);

		if (made == 0) {
			*net = bpf_map_lookup_elem(&lv_state, &k); /* for a refund; NULL: none */
			return LV_R_CONFORMING;
		}
		if (made != 1)
			return made;
		st = bpf_map_lookup_elem(&lv_state, &k);
		if (!st)
			return LV_R_MAP_FULL;
	}
	*net = st;
	return lv_take_pair(st, &cls->net_pkt, &cls->net_bytes, LV_READ_ONCE(st->ready_ns),
			    LV_READ_ONCE(st->ready_bytes_ns), now, c->len, LV_R_NETWORK, LV_R_NETWORK, hot_ready);
}

/* ---- the class total: a shared GCRA drawn in per-CPU leases (struct lv_lease) ------- */

/* Take this packet's `cost` plus up to lease_ns ahead from the shared GCRA at *g into
 * this CPU's *credit, in one CAS. */
static __always_inline __u32 lv_lease_take(__u64 *g, __u64 now, __u64 cost, __u64 tau, __u64 lease, __u64 *credit)
{
	LV_CAS_LOOP
	for (int i = 0; i < LV_CAS_TRIES; i++) {
		__u64 ready = LV_READ_ONCE(*g), take = cost + lease;

		if (!lv_gcra_conforms(ready, now))
			return LV_R_CLASS_LIMIT;
		if (__sync_val_compare_and_swap(g, ready, lv_gcra_after(ready, now, take, tau)) == ready) {
			*credit += take;
			return LV_R_CONFORMING;
		}
	}
	return LV_R_CONTENDED;
}

static __always_inline struct lv_lease *lv_lease_of(struct lv_ctx *c)
{
	struct lv_lease *ls = &c->pc->lease[c->class_id & (LV_MAX_CLASSES - 1)];
	__u64 epoch = c->cls->epoch + 1;

	if (ls->epoch != epoch) { /* the id was given to a new class: its credit is not ours */
		ls->credit_ns = 0;
		ls->credit_bytes_ns = 0;
		ls->epoch = epoch;
	}
	return ls;
}

static __always_inline __u32 lv_total_take(struct lv_ctx *c, __u64 now, __u64 *hot_ready)
{
	const struct lv_class *cls = c->cls;
	struct lv_lease *ls = lv_lease_of(c);
	__u64 cp = cls->total_pkt.cost, cb = 0;
	__u32 r;

	if (cp && ls->credit_ns < cp) {
		r = lv_lease_take(&c->sh->total_ready, now, cp, cls->total_pkt.tau_ns, cls->lease_ns, &ls->credit_ns);
		if (r != LV_R_CONFORMING) {
			*hot_ready = LV_READ_ONCE(c->sh->total_ready);
			return r;
		}
	}
	if (cls->total_bytes.cost) {
		cb = lv_byte_cost(c->len, &cls->total_bytes);
		if (ls->credit_bytes_ns < cb) {
			/* Credit taken for the packet limit above stays in the lease. */
			r = lv_lease_take(&c->sh->total_ready_bytes, now, cb, cls->total_bytes.tau_ns, cls->lease_ns,
					  &ls->credit_bytes_ns);
			if (r != LV_R_CONFORMING) {
				*hot_ready = LV_READ_ONCE(c->sh->total_ready_bytes);
				return r;
			}
		}
	}
	ls->credit_ns -= cp;
	ls->credit_bytes_ns -= cb;
	return LV_R_CONFORMING;
}

static __always_inline void lv_total_refund(struct lv_ctx *c)
{
	struct lv_lease *ls = lv_lease_of(c);

	ls->credit_ns += c->cls->total_pkt.cost;
	if (c->cls->total_bytes.cost)
		ls->credit_bytes_ns += lv_byte_cost(c->len, &c->cls->total_bytes);
}

/* Would the class total refuse this packet now? Read-only: no lease, no write. */
static __always_inline int lv_total_over(struct lv_ctx *c, __u64 t, __u64 *ready)
{
	const struct lv_class *cls = c->cls;
	struct lv_lease *ls = lv_lease_of(c);
	__u64 g;

	if (cls->total_pkt.cost && ls->credit_ns < cls->total_pkt.cost) {
		g = LV_READ_ONCE(c->sh->total_ready);
		if (!lv_gcra_conforms(g, t)) {
			*ready = g;
			return 1;
		}
	}
	return 0;
}

/* ---- both levels ------------------------------------------------------------------- */

/* Would the network or the class total refuse this packet on the cached clock?
 * Read-only: a flood that has spent them charges nothing. Returns LV_R_CONFORMING or
 * the rejected reason. */
static __always_inline __u32 lv_levels_over(struct lv_ctx *c)
{
	const struct lv_class *cls = c->cls;
	__u64 hot_ready = 0;

	if (cls->flags & LV_CLASS_NETWORK) {
		struct lv_state *net;
		struct lv_key k;

		lv_net_key(c, &k);
		net = bpf_map_lookup_elem(&lv_state, &k);
		if (net && lv_pair_over(net, &cls->net_pkt, &cls->net_bytes, c->now, &hot_ready))
			return lv_reject(c, NULL, hot_ready, LV_R_NETWORK, LV_R_NETWORK);
	}
	if ((cls->flags & LV_CLASS_TOTAL) && lv_total_over(c, c->now, &hot_ready))
		return lv_reject(c, NULL, hot_ready, LV_R_CLASS_LIMIT, LV_R_CLASS_LIMIT);
	return LV_R_CONFORMING;
}

/* Charge the packet to its network, then to the class total; the total refusing gives
 * the network its charge back. *net: the network's state charged (for a refund), or
 * NULL; *hot_ready: the time the refusing level looks at. */
static __always_inline __u32 lv_levels_take(struct lv_ctx *c, __u64 t, struct lv_state **net, __u64 *hot_ready)
{
	const struct lv_class *cls = c->cls;
	__u32 r;

	if (cls->flags & LV_CLASS_NETWORK) {
		r = lv_network_take(c, t, net, hot_ready);
		if (r != LV_R_CONFORMING)
			return r;
	}
	if (cls->flags & LV_CLASS_TOTAL) {
		r = lv_total_take(c, t, hot_ready);
		if (r != LV_R_CONFORMING) {
			lv_refund_pair(*net, &cls->net_pkt, &cls->net_bytes, c->len);
			return r;
		}
	}
	return LV_R_CONFORMING;
}

#endif /* LEVEE_LEVELS_H */
