/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * crowdsec.h - CrowdSec decisions (struct lv_cs_value): is the packet's source under
 * one that has not expired? The host hash first, then the trie of ranges, each only when
 * lv_control.cs_present says its map may hold entries.
 */
#ifndef LEVEE_CROWDSEC_H
#define LEVEE_CROWDSEC_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "rules.h"
#include "context.h"
#include "maps.h"
#include "parse.h"

/* On the cached clock, as the deny list's expiry: a decision may match up to a tick
 * longer than its expiry. */
static __always_inline int lv_cs_live(const struct lv_cs_value *v, __u64 now)
{
	return v && lv_cs_in_force(v, now);
}

/* True when a decision in force covers the source. An expired host entry does not hide
 * a range that covers it: the trie is asked too. */
static __always_inline int lv_crowdsec(const struct lv_ctx *c)
{
	const __u32 present = LV_READ_ONCE(c->ctl->cs_present);
	const struct lv_packet *pkt = c->pkt;

	if (!present)
		return 0;
	if (pkt->family == LV_AF_INET) {
		__u32 host = pkt->addr[3];
		struct lv_lpm4 k = { .prefixlen = 32, .addr = pkt->addr[3] };

		if ((present & LV_CS_HOST4) && lv_cs_live(bpf_map_lookup_elem(&lv_cs_host4, &host), c->now))
			return 1;
		return (present & LV_CS_NET4) && lv_cs_live(bpf_map_lookup_elem(&lv_cs_net4, &k), c->now);
	}
	struct lv_lpm6 k = { .prefixlen = 128 };
	struct lv_in6 host;

	__builtin_memcpy(host.addr, pkt->addr, sizeof(host.addr));
	__builtin_memcpy(k.addr, pkt->addr, sizeof(k.addr));
	if ((present & LV_CS_HOST6) && lv_cs_live(bpf_map_lookup_elem(&lv_cs_host6, &host), c->now))
		return 1;
	return (present & LV_CS_NET6) && lv_cs_live(bpf_map_lookup_elem(&lv_cs_net6, &k), c->now);
}

#endif /* LEVEE_CROWDSEC_H */
