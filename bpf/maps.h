/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* maps.h - the maps of the levee XDP program. Layouts are in levee_abi.h. */
#ifndef LEVEE_MAPS_H
#define LEVEE_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"
#include "tunables.h"
#include "syn_cells.h"

/*
 * Per (source prefix, class) limiter state. LRU so that a full map evicts the least
 * recently seen source instead of refusing new ones; common (not per-CPU) LRU lists so
 * every CPU can use the whole map. The controller sets max_entries before load
 * (--max-sources, default LV_DEFAULT_MAX_SOURCES: ~129 MB at 1M entries).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LV_DEFAULT_MAX_SOURCES);
	__type(key, struct lv_key);
	__type(value, struct lv_state);
} lv_state SEC(".maps");

/* The policy: two slots and the index of the active one (see struct lv_control).
 * Mmapable so the controller flips the index with one atomic store. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct lv_control);
} lv_policy SEC(".maps");

/* Per-class budgets shared by every CPU (struct lv_shared); mmapable so the controller
 * can adjust the source count atomically. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LV_MAX_CLASSES + 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct lv_shared);
} lv_shared SEC(".maps");

/* Ban records (struct lv_ban). LRU: a record evicted early loses the offence history
 * of a source, never lifts a ban (the ban lives in the source's state too). The
 * controller sets max_entries before load (max_bans, default LV_DEFAULT_MAX_BANS). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LV_DEFAULT_MAX_BANS);
	__type(key, struct lv_key);
	__type(value, struct lv_ban);
} lv_bans SEC(".maps");

/* The known-source filter (lv_seen_hash()): two halves of LV_SEEN_WORDS word pairs
 * (2 x 2 MB). Mmapable so the controller can refill a half with atomic ORs beside the
 * datapath's. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * LV_SEEN_WORDS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct lv_seen_pair);
} lv_seen SEC(".maps");

/* The known-good filter (lv_good_bits()): two halves of LV_SEEN_WORDS words (2 x 1 MB),
 * the words of lv_seen's, then their summaries (lv_good_sum_entry(): 2 x 64 KB).
 * Mmapable: the controller marks and ages it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LV_GOOD_ENTRIES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} lv_good SEC(".maps");

/* State changes for the controller's event log (struct lv_event). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LV_EVENTS_BYTES);
} lv_events SEC(".maps");

/* The sources each CPU rejected last (struct lv_hot), by the slot their key hashes to:
 * a cache of the datapath's own, never pinned nor read by the controller. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LV_HOT_SLOTS);
	__type(key, __u32);
	__type(value, struct lv_hot);
} lv_hotset SEC(".maps");

/* The SYN-ACKs levee sent towards each network lately (struct lv_answer_cell, struct
 * lv_answer). Not pinned, as lv_hotset: a replaced program starts afresh. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LV_ANSWER_CELLS);
	__type(key, __u32);
	__type(value, struct lv_answer_cell);
} lv_answers SEC(".maps");

/* The host's own addresses (struct lv_local_key): the controller writes them, SYN
 * authentication reads them (syn_where.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, LV_MAX_LOCAL);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lv_local_key);
	__type(value, __u8);
} lv_local SEC(".maps");

/* What SYN authentication remembers between packets (syn_cells.h): networks' mark
 * counts, fresh marks, reset mode's retry passes. Not pinned, as lv_answers. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LV_SYN_CELLS);
	__type(key, __u32);
	__type(value, __u64);
} lv_syn SEC(".maps");

/* Counters by reason and the cached clock, one entry per CPU: one lookup a packet. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lv_percpu);
} lv_percpu SEC(".maps");

/*
 * The allow, deny and override lists: per family and per policy slot, a trie of
 * networks and a hash of hosts, so that a reload fills the inactive slot's maps and the
 * same flip of `active` that switches the classes switches the lists (struct
 * lv_list_value). Both allocate per entry; max_entries is only a cap.
 */
#define LV_LIST_MAP(name, maptype, keytype)               \
	struct {                                          \
		__uint(type, maptype);                    \
		__uint(max_entries, LV_MAX_LIST_ENTRIES); \
		__uint(map_flags, BPF_F_NO_PREALLOC);     \
		__type(key, keytype);                     \
		__type(value, struct lv_list_value);      \
	} name SEC(".maps")

/* Network entries, by prefix. */
LV_LIST_MAP(lv_list4_0, BPF_MAP_TYPE_LPM_TRIE, struct lv_lpm4);
LV_LIST_MAP(lv_list4_1, BPF_MAP_TYPE_LPM_TRIE, struct lv_lpm4);
LV_LIST_MAP(lv_list6_0, BPF_MAP_TYPE_LPM_TRIE, struct lv_lpm6);
LV_LIST_MAP(lv_list6_1, BPF_MAP_TYPE_LPM_TRIE, struct lv_lpm6);

/* Host entries, by address (network order): IPv4 one word, IPv6 four. */
LV_LIST_MAP(lv_host4_0, BPF_MAP_TYPE_HASH, __u32);
LV_LIST_MAP(lv_host4_1, BPF_MAP_TYPE_HASH, __u32);
LV_LIST_MAP(lv_host6_0, BPF_MAP_TYPE_HASH, struct lv_in6);
LV_LIST_MAP(lv_host6_1, BPF_MAP_TYPE_HASH, struct lv_in6);

/*
 * CrowdSec decisions (struct lv_cs_value): hashes of single addresses and tries of
 * ranges, per family, written by the daemon's bouncer only and not per policy slot (a
 * reload leaves them alone). Allocated per entry: about 100 B a host, 8 MB of buckets
 * per hash. Hashes, not one trie: a decision is nearly always one address, a hash lookup
 * costs a fraction of a trie walk, and a hash takes batched updates (a startup pull of
 * 100k decisions is a few syscalls).
 */
#define LV_CS_MAP(name, maptype, keytype)               \
	struct {                                        \
		__uint(type, maptype);                  \
		__uint(max_entries, LV_MAX_CS_ENTRIES); \
		__uint(map_flags, BPF_F_NO_PREALLOC);   \
		__type(key, keytype);                   \
		__type(value, struct lv_cs_value);      \
	} name SEC(".maps")

LV_CS_MAP(lv_cs_host4, BPF_MAP_TYPE_HASH, __u32);
LV_CS_MAP(lv_cs_host6, BPF_MAP_TYPE_HASH, struct lv_in6);
LV_CS_MAP(lv_cs_net4, BPF_MAP_TYPE_LPM_TRIE, struct lv_lpm4);
LV_CS_MAP(lv_cs_net6, BPF_MAP_TYPE_LPM_TRIE, struct lv_lpm6);

#endif /* LEVEE_MAPS_H */
