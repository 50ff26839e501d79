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
#include "rules.h"

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
 */
static __always_inline __u64 lv_clock_cached(struct lv_clock *ck)
{
	if (bpf_jiffies64() != ck->jiffies || ++ck->uses >= LV_CLOCK_REFRESH_PKTS)
		return lv_clock_fine(ck);
	return ck->ns;
}

/* The fine clock, unless this packet's cached reading was just taken from it (uses is
 * 0 only right after a fine read, on this CPU, within this packet's run). */
static __always_inline __u64 lv_clock_now(struct lv_clock *ck, __u64 cached)
{
	if (ck->uses == 0 && ck->ns == cached)
		return cached;
	return lv_clock_fine(ck);
}

/* Pass one packet of `cost` ns through a GCRA whose state lives at *ready_p,
 * CPU-safely. Returns LV_R_CONFORMING or `over`. */
static __always_inline __u32 lv_gcra_take(__u64 *ready_p, __u64 ready, __u64 now, __u64 cost, __u64 tau, __u32 over)
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

/* One packet on its way through the limits (everything below is inlined: this lives
 * on the stack of the entry point). */
struct lv_ctx {
	struct lv_percpu *pc;
	const struct lv_policy *pol;
	const struct lv_class *cls;
	const struct lv_packet *pkt;
	struct lv_shared *sh; /* the class's shared budgets (lv_shared) */
	const struct lv_control *ctl;
	struct lv_limits lim;
	__u64 now;         /* the cached clock (lv_clock_cached()), read once per packet */
	struct lv_key key; /* the source: address masked to the class's prefix */
	__u64 len;
	__u32 class_id;
};

/* Ban extensions closer together than this are not written: a banned flood writes its
 * record at most once per grain, and its ban ends at most a grain early. */
#define LV_BAN_GRAIN_NS 1000000ULL

/*
 * Send an event about this packet's source, within the event rate (struct lv_event).
 * Only on state changes, never per packet of a flood.
 */
static __always_inline void lv_event(struct lv_ctx *c, __u8 type, __u32 reason, __u32 count, __u64 value)
{
	const struct lv_limit *l = &c->pol->events;
	__u32 k = LV_MAX_CLASSES;
	struct lv_event *e;
	struct lv_shared *g;
	__u64 now;

	if (!l->cost)
		return;
	g = bpf_map_lookup_elem(&lv_shared, &k);
	if (!g)
		return;
	now = c->now;
	if (lv_gcra_take(&g->events_ready, LV_READ_ONCE(g->events_ready), now, l->cost, l->tau_ns, LV_R_RATE) !=
	    LV_R_CONFORMING) {
		c->pc->events_suppressed++;
		return;
	}
	e = bpf_ringbuf_reserve(&lv_events, sizeof(*e), 0);
	if (!e) { /* the reader is behind */
		c->pc->events_suppressed++;
		return;
	}
	e->time_ns = now;
	__builtin_memcpy(e->addr, c->key.addr, sizeof(e->addr));
	e->type = type;
	e->family = c->pkt->family;
	e->class_id = c->class_id;
	e->reason = reason;
	e->pad[0] = e->pad[1] = e->pad[2] = 0;
	e->count = count;
	e->suppressed = c->pc->events_suppressed;
	e->value = value;
	c->pc->events_suppressed = 0;
	bpf_ringbuf_submit(e, 0);
}

/* A class-wide condition (budget spent, map full): one event a second per class at
 * most, claimed with a CAS on *last so two CPUs do not both send it. */
static __always_inline void lv_event_every(struct lv_ctx *c, __u64 *last, __u8 type, __u32 reason)
{
	__u64 seen = LV_READ_ONCE(*last), now = c->now;

	if ((__s64)(now - seen) < (__s64)LV_EVENT_EVERY_NS && seen)
		return;
	if (__sync_val_compare_and_swap(last, seen, now) == seen)
		lv_event(c, type, reason, 0, 0);
}

/*
 * A drop decided on the real path. The source's drop count is kept pending in this
 * CPU's hot entry and written to its state (when there is one) once per
 * LV_HOT_MAX_HITS drops or when another source takes the entry, losing what was
 * pending: a flood costs one write per LV_HOT_MAX_HITS packets, not one cache line
 * bounced between CPUs per packet. When the cached clock may reject (LV_CLASS_FAST_REJECT),
 * the entry also lets the source's next packets before `ready` skip the lookups, counted
 * under `hot_reason`. Returns `reason`.
 */
