/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * syn_marks.h - what SYN authentication remembers between packets (syn_cells.h): the
 * retry pass a reset-mode RST leaves, the fresh marks of proxy mode, and the known-good
 * mark a proof makes, bounded per network.
 */
#ifndef LEVEE_SYN_MARKS_H
#define LEVEE_SYN_MARKS_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "syn_frame.h"
#include "cas.h"
#include "good.h"
#include "syn_cells.h"
#include "syn_rate.h"

/* ---- what is remembered (syn_cells.h) ----------------------------------------------- */

static __always_inline __u64 *lv_syn_cell_at(__u32 i)
{
	return bpf_map_lookup_elem(&lv_syn, &i);
}

/* The hash of the staged packet's connection (its cookie input), for its retry pass. */
static __always_inline __u64 lv_conn_hash(const struct lv_cookie_in *in, __u32 seed)
{
	__u64 h = seed;
	int i;

#pragma unroll
	for (i = 0; i < 4; i++)
		h = (h ^ ((__u64)in->saddr[i] << 32 | in->daddr[i])) * 0x9E3779B97F4A7C15ULL;
	return (h ^ ((__u64)in->sport << 16 | in->dport)) * 0xC2B2AE3D27D4EB4FULL;
}

/* Reset mode: a RST returned the cookie of the connection `in`: its retried SYN may
 * pass. (Two connections on one cell: the later one's pass stands.) */
static __always_inline void lv_retry_give(const struct lv_control *ctl, __u64 now, const struct lv_cookie_in *in)
{
	__u64 h = lv_conn_hash(in, ctl->seen_seed);
	__u64 *cell = lv_syn_cell_at(lv_syn_cell(h, LV_SYN_RETRY_AT, LV_SYN_RETRY_LOG2));

	if (cell)
		LV_WRITE_ONCE(*cell, lv_syn_tag(h) | lv_syn_tick(now));
}

/* ...and the SYN of connection `in` takes its pass, if it has one: once. */
static __always_inline int lv_retry_take(const struct lv_control *ctl, __u64 now, const struct lv_cookie_in *in)
{
	__u64 h = lv_conn_hash(in, ctl->seen_seed);
	__u64 *cell = lv_syn_cell_at(lv_syn_cell(h, LV_SYN_RETRY_AT, LV_SYN_RETRY_LOG2));
	__u64 v;

	if (!cell)
		return 0;
	v = LV_READ_ONCE(*cell);
	if (!lv_syn_stamped(v, lv_syn_tag(h), lv_syn_tick(now), LV_SYN_RETRY_TICKS))
		return 0;
	return __sync_val_compare_and_swap(cell, v, 0) == v;
}

/* The fresh mark of a known-good source whose hash (lv_seen_hash64()) is `h`: marked
 * within a cookie's lifetime? */
static __always_inline int lv_fresh(const struct lv_ctx *c, __u64 h)
{
	__u64 *cell = lv_syn_cell_at(lv_syn_cell(h, LV_SYN_FRESH_AT, LV_SYN_FRESH_LOG2));

	return cell && lv_syn_stamped(LV_READ_ONCE(*cell), lv_syn_tag(h), lv_syn_tick(c->now), LV_SYN_FRESH_TICKS);
}

/*
 * Mark the packet's source known-good for a proof the datapath saw, within its
 * network's marks (syn_cells.h), and stamp the mark fresh. Returns whether it marked.
 */
static __always_inline int lv_syn_mark(struct lv_ctx *c)
{
	__u64 h = lv_answer_net_hash(c->pol, c->pkt, c->ctl->seen_seed), *cell, v, next;
	__u32 epoch = LV_READ_ONCE(c->ctl->good_epoch);

	cell = lv_syn_cell_at(lv_syn_cell(h, 0, LV_SYN_MARK_LOG2));
	if (!cell)
		return 0;
	v = LV_READ_ONCE(*cell);
	LV_CAS_LOOP
	for (int i = 0; i < LV_CAS_TRIES; i++) {
		__u64 seen;

		next = lv_syn_mark_take(v, epoch, c->pol->answer.marks_per_network);
		if (!next) {
			c->pc->marks_capped++;
			return 0;
		}
		seen = __sync_val_compare_and_swap(cell, v, next);
		if (seen == v)
			break;
		v = seen;
	}
	/* Fresh before known-good: a packet of the source on another CPU that finds it
	 * known-good must find the mark fresh too, or an ACK of a handshake answered before
	 * the mark would go on without its hand-off (and the listener reset it). */
	h = lv_seen_hash64(&c->key, c->ctl->seen_seed);
	cell = lv_syn_cell_at(lv_syn_cell(h, LV_SYN_FRESH_AT, LV_SYN_FRESH_LOG2));
	if (cell)
		LV_WRITE_ONCE(*cell, lv_syn_tag(h) | lv_syn_tick(c->now));
	lv_good_mark(c);
	return 1;
}

#endif /* LEVEE_SYN_MARKS_H */
