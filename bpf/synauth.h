/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * synauth.h - SYN authentication (LV_CLASS_SYN_AUTH): a TCP source proves its address
 * before it gets state. This file holds the gate (lv_syn_gate(), called by limit.h
 * before any budget); each step it calls is a file of its own, by job:
 *
 *   syn_frame.h    the steps' shared context, and where the IP and TCP headers are
 *   syn_answer.h   a SYN: judged, and answered with a cookie (proxy or reset mode)
 *   syn_rate.h     how much levee may answer, per network and per CPU
 *   synack.h       the SYN-ACK's bytes, one writer per family, and the SYN's options
 *   syn_where.h    what a SYN's destination is to this host (local, forwarded, ...)
 *   syn_proof.h    what proves a source: a RST's or an ACK's cookie, a connection
 *   syn_marks.h    what is remembered between packets (syn_cells.h): retry passes,
 *                  fresh marks, known-good marks per network
 *
 * A SYN of a source that has not proved it (not known-good) is answered here, with a
 * SYN-ACK that carries a cookie (syncookie.h), sent back out of the interface (XDP_TX);
 * nothing is kept. A spoofed source never sees the SYN-ACK, so it never returns the
 * cookie. Only a SYN a stack would answer is answered (syn_where.h): proper (no RST or
 * FIN with it, a data offset that fits, a good checksum), from and to unicast
 * addresses and MACs, to this host's own address with a listener on the port, or to a
 * host behind it. How a real client returns the cookie, two modes:
 *
 * - Proxy (where levee's tc program is on the interface, lv_control.handoff, and the
 *   listener is here and takes a hand-off). The SYN-ACK is a proper one: its sequence
 *   number is the cookie, and it offers the options the SYN asked for and the
 *   listener's namespace allows (tcp_options.h, lv_control.tcp_off), which the cookie's
 *   low byte keeps. The client's ACK returns the cookie (its acknowledgment number less
 *   one) and, with timestamps, echoes levee's TSval; it passes (LV_R_PROXIED) with the
 *   cookie in the frame's metadata, and the tc program (handoff.h) hands it to the
 *   listener as the request socket the kernel would have made: the first connection
 *   completes at once. Every ACK that returns a good cookie is handed over, also one
 *   that comes after its source was marked known-good (a client that opened several
 *   connections at once: syn_cells.h's fresh marks).
 * - Reset (LV_CLASS_SYN_RESET, no tc program, a listener that takes no hand-off, or a
 *   host behind this one). The SYN-ACK's acknowledgment number is the cookie. A real
 *   client's stack finds it wrong and answers with a RST whose sequence number is the
 *   cookie (RFC 9293, SYN-SENT), and retransmits its SYN a second later. The RST goes
 *   no further (LV_R_VERIFIED) and leaves a pass for that one connection
 *   (syn_cells.h): the retransmitted SYN goes to the listener (LV_R_RETRIED), which
 *   answers it itself. A RST proves no more than that: every host answers a SYN-ACK it
 *   did not ask for with one, so a SYN spoofed from a real host makes that host's own
 *   stack return the cookie.
 *
 * What makes a source known-good (good.h), so that its TCP goes straight on: a proxied
 * handshake whose ACK echoed levee's timestamp, or a connection the host has that
 * carried the host's data to the client and back (bytes_acked): the connection's own
 * sequence numbers proved it. Marks per network are bounded (syn_cells.h). A
 * connection proxied without timestamps marks nothing: its ACK was a 2^-23 guess.
 *
 * Anything else of a source that is not known-good goes on only if it belongs to a
 * connection the host has (an established one: on to the limits; one the host is
 * opening: passed, LV_R_OPENING, for the stack to check); else it is nothing the host
 * asked for: dropped (LV_R_UNVERIFIED). State is no proof, so this is asked of every
 * such packet until the connection proves its source. An ACK or RST flood from spoofed
 * sources is so dropped after one cookie check and one socket lookup.
 *
 * What levee answers is limited (struct lv_answer), per destination network and in all,
 * so that a flood spoofing one victim's addresses does not make levee its hose.
 *
 * Known limits: in reset mode, the first connection of a new client waits for its
 * SYN's retransmission, and a client whose stack does not answer a wrong SYN-ACK with a
 * RST never gets in; a SYN spoofed from a real host, and that host's RST, let one more
 * spoofed SYN of that connection through to the listener (which answers the real
 * host). In proxy mode, an ACK the stack drops after levee verified it is not handed
 * again. A SYN that carries data (TCP Fast Open) is answered without its checksum
 * checked, and its data is not kept: the client sends it again.
 */
#ifndef LEVEE_SYNAUTH_H
#define LEVEE_SYNAUTH_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "good.h"
#include "syn_answer.h"
#include "syn_frame.h"
#include "syn_proof.h"

/* ---- the gate ----------------------------------------------------------------------------- */

static __always_inline int lv_syn_protected(const struct lv_ctx *c)
{
	return (c->cls->flags & LV_CLASS_SYN_AUTH) && (c->pkt->kind == LV_L4_TCP_SYN || c->pkt->kind == LV_L4_TCP);
}

/*
 * A TCP packet in a class with SYN authentication: 0 when it goes on to the limits,
 * else its reason. Only a known-good source goes on at once: state is no proof (a
 * packet of a connection the host had before levee attached, or of a source from
 * before the class authenticated, made it). Reading lv_good alone here, not lv_seen,
 * and its summary first (shared/filters.h), leaves most spoofed SYNs no cold line at all.
 * A known-good source marked lately still has its ACKs' cookies checked (lv_syn_ack()).
 */
static __always_inline __u32 lv_syn_gate(struct lv_ctx *c, struct xdp_md *xdp)
{
	__u64 h;
	__u32 r;

	if (lv_good_known_hash(c, &h)) {
		if (!lv_syn_may_proxy(c->ctl, c->cls) || c->pkt->kind != LV_L4_TCP || !lv_fresh(c, h))
			return 0;
		lv_stage(c);
		return lv_syn_ack(xdp, 1) == LV_R_PROXIED ? LV_R_PROXIED : 0;
	}
	lv_stage(c);
	r = c->pkt->kind == LV_L4_TCP_SYN ? lv_syn_check(xdp) : lv_syn_reply(xdp);
	if (r == LV_SYN_SAY)
		r = lv_syn_say(xdp);
	else if (r == LV_SYN_ANSWER_PROXY)
		r = lv_syn_proxy(xdp);
	else if (r == LV_SYN_ANSWER_RESET)
		r = lv_syn_reset(xdp);
	else if (r == LV_SYN_CHECK_ACK)
		r = lv_syn_ack(xdp, 0) ?: LV_SYN_OTHER;
	if (r == LV_SYN_OTHER)
		r = lv_syn_other(xdp);
	return r & (LV_REASON_MAX - 1); /* a global function's result is unbounded */
}

#endif /* LEVEE_SYNAUTH_H */