static __always_inline __u32 lv_reject(struct lv_ctx *c, struct lv_state *st, __u64 ready, __u32 reason,
				       __u32 hot_reason)
{
	struct lv_hot *hot = &c->pc->hot;
	int fast = c->lim.flags & LV_CLASS_FAST_REJECT;
	__u64 n = 1;

	/* Pending drops belong to the key (the source's state); the address only says
	 * which host the entry may reject for (see lv_hot_rejects()). */
	if (hot->generation == c->pol->generation && lv_key_eq(&hot->key, &c->key)) {
		if (hot->hits < LV_HOT_MAX_HITS) {
			hot->hits++;
			hot->reason = hot_reason;
			hot->fast = fast;
			__builtin_memcpy(hot->addr, c->pkt->addr, sizeof(hot->addr));
			hot->ready_ns = ready;
			return reason;
		}
		n += hot->hits;
	}
	/* Display counters: a plain add, so two CPUs dropping for one source at once may
	 * lose a count, never bounce a locked cache line per packet. */
	if (st) {
		if (!LV_COUNT_PACKETS(st->dropped) && !LV_COUNT_BYTES(st->dropped))
			lv_event(c, LV_EV_LIMITED, reason, 0, 0);
		st->dropped += n | (n * c->len) << 32;
	}
	hot->key = c->key;
	__builtin_memcpy(hot->addr, c->pkt->addr, sizeof(hot->addr));
	hot->hits = 0;
	hot->reason = hot_reason;
	hot->fast = fast;
	hot->ready_ns = ready;
	hot->generation = c->pol->generation;
	return reason;
}

/*
 * The flood's next packet: this CPU's last rejected source again, in the same policy
 * generation, still not eligible by the cached clock. Rejected without the list lookup
 * or the map lookup (struct lv_hot).
 */
static __always_inline int lv_hot_rejects(struct lv_ctx *c)
{
	struct lv_hot *hot = &c->pc->hot;
	const struct lv_policy *pol = c->pol;
	const struct lv_packet *pkt = c->pkt;
	__u32 listed = pkt->family == LV_AF_INET ? pol->nr_list4 | pol->nr_host4 : pol->nr_list6 | pol->nr_host6;

	if (!hot->fast || hot->hits >= LV_HOT_MAX_HITS || hot->generation != pol->generation ||
	    !lv_key_eq(&hot->key, &c->key))
		return 0;
	if (listed && (hot->addr[0] != pkt->addr[0] || hot->addr[1] != pkt->addr[1] || hot->addr[2] != pkt->addr[2] ||
		       hot->addr[3] != pkt->addr[3]))
		return 0;
	if (lv_gcra_conforms(hot->ready_ns, c->now))
		return 0;
	hot->hits++;
	return 1;
}

/* A new state with this packet already passed through `p` and `b`. */
static __always_inline void lv_state_first(struct lv_state *s, const struct lv_limit *p, const struct lv_limit *b,
					   __u64 now, __u64 len)
{
	s->ready_ns = p->cost ? lv_gcra_first(now, p) : 0;
	s->ready_bytes_ns = b->cost ? lv_gcra_after(0, now, lv_byte_cost(len, b), b->tau_ns) : 0;
	s->passed = 1 | len << 32;
	s->dropped = 0;
}

/* Mark a source as possibly known in both halves of lv_seen (struct lv_seen). */
static __always_inline void lv_seen_set(struct lv_ctx *c, const struct lv_key *key)
{
	__u32 h = lv_seen_hash(key, c->ctl->seen_seed);
	__u32 w = h >> 6;
	__u64 bit = 1ULL << (h & 63), *p;

	p = bpf_map_lookup_elem(&lv_seen, &w);
	if (p)
		__sync_fetch_and_or(p, bit);
	w += LV_SEEN_WORDS;
	p = bpf_map_lookup_elem(&lv_seen, &w);
	if (p)
		__sync_fetch_and_or(p, bit);
}

/* Certainly no state for this packet's source (its lv_seen bit is clear)? */
static __always_inline int lv_seen_never(struct lv_ctx *c)
{
	__u32 h = lv_seen_hash(&c->key, c->ctl->seen_seed);
	__u32 w = (h >> 6) + (c->ctl->seen_active & 1) * LV_SEEN_WORDS;
	__u64 *p = bpf_map_lookup_elem(&lv_seen, &w);

	return p && !(*p & (1ULL << (h & 63)));
}

