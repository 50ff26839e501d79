// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * levee.bpf.c - the XDP entry, in this order:
 *
 *   parse -> classify -> this CPU's last rejected source -> the operator's lists ->
 *   the fleet's CrowdSec decisions -> a ban from another class -> lv_limit(): SYN
 *   authentication's gate for TCP of an unproven source (synauth.h), then the
 *   admission of new sources, the source's own limits, its network and class levels,
 *   bans -> one counted exit.
 *
 * and the tc program of SYN authentication's proxy mode (handoff.h), which hands a
 * proven connection to its listener.
 *
 * Per packet: two one-entry array lookups (counters, policy; both inlined by the
 * verifier), the parse, one byte of the class table, the list trie when the policy has
 * list entries for the family, one LRU lookup, and a clock read. The drop path of a
 * flooding source, for classes whose burst allows it, reads no fine clock, writes
 * nothing shared and mostly skips the LRU lookup (struct lv_hot).
 *
 * Each step lives in a header named for it; every packet leaves through lv_exit().
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "maps.h"
#include "parse.h"    /* the frame up to its transport header */
#include "context.h"  /* its class, its source's key, the cached clock */
#include "hot.h"      /* a flooding source's next packet, and every reject */
#include "lists.h"    /* allow, deny, override */
#include "crowdsec.h" /* the fleet's decisions (levee run's bouncer) */
#include "bans.h"     /* a ban from another class */
#include "limit.h"    /* the source, its network, its class as a whole */
#include "events.h"   /* class-wide conditions for the event log */
#include "exit.h"     /* the one counted exit, monitor mode */
#include "handoff.h"  /* tc: a connection SYN authentication proved, to its listener */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The whole pipeline, inlined into the entry below (and into benchmark variants that
 * include this file). */
static __always_inline int levee_main(struct xdp_md *ctx)
{
	struct lv_cursor cur = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	struct lv_control *ctl;
	struct lv_packet pkt;
	struct lv_ctx c = {};
	__u32 zero = 0, slot, r;
	__u64 until;

	c.len = cur.end - cur.pos;
	c.pc = bpf_map_lookup_elem(&lv_percpu, &zero);
	ctl = bpf_map_lookup_elem(&lv_policy, &zero);
	if (!c.pc || !ctl) /* cannot happen: one-entry arrays */
		return XDP_PASS;
	r = lv_parse(&cur, &pkt);
	if (r != LV_R_CONFORMING)
		return lv_exit(c.pc, r, LV_NO_CLASS, c.len);

	/* One load of the active slot; the whole packet uses that slot and its tries. The
	 * slot address depends on the loaded index, which orders the reads after it. */
	slot = LV_READ_ONCE(ctl->active) & 1;
	lv_ctx_init(&c, ctl, slot, &pkt);
	r = lv_hot_rejects(&c, c.pc->hot_last); /* its last rejected source again, before the lists */
	if (r)
		return lv_exit(c.pc, lv_mode(&c, r), c.class_id, c.len);

	r = lv_lists(&c, slot);
	if (r == LV_R_ALLOW)
		return lv_exit(c.pc, LV_R_ALLOW, c.class_id, c.len);
	if (r == LV_R_DENY)
		return lv_exit(c.pc, lv_mode(&c, LV_R_DENY), c.class_id, c.len);
	/* After the operator's lists: their allow wins over a fleet decision. Monitor mode
	 * counts it as a would-be drop (LV_MONITORABLE). Known gap in the reason, not the
	 * verdict: a source lv_hot_rejects() remembers for a limit is dropped above under that
	 * limit's reason until its ready time passes, without reaching this check. */
	if (lv_crowdsec(&c))
		return lv_exit(c.pc, lv_mode(&c, LV_R_CROWDSEC), c.class_id, c.len);
	if (lv_banned_elsewhere(&c, &until))
		return lv_exit(c.pc, lv_mode(&c, lv_reject(&c, NULL, until, LV_R_BAN, LV_R_BAN)), c.class_id, c.len);

	c.sh = bpf_map_lookup_elem(&lv_shared, &c.class_id);
	if (!c.sh) /* cannot happen: the array has an entry for every class id */
		return lv_exit(c.pc, LV_R_MAP_FULL, c.class_id, c.len);
	r = lv_limit(&c, ctx);
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

SEC("tc")
int levee_handoff(struct __sk_buff *skb)
{
	return lv_handoff(skb);
}
