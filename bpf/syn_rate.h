/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * syn_rate.h - what levee may answer (struct lv_answer): the SYN-ACKs towards one
 * network, and all of one CPU's, each a GCRA; a network refused is named in an event
 * at most once per LV_ANSWER_SAY_NS.
 */
#ifndef LEVEE_SYN_RATE_H
#define LEVEE_SYN_RATE_H

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
#include "events.h"

/* ---- what levee may answer ---------------------------------------------------------- */

/* The hash of a source's network under the answer prefix (struct lv_answer): its answer
 * cell's, and its mark count's (syn_cells.h). */
static __always_inline __u64 lv_answer_net_hash(const struct lv_policy *pol, const struct lv_packet *pkt, __u32 seed)
{
	const struct lv_answer *a = &pol->answer;
	const __u32 *addr = pkt->addr;
	__u64 h;

	if (pkt->family == LV_AF_INET)
		h = (__u64)(addr[3] & a->mask4) * 0x9E3779B97F4A7C15ULL;
	else
		h = (((__u64)(addr[0] & a->mask6[0]) << 32 | (addr[1] & a->mask6[1])) * 0x9E3779B97F4A7C15ULL) ^
		    (((__u64)(addr[2] & a->mask6[2]) << 32 | (addr[3] & a->mask6[3])) * 0xC2B2AE3D27D4EB4FULL);
	return h ^ seed;
}

/* The answer cell of the staged packet's network (NULL: none; cannot happen). */
static __always_inline struct lv_answer_cell *lv_answer_cell_of(const struct lv_policy *pol,
								const struct lv_packet *pkt, __u32 seed)
{
	__u32 i = (__u32)(lv_answer_net_hash(pol, pkt, seed) >> (64 - LV_ANSWER_LOG2));

	return bpf_map_lookup_elem(&lv_answers, &i);
}

/* What the answer rates say of a SYN, read only (before it is judged: a flood over its
 * network's rate is refused at the cost of one read). */
enum lv_answer_says {
	LV_ANSWER_WITHIN = 0,
	LV_ANSWER_OVER = 1, /* over a rate: refused (LV_R_ANSWER_LIMIT) */
	LV_ANSWER_SAY = 2,  /* ...and its cell has not said so lately (lv_syn_say()) */
};

static __always_inline int lv_answer_over(const struct lv_syn_ctx *s)
{
	const struct lv_answer *a = &s->pol->answer;
	struct lv_answer_cell *cell;
	__u64 said, now = s->q->now;

	if (a->cap_per_cpu.cost && !lv_gcra_conforms(s->pc->answer_ready, now))
		return LV_ANSWER_OVER;
	if (!a->per_network.cost)
		return LV_ANSWER_WITHIN;
	cell = lv_answer_cell_of(s->pol, &s->q->pkt, s->ctl->seen_seed);
	if (!cell || lv_gcra_conforms(LV_READ_ONCE(cell->ready), now))
		return cell ? LV_ANSWER_WITHIN : LV_ANSWER_OVER;
	said = LV_READ_ONCE(cell->said_ns);
	return said && (__s64)(now - said) < (__s64)LV_ANSWER_SAY_NS ? LV_ANSWER_OVER : LV_ANSWER_SAY;
}

/*
 * Is a SYN-ACK towards this source's network, and from this CPU, within what levee may
 * send (struct lv_answer)? Charges both when it is.
 */
static __always_inline int lv_answer_take(const struct lv_syn_ctx *s)
{
	const struct lv_answer *a = &s->pol->answer;
	struct lv_answer_cell *cell;
	__u64 now = s->q->now;

	if (a->cap_per_cpu.cost && !lv_gcra_conforms(s->pc->answer_ready, now))
		return 0;
	if (a->per_network.cost) {
		cell = lv_answer_cell_of(s->pol, &s->q->pkt, s->ctl->seen_seed);
		if (!cell || lv_gcra_take(&cell->ready, LV_READ_ONCE(cell->ready), now, a->per_network.cost,
					  a->per_network.tau_ns, 1))
			return 0;
	}
	if (a->cap_per_cpu.cost)
		s->pc->answer_ready =
			lv_gcra_after(s->pc->answer_ready, now, a->cap_per_cpu.cost, a->cap_per_cpu.tau_ns);
	return 1;
}

/* A network's answers were refused: an event naming it, once per LV_ANSWER_SAY_NS per
 * cell (the CPU that wins the CAS sends it), so a flood raises a handful, not one a
 * SYN. A global function (an event needs the packet's whole context): LV_R_ANSWER_LIMIT. */
__attribute__((noinline)) __u32 lv_syn_say(struct xdp_md *ctx)
{
	const struct lv_answer *a;
	struct lv_answer_cell *cell;
	struct lv_ctx c = {};
	struct lv_key net;
	__u64 said;

	if (!ctx || !lv_unstage(&c))
		return LV_R_ANSWER_LIMIT;
	a = &c.pol->answer;
	cell = lv_answer_cell_of(c.pol, c.pkt, c.ctl->seen_seed);
	if (!cell)
		return LV_R_ANSWER_LIMIT;
	said = LV_READ_ONCE(cell->said_ns);
	if (said && (__s64)(c.now - said) < (__s64)LV_ANSWER_SAY_NS)
		return LV_R_ANSWER_LIMIT;
	if (__sync_val_compare_and_swap(&cell->said_ns, said, c.now) != said)
		return LV_R_ANSWER_LIMIT;
	lv_key_mask(&net, c.pkt->addr, c.pkt->family, a->mask4, a->mask6, 0, 0, 0);
	lv_event_of(&c, net.addr, LV_EV_ANSWER_LIMITED, LV_R_ANSWER_LIMIT, 0, a->per_network.rate);
	return LV_R_ANSWER_LIMIT;
}

#endif /* LEVEE_SYN_RATE_H */