/*
 * Create a state (a source, or a network: the key says) with this packet passed.
 * BPF_NOEXIST so two CPUs racing on a new key cannot both install a full bucket: the
 * loser gets 1 and goes through the winner's state. Returns 0, 1 or LV_R_MAP_FULL.
 */
static __always_inline int lv_create(struct lv_ctx *c, const struct lv_key *key, const struct lv_limit *p,
				     const struct lv_limit *b, __u64 now)
{
	struct lv_state init;
	long err;

	lv_state_first(&init, p, b, now, c->len);
	if (key->family & LV_KEY_NETWORK)
		init.passed = 0; /* a network counts its passes once every level passed them */
	err = bpf_map_update_elem(&lv_state, key, &init, BPF_NOEXIST);
	if (err == -EEXIST)
		return 1;
	if (err)
		return LV_R_MAP_FULL; /* the LRU could not free a node */
	if (!(key->family & LV_KEY_NETWORK))
		lv_seen_set(c, key);
	if (c->pol->flags & LV_POL_REFUSE_FULL) {
		struct lv_shared *g;
		__u32 k = LV_MAX_CLASSES;

		g = bpf_map_lookup_elem(&lv_shared, &k);
		if (g)
			__sync_fetch_and_add(&g->sources, 1);
	}
	return 0;
}

/* Pass one packet through a packet limit and a byte limit kept in one state: both or
 * neither (a packet refused by the byte limit gets its packet charge back). Returns
 * LV_R_CONFORMING, or the refusing reason with *ready the time it looks at. */
static __always_inline __u32 lv_take_pair(struct lv_state *st, const struct lv_limit *p, const struct lv_limit *b,
					  __u64 ready, __u64 ready_b, __u64 now, __u64 len, __u32 over_p, __u32 over_b,
					  __u64 *hot_ready)
{
	__u32 r;

	if (p->cost) {
		r = lv_gcra_take(&st->ready_ns, ready, now, p->cost, p->tau_ns, over_p);
		if (r != LV_R_CONFORMING) {
			*hot_ready = LV_READ_ONCE(st->ready_ns);
			return r;
		}
	}
	if (b->cost) {
		r = lv_gcra_take(&st->ready_bytes_ns, ready_b, now, lv_byte_cost(len, b), b->tau_ns, over_b);
		if (r != LV_R_CONFORMING) {
			if (p->cost)
				__sync_fetch_and_add(&st->ready_ns, -p->cost);
			*hot_ready = LV_READ_ONCE(st->ready_bytes_ns);
			return r;
		}
	}
	return LV_R_CONFORMING;
}

/* Give back what lv_take_pair() charged: a packet refused at a later level costs this
 * one nothing. */
static __always_inline void lv_refund_pair(struct lv_state *st, const struct lv_limit *p, const struct lv_limit *b,
					   __u64 len)
{
	if (!st)
		return;
	if (p->cost)
		__sync_fetch_and_add(&st->ready_ns, -p->cost);
	if (b->cost)
		__sync_fetch_and_add(&st->ready_bytes_ns, -lv_byte_cost(len, b));
}

/* Is a state over either of its limits at `t`? *ready: the time it looks at. */
static __always_inline int lv_pair_over(const struct lv_state *st, const struct lv_limit *p, const struct lv_limit *b,
					__u64 t, __u64 *ready)
{
	__u64 r = LV_READ_ONCE(st->ready_ns), rb = LV_READ_ONCE(st->ready_bytes_ns);

	if (p->cost && !lv_gcra_conforms(r, t)) {
		*ready = r;
		return 1;
	}
	if (b->cost && !lv_gcra_conforms(rb, t)) {
		*ready = rb;
		return 1;
	}
	return 0;
}

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

/* ---- bans ------------------------------------------------------------------------- */

/* The record of a ban in every class: the source masked to the prefix those classes
 * share (lv_policy.ban_mask*). */
static __always_inline void lv_ban_all_key(const struct lv_ctx *c, struct lv_key *k)
{
	const struct lv_policy *pol = c->pol;

	lv_key_mask(k, c->pkt->addr, c->pkt->family, pol->ban_mask4, pol->ban_mask6, LV_ALL_CLASSES, 0, 0);
}

