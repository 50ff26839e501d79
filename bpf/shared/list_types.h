/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * list_types.h - the allow, deny and override lists (per policy slot) and CrowdSec's
 * decisions (apart from them): keys and values of their tries and host hashes.
 */
#ifndef LEVEE_LIST_TYPES_H
#define LEVEE_LIST_TYPES_H

#include "common_types.h"

/*
 * ---- lists: per policy slot, a hash of host entries (a /32 or /128: most lists are
 * mostly hosts, and a hash lookup costs a fraction of a trie walk) and an LPM trie of
 * the rest, per family: lv_host{4,6}_{0,1}, lv_list{4,6}_{0,1}. A host entry is the
 * most specific an address can match, so when it exists it decides; otherwise the
 * trie does. Userspace sees one list per family (PolicyMap splits and merges).
 */

struct lv_lpm4 {
	__u32 prefixlen;
	__u32 addr; /* network byte order */
};

struct lv_lpm6 {
	__u32 prefixlen;
	__u32 addr[4];
};

struct lv_in6 {
	__u32 addr[4];
};

enum lv_list_kind {
	LV_LIST_NONE = 0, /* no entry: limited by its class */
	LV_LIST_ALLOW = 1,
	LV_LIST_DENY = 2,
	LV_LIST_OVERRIDE = 3,
};

enum lv_list_origin {
	LV_ORIGIN_CONFIG = 0, /* from the config file: replaced by a reload */
	LV_ORIGIN_CLI = 1,    /* levee allow|deny|override add: kept across reloads */
	LV_ORIGIN_IMPORT = 2, /* levee deny import: kept across reloads */
};

/*
 * The allow, deny and override lists are one trie per family: the most specific entry
 * for an address decides (for one prefix, allow beats deny beats override). A deny
 * entry may expire; once it has, the entry covering it decides. The controller stores
 * that entry's verdict in it (after_*), whenever the lists change; when the covering
 * entry expires too, later, the one covering both (then_*) decides. Deeper nestings of
 * expiring entries skip to the nearest entry that never expires.
 */
struct lv_list_value {
	__u8 kind;         /* enum lv_list_kind */
	__u8 origin;       /* enum lv_list_origin */
	__u16 override_id; /* LV_LIST_OVERRIDE: index into lv_policy.overrides */
	__u8 after_kind;   /* once this entry expired: the covering entry's kind */
	__u8 then_kind;    /* once that one expired too */
	__u16 after_override;
	__u64 expires_ns;       /* CLOCK_MONOTONIC ns this entry stops matching at; 0 = never */
	__u64 after_expires_ns; /* when the covering entry stops; 0 = never */
	__u16 then_override;
	__u8 pad[6];
};

/*
 * ---- CrowdSec decisions: lv_cs_host{4,6} (hashes of single addresses) and
 * lv_cs_net{4,6} (LPM tries of ranges), written only by the bouncer of `levee run`
 * (userspace/daemon/bouncer.*). A list of their own, apart from the operator's: not per
 * policy slot (a reload does not touch them), checked after the operator's allow and
 * deny lists, so an allow-listed network is never dropped by a fleet decision. Each
 * entry expires in the datapath (expires_ns against the program's clock), so a stale one
 * stops matching even when the daemon is gone.
 */
struct lv_cs_value {
	__u64 expires_ns; /* CLOCK_MONOTONIC ns this decision stops matching at */
	__u64 id;         /* the LAPI's decision id: a delete must name the one held */
};

/* lv_control.cs_present: a bit per CrowdSec map that may hold entries; 0 skips the
 * lookups. Set before the first entry is written, cleared after the last is gone. */
enum lv_cs_present {
	LV_CS_HOST4 = 1u << 0,
	LV_CS_NET4 = 1u << 1,
	LV_CS_HOST6 = 1u << 2,
	LV_CS_NET6 = 1u << 3,
};

#ifndef __bpf__
LV_STATIC_ASSERT(sizeof(struct lv_list_value) == 32, "lv_list_value layout");
LV_STATIC_ASSERT(sizeof(struct lv_cs_value) == 16, "lv_cs_value layout");
#endif

#endif /* LEVEE_LIST_TYPES_H */
