/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* maps.h - the maps of the levee XDP program. Layouts are in levee_abi.h. */
#ifndef LEVEE_MAPS_H
#define LEVEE_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "levee_abi.h"

/*
 * Per (source prefix, class) limiter state. LRU so that a full map evicts the least
 * recently seen source instead of refusing new ones; common (not per-CPU) LRU lists so
 * every CPU can use the whole map. The controller sets max_entries before load
 * (--max-sources, default LV_DEFAULT_MAX_SOURCES: ~121 MB at 1M entries).
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

/* Counters by reason and the cached clock, one entry per CPU: one lookup a packet. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lv_percpu);
} lv_percpu SEC(".maps");

#endif /* LEVEE_MAPS_H */