/* The record of a ban this class imposes: per source and class, or in every class. */
static __always_inline void lv_ban_key(const struct lv_ctx *c, struct lv_key *k)
{
	if (c->cls->flags & LV_CLASS_BAN_ALL)
		lv_ban_all_key(c, k);
	else
		*k = c->key;
}

/* Keep a banned source failing its own limit until `until`: its ready time is pushed
 * there (never pulled back), so its packets need no ban lookup to be refused and a
 * conforming packet proves it is not banned. */
static __always_inline void lv_ban_push(struct lv_ctx *c, struct lv_state *st, __u64 until)
{
	__u64 *p = c->lim.pkt->cost ? &st->ready_ns : &st->ready_bytes_ns;

	for (int i = 0; i < LV_CAS_TRIES; i++) {
		__u64 old = LV_READ_ONCE(*p);

		if ((__s64)(until - old) <= 0 || __sync_val_compare_and_swap(p, old, until) == old)
			return;
	}
}

/*
 * A packet of a class with bans, refused by its source's limits (reason `r`) at `now`
 * (fine clock). Either the source is banned, and the packet is measured against the
 * limits it would have had (lv_ban.shadow_*): over them, it extends the ban; or this is
 * an offence that starts a ban, twice as long as the last if that ended within
 * forget_ns. The offending packet itself counts under `r`, the banned ones under ban.
 */
static __always_inline __u32 lv_ban(struct lv_ctx *c, struct lv_state *st, __u32 r, __u64 now)
{
	const struct lv_class *cls = c->cls;
	const struct lv_limit *p = c->lim.pkt, *b = c->lim.bytes;
	struct lv_ban nb = {}, *ban;
	struct lv_key bk;
	__u32 offences = 1;
	__u64 dur;

	lv_ban_key(c, &bk);
	ban = bpf_map_lookup_elem(&lv_bans, &bk);
	if (ban && !lv_gcra_conforms(ban->until_ns, now)) {
		__u64 until = ban->until_ns, d = ban->duration_ns;
		__u64 sp = ban->shadow_ns, sb = ban->shadow_bytes_ns;

		if ((p->cost && !lv_gcra_conforms(sp, now)) || (b->cost && !lv_gcra_conforms(sb, now))) {
			if ((__s64)(now + d - until) >= (__s64)LV_BAN_GRAIN_NS) {
				until = now + d;
				ban->until_ns = until; /* plain store: racing CPUs write nearly the same */
				lv_ban_push(c, st, until);
			}
		} else {
			if (p->cost)
				ban->shadow_ns = lv_gcra_after(sp, now, p->cost, p->tau_ns);
			if (b->cost)
				ban->shadow_bytes_ns = lv_gcra_after(sb, now, lv_byte_cost(c->len, b), b->tau_ns);
		}
		/* The hot entry may refuse without measuring until a grain after the last
		 * extension: an extension it skips would have moved the end by less. */
		return lv_reject(c, st, until - d + LV_BAN_GRAIN_NS, LV_R_BAN, LV_R_BAN);
	}

	if (ban && lv_ban_repeats(ban->until_ns, now, cls->forget_ns))
		offences = ban->offences + 1;
	dur = lv_ban_duration(cls->ban_ns, cls->ban_max_ns, offences);
	nb.until_ns = now + dur;
	nb.duration_ns = dur;
	nb.shadow_ns = LV_READ_ONCE(st->ready_ns);
	nb.shadow_bytes_ns = LV_READ_ONCE(st->ready_bytes_ns);
	nb.since_ns = now;
	nb.offences = offences;
	nb.class_id = c->class_id;
	nb.epoch = c->cls->epoch;
	if (ban)
		*ban = nb; /* one CPU's offence wins a race; both start nearly the same ban */
	else
		bpf_map_update_elem(&lv_bans, &bk, &nb, BPF_ANY);
	lv_ban_push(c, st, nb.until_ns);
	lv_event(c, LV_EV_BANNED, r, offences, dur);
	return lv_reject(c, st, now + LV_BAN_GRAIN_NS, r, LV_R_BAN);
}

/* A ban imposed in another class that bans in every class (LV_POL_BAN_ALL). Its own
 * class finds it through the source's state, and measures it (lv_ban()). */
