/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * lists.h - the allow, deny and override lists (struct lv_list_value): the entry for a
 * packet's source in the active slot's maps, and what it decides (rules.h).
 */
#ifndef LEVEE_LISTS_H
#define LEVEE_LISTS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "rules.h"
#include "context.h"
#include "maps.h"
#include "parse.h"

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

/*
 * The lists' decision for the packet: LV_R_ALLOW, LV_R_DENY, or LV_R_CONFORMING for
 * "go on to the limits", with c->lim the limits that apply there (its class's, or an
 * override's in force for this class).
 */
static __always_inline __u32 lv_lists(struct lv_ctx *c, __u32 slot)
{
	const struct lv_list_value *entry;
	struct lv_list_verdict d;

	lv_ctx_limits(c, LV_MAX_OVERRIDES);
	entry = lv_list_lookup(slot, c->pol, c->pkt);
	if (!entry)
		return LV_R_CONFORMING;
	/* On the cached clock: an expired deny may match up to a tick longer. */
	d = lv_list_decide(entry, c->now);
	if (d.kind == LV_LIST_ALLOW)
		return LV_R_ALLOW;
	if (d.kind == LV_LIST_DENY)
		return LV_R_DENY;
	if (d.kind == LV_LIST_OVERRIDE)
		lv_ctx_limits(c, d.override_id);
	return LV_R_CONFORMING;
}

#endif /* LEVEE_LISTS_H */
