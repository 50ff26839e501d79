/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * syn_auto.h - syn_auth = "auto" (LV_CLASS_SYN_AUTO): SYN authentication that the
 * autopilot engages. While the class is calm, its TCP goes on as in a class without
 * it, at the cost of one flag and two per-CPU reads. Once the class is engaged (a
 * flood of new sources, arrival.h), or the source's network is escalated (watch.h), the
 * TCP of a source without state (not known to lv_seen: never seen, or on probation)
 * passes SYN authentication's gate (synauth.h) instead of admission or the escalated
 * network's refusal: a real client proves its address with one handshake and is
 * known-good, which admission lets in; a spoofed SYN gets a cookie and nothing else. A
 * source with state keeps its limits and is not asked: it arrived while the class was
 * calm, or was admitted by it.
 *
 * Each packet the gate takes counts for the autopilot as the arrival it would have
 * been: an escalated network's as that network's refusal, which keeps it escalated;
 * any other against the class's threshold, and over it noted (lv_guard_note()), so
 * that a flood the gate holds keeps the class engaged instead of releasing it and
 * spending admission's budget at every release. The class releases once calm, as with
 * admission alone: the first packet to find it calm says so.
 *
 * Known limits: a client whose stack never completes the proxied handshake or answers a
 * wrong SYN-ACK with a RST (reset mode) waits until the class is calm. A flood of
 * ACKs from spoofed sources costs a cookie check and a socket lookup each while the
 * class is engaged or their network escalated, as in a class with syn_auth always on;
 * a SYN flood of an escalated network, an answer each (within the answer rates) where
 * it was a drop.
 */
#ifndef LEVEE_SYN_AUTO_H
#define LEVEE_SYN_AUTO_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "limiter.h"
#include "arrival.h"
#include "context.h"
#include "good.h"
#include "seen.h"
#include "watch.h"

/* The gate's packet, as the arrival it stands for: within the threshold it takes its
 * share of it; over it, it is abnormal and keeps the class engaged. */
static __always_inline void lv_syn_auto_arrival(struct lv_ctx *c)
{
	__u64 ready = LV_READ_ONCE(c->sh->admit_ready);

	if (lv_gcra_conforms(ready, c->now) && lv_gcra_take(&c->sh->admit_ready, ready, c->now, lv_guard_cost_now(c),
							    c->cls->autop.burst_ns, LV_R_ADMISSION) == LV_R_CONFORMING)
		return;
	lv_guard_note(c);
}

/* May a network of the class be escalated (watch.h)? Calm, as this CPU knows: a
 * refusal or a sample since the escalation told it, and a calm class's TCP reads no
 * more. Engaged, the class's own word, which lv_watch_refuses_unseen() reads: every
 * such packet of a source without state goes to the gate, so none of them would tell
 * this CPU. */
static __always_inline int lv_syn_auto_escalation(struct lv_ctx *c, int engaged)
{
	return lv_escalation_guards_admission(c->cls) &&
	       (engaged || !lv_gcra_conforms(lv_pilot_of(c)->escalated_until_ns, c->now));
}

/* What lv_syn_auto_gates() says of a packet. */
enum lv_syn_auto_says {
	LV_AUTO_ON = 0,         /* not the gate's: on to the limits */
	LV_AUTO_GATE = 1,       /* the gate's */
	LV_AUTO_NETWORK_OK = 2, /* not the gate's, and its network was asked: not escalated,
				 * so lv_limit() does not ask again */
};

/*
 * Does SYN authentication's gate take this packet of a class with syn_auth = "auto"?
 * Only TCP, only of a source without state, and only while the class is engaged (this
 * CPU's memory of it first, which an arrival since the engagement has set) or the
 * source's network is escalated. A new client of an escalated network would otherwise
 * wait, refused with that network's flood, until it is calm (watch.h): the gate lets it
 * prove itself instead. Such a packet is the network's, not an arrival of the class:
 * it keeps the network escalated (lv_watch_refuses_unseen(), whose display count of the
 * network's refusals so has it) and spends none of the budget others share.
 */
static __always_inline enum lv_syn_auto_says lv_syn_auto_gates(struct lv_ctx *c)
{
	int engaged, escalation;

	if (!(c->cls->flags & LV_CLASS_SYN_AUTO) || (c->pkt->kind != LV_L4_TCP_SYN && c->pkt->kind != LV_L4_TCP))
		return LV_AUTO_ON;
	engaged = lv_pilot_engaged(c);
	if (engaged && lv_guard_is_calm(c)) {
		lv_guard_release(c, c->now);
		lv_pilot_of(c)->engaged = 0;
		engaged = 0;
	}
	escalation = lv_syn_auto_escalation(c, engaged);
	if (!engaged && !escalation)
		return LV_AUTO_ON;
	/* A source that may have state: the gate for a known-good one's ACK, which may
	 * return the cookie of a connection opened beside the one that proved it (synauth.h:
	 * the gate hands it to the listener, which never saw its SYN), and for one that
	 * arrived with its escalated network's run-up (watch.h), which proves itself as a
	 * new one would. */
	if (lv_seen_check(c) & LV_SEEN_KNOWN) {
		if (c->pkt->kind == LV_L4_TCP && lv_good_known(c))
			return LV_AUTO_GATE;
		if (!escalation || lv_gcra_conforms(LV_READ_ONCE(c->sh->escalated_until_ns), c->now))
			return LV_AUTO_ON; /* (no network of the class escalated now) */
		lv_stage(c);
		return lv_watch_runup_gates() ? LV_AUTO_GATE : LV_AUTO_ON;
	}
	if (escalation && lv_watch_refuses_unseen(c))
		return LV_AUTO_GATE;
	if (!engaged)
		return LV_AUTO_NETWORK_OK; /* (escalation: asked) */
	lv_syn_auto_arrival(c);
	return LV_AUTO_GATE;
}

#endif /* LEVEE_SYN_AUTO_H */