static __always_inline int lv_banned_elsewhere(struct lv_ctx *c, __u64 *until)
{
	struct lv_ban *ban;
	struct lv_key bk;

	if (!(c->pol->flags & LV_POL_BAN_ALL))
		return 0;
	lv_ban_all_key(c, &bk);
	ban = bpf_map_lookup_elem(&lv_bans, &bk);
	if (!ban || (ban->class_id == c->class_id && ban->epoch == c->cls->epoch))
		return 0; /* its own class finds it through the source's state */
	*until = ban->until_ns;
	return !lv_gcra_conforms(*until, c->now);
}

/* ---- the limits of one packet ------------------------------------------------------ */

/*
 * A source with no state yet. It gets state only if every level would pass this
 * packet: its network and the class total are checked read-only first (a flood that
 * has spent them never touches the admission budget), then the admission budget is
 * charged, then the network and the total, then the state is created. A level that
 * refuses gives back what the levels before it charged.
 */
static __always_inline __u32 lv_new_source(struct lv_ctx *c, struct lv_state **out)
{
	const struct lv_class *cls = c->cls;
	struct lv_state *net = NULL;
	__u64 t, hot_ready = 0;
	const int admit = cls->flags & LV_CLASS_ADMIT; /* past the admission check: charged */
	int made;
	__u32 r;

	*out = NULL;
	if (cls->flags & (LV_CLASS_NETWORK | LV_CLASS_TOTAL)) {
		t = c->now;
		if (cls->flags & LV_CLASS_NETWORK) {
			struct lv_key k;

			lv_net_key(c, &k);
			net = bpf_map_lookup_elem(&lv_state, &k);
			if (net && lv_pair_over(net, &cls->net_pkt, &cls->net_bytes, t, &hot_ready))
				return lv_reject(c, NULL, hot_ready, LV_R_NETWORK, LV_R_NETWORK);
			net = NULL;
		}
		if ((cls->flags & LV_CLASS_TOTAL) && lv_total_over(c, t, &hot_ready))
			return lv_reject(c, NULL, hot_ready, LV_R_CLASS_LIMIT, LV_R_CLASS_LIMIT);
	}
	if (c->pol->flags & LV_POL_REFUSE_FULL) {
		__u32 k = LV_MAX_CLASSES;
		struct lv_shared *g = bpf_map_lookup_elem(&lv_shared, &k);

		if (g && LV_READ_ONCE(g->sources) >= c->pol->full_at)
			return LV_R_MAP_FULL;
	}
	if (cls->flags & LV_CLASS_ADMIT) {
		__u64 ready = LV_READ_ONCE(c->sh->admit_ready);

		/* Refused on the cached clock (at most a tick early), so a flood that has
		 * spent the budget costs no fine clock read and no write. */
		if (!lv_gcra_conforms(ready, c->now))
			return LV_R_ADMISSION;
		t = lv_clock_now(&c->pc->clock, c->now);
		r = lv_gcra_take(&c->sh->admit_ready, ready, t, cls->admit.cost, cls->admit.tau_ns, LV_R_ADMISSION);
		if (r != LV_R_CONFORMING)
			return r;
	} else {
		t = lv_clock_now(&c->pc->clock, c->now);
	}
	if (cls->flags & LV_CLASS_NETWORK) {
		r = lv_network_take(c, t, &net, &hot_ready);
		if (r != LV_R_CONFORMING)
			goto refuse;
	}
	if (cls->flags & LV_CLASS_TOTAL) {
		r = lv_total_take(c, t, &hot_ready);
		if (r != LV_R_CONFORMING) {
			lv_refund_pair(net, &cls->net_pkt, &cls->net_bytes, c->len);
			goto refuse;
		}
	}
	made = lv_create(c, &c->key, c->lim.pkt, c->lim.bytes, t);
	if (made == 0) {
		if (net)
			net->passed += 1 | c->len << 32; /* display: networks count passes only */
		if (admit)
			__sync_fetch_and_add(&c->sh->admitted, 1);
		return LV_R_CONFORMING;
	}
	/* Refused by the map, or another CPU created the source meanwhile: nothing is
	 * charged for this packet but what its source's own limits decide. */
	lv_refund_pair(net, &cls->net_pkt, &cls->net_bytes, c->len);
	if (cls->flags & LV_CLASS_TOTAL)
		lv_total_refund(c);
	if (admit)
		__sync_fetch_and_add(&c->sh->admit_ready, -cls->admit.cost);
	if (made != 1)
		return made;
	*out = bpf_map_lookup_elem(&lv_state, &c->key);
	return *out ? LV_R_CONFORMING : LV_R_MAP_FULL;

refuse:
	if (admit)
		__sync_fetch_and_add(&c->sh->admit_ready, -cls->admit.cost);
	return lv_reject(c, NULL, hot_ready, r, r);
}

/*
 * Every level of limits for one packet of a limited class: its source (packets and
 * bytes, or its network's override), its network, the class as a whole. A packet
 * passes only if every level passes it; one refused at a later level costs the
 * earlier ones nothing (their charge is given back).
 */
static __always_inline __u32 lv_limit(struct lv_ctx *c)
{
	const struct lv_class *cls = c->cls;
	const struct lv_limits *lim = &c->lim;
	const int fast = (lim->flags & LV_CLASS_FAST_REJECT) && !(cls->flags & LV_CLASS_BAN);
	struct lv_state *st, *net = NULL;
	__u64 ready, ready_b, t, hot_ready = 0;
	__u32 r;

	if (!lim->pkt->cost && !lim->bytes->cost && !(cls->flags & (LV_CLASS_NETWORK | LV_CLASS_TOTAL)))
		return LV_R_CONFORMING; /* a class without limits */

	/* A spoofed flood past the admission budget: refused on the filter, without the
	 * lookup that would miss (struct lv_seen). */
	if ((cls->flags & LV_CLASS_ADMIT) && !lv_gcra_conforms(LV_READ_ONCE(c->sh->admit_ready), c->now) &&
	    lv_seen_never(c))
		return LV_R_ADMISSION;

	st = bpf_map_lookup_elem(&lv_state, &c->key);
	if (!st) {
		r = lv_new_source(c, &st);
		if (!st)
			return r;
		/* another CPU created it: go through its state */
	}

	ready = LV_READ_ONCE(st->ready_ns);
	ready_b = LV_READ_ONCE(st->ready_bytes_ns);
	if (fast) {
		/* The drop path: no fine clock, no write but the drop count. (Not in classes
		 * with bans: an offence is judged on the fine clock.) */
		t = c->now;
		if (lim->pkt->cost && !lv_gcra_conforms(ready, t))
			return lv_reject(c, st, ready, LV_R_RATE, LV_R_RATE);
		if (lim->bytes->cost && !lv_gcra_conforms(ready_b, t))
			return lv_reject(c, st, ready_b, LV_R_BYTES, LV_R_BYTES);
	}
	t = lv_clock_now(&c->pc->clock, c->now);

	r = lv_take_pair(st, lim->pkt, lim->bytes, ready, ready_b, t, c->len, LV_R_RATE, LV_R_BYTES, &hot_ready);
	if (r != LV_R_CONFORMING) {
		if ((cls->flags & LV_CLASS_BAN) && (r == LV_R_RATE || r == LV_R_BYTES))
			return lv_ban(c, st, r, t);
		return lv_reject(c, st, hot_ready, r, r);
	}
	if (cls->flags & LV_CLASS_NETWORK) {
		r = lv_network_take(c, t, &net, &hot_ready);
		if (r != LV_R_CONFORMING) {
			lv_refund_pair(st, lim->pkt, lim->bytes, c->len);
			return lv_reject(c, st, hot_ready, r, r);
		}
	}
	if (cls->flags & LV_CLASS_TOTAL) {
		r = lv_total_take(c, t, &hot_ready);
		if (r != LV_R_CONFORMING) {
			lv_refund_pair(net, &cls->net_pkt, &cls->net_bytes, c->len);
			lv_refund_pair(st, lim->pkt, lim->bytes, c->len);
			return lv_reject(c, st, hot_ready, r, r);
		}
	}
	st->passed += 1 | c->len << 32; /* display counter: see lv_reject() */
	if (net)
		net->passed += 1 | c->len << 32; /* (a network's drops are not counted in it) */
	return LV_R_CONFORMING;
}

/* Monitor mode: a class that monitors counts what it would have dropped and passes it.
 * Its limits were not charged for the packet, exactly as if it had been dropped, so
 * what it counts is what enforcing would drop. */
static __always_inline __u32 lv_mode(struct lv_ctx *c, __u32 reason)
{
	struct lv_counter *w;

	if (!(c->cls->flags & LV_CLASS_MONITOR) || reason >= LV_REASON_MAX)
		return reason;
	if (!((LV_MONITORABLE >> reason) & 1) && !(reason == LV_R_DENY && !(c->pol->flags & LV_POL_MONITOR_DENY)))
		return reason;
	w = &c->pc->would[reason];
	w->packets++;
	w->bytes += c->len;
	return LV_R_MONITORED;
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
	const struct lv_list_value *entry;
	struct lv_control *ctl;
	struct lv_packet pkt;
	struct lv_ctx c = {};
	__u32 zero = 0, slot, r;
	__u64 until;
	int proto, err;

	c.len = cur.end - cur.pos;
	c.pc = bpf_map_lookup_elem(&lv_percpu, &zero);
	ctl = bpf_map_lookup_elem(&lv_policy, &zero);
	if (!c.pc || !ctl) /* cannot happen: one-entry arrays */
		return XDP_PASS;

	proto = lv_parse_eth(&cur);
	if (proto < 0)
		return lv_exit(c.pc, -proto, LV_NO_CLASS, c.len);
	if (proto == bpf_htons(ETH_P_IP))
		err = lv_parse_ipv4(&cur, &pkt);
	else if (proto == bpf_htons(ETH_P_IPV6))
		err = lv_parse_ipv6(&cur, &pkt);
	else
		return lv_exit(c.pc, LV_R_NOT_IP, LV_NO_CLASS, c.len);
	if (err)
		return lv_exit(c.pc, -err, LV_NO_CLASS, c.len);

	/* One load of the active slot; the whole packet uses that slot and its tries. The
	 * slot address depends on the loaded index, which orders the reads after it. */
	slot = LV_READ_ONCE(ctl->active) & 1;
	c.pol = &ctl->slot[slot];
	c.ctl = ctl;
	c.pkt = &pkt;
	c.class_id = lv_classify(c.pol, &pkt);
	c.cls = &c.pol->classes[c.class_id];
	lv_key_mask(&c.key, pkt.addr, pkt.family, c.cls->mask4, c.cls->mask6, c.class_id, 0, c.cls->epoch);
	c.now = lv_clock_cached(&c.pc->clock);
	if (lv_hot_rejects(&c))
		return lv_exit(c.pc, lv_mode(&c, c.pc->hot.reason), c.class_id, c.len);

	c.lim.pkt = &c.cls->pkt;
	c.lim.bytes = &c.cls->bytes;
	c.lim.flags = c.cls->flags;
	entry = lv_list_lookup(slot, c.pol, &pkt);
	if (entry) {
		/* On the cached clock: an expired deny may match up to a tick longer. */
		struct lv_list_verdict d = lv_list_decide(entry, c.now);

		if (d.kind == LV_LIST_ALLOW)
			return lv_exit(c.pc, LV_R_ALLOW, c.class_id, c.len);
		if (d.kind == LV_LIST_DENY)
			return lv_exit(c.pc, lv_mode(&c, LV_R_DENY), c.class_id, c.len);
		if (d.kind == LV_LIST_OVERRIDE && d.override_id < LV_MAX_OVERRIDES) {
			const struct lv_override *o = &c.pol->overrides[d.override_id];

			if ((o->classes >> c.class_id) & 1) {
				c.lim.pkt = &o->pkt;
				c.lim.bytes = &o->bytes;
				c.lim.flags = o->flags;
			}
		}
	}
	if (lv_banned_elsewhere(&c, &until))
		return lv_exit(c.pc, lv_mode(&c, lv_reject(&c, NULL, until, LV_R_BAN, LV_R_BAN)), c.class_id, c.len);

	c.sh = bpf_map_lookup_elem(&lv_shared, &c.class_id);
	if (!c.sh) /* cannot happen: the array has an entry for every class id */
		return lv_exit(c.pc, LV_R_MAP_FULL, c.class_id, c.len);
	r = lv_limit(&c);
	if (r == LV_R_ADMISSION)
		lv_event_every(&c, &c.sh->admit_event_ns, LV_EV_ADMISSION, r);
	else if (r == LV_R_MAP_FULL)
		lv_event_every(&c, &c.sh->full_event_ns, LV_EV_MAP_FULL, r);
	return lv_exit(c.pc, lv_mode(&c, r), c.class_id, c.len);
}

SEC("xdp")
int levee_xdp(struct xdp_md *ctx)
{
	return levee_main(ctx);
}
