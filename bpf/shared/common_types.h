/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * common_types.h - what every table of the ABI is built of: sizes and caps, a counter,
 * and one GCRA limit (limiter.h applies it).
 */
#ifndef LEVEE_COMMON_TYPES_H
#define LEVEE_COMMON_TYPES_H

#include <linux/types.h>

#define LV_NSEC_PER_SEC 1000000000ULL

/* Default size of the per-source map; `levee attach --max-sources` overrides it. */
#define LV_DEFAULT_MAX_SOURCES 1000000
/* Entries each list trie may hold (tries allocate per entry, this is only a cap). */
#define LV_MAX_LIST_ENTRIES 1000000
/* Entries each CrowdSec map may hold (per family, hosts and ranges apart): a host hash
 * of this many costs 8 MB of buckets whether filled or not. */
#define LV_MAX_CS_ENTRIES 524288
/* Default size of the ban records map (an LRU); `max_bans` in [interface] overrides it. */
#define LV_DEFAULT_MAX_BANS 65536

#define LV_MAX_CLASSES 64   /* traffic classes; ids fit the class table's bytes */
#define LV_MAX_OVERRIDES 64 /* networks with limits of their own */
#define LV_NAME_LEN 32      /* class and override names, NUL-terminated */

/* Sizes are ABI: each header asserts its own on the userspace side (C or C++). */
#ifndef __bpf__
#ifdef __cplusplus
#define LV_STATIC_ASSERT static_assert
#else
#define LV_STATIC_ASSERT _Static_assert
#endif
#endif

struct lv_counter {
	__u64 packets;
	__u64 bytes;
};

struct lv_class_counters {
	struct lv_counter passed;
	struct lv_counter dropped;
};

/*
 * One GCRA limit. cost == 0 means "no limit of this kind".
 * Packets: cost is the emission interval in ns, ceil(1e9 / rate).
 * Bytes: cost is ns per byte in fixed point, ceil(1e9 << LV_BYTE_SHIFT / rate); a
 * packet of len bytes costs ceil(len * cost >> LV_BYTE_SHIFT) ns.
 */
struct lv_limit {
	__u64 cost;
	__u64 tau_ns; /* burst tolerance: packets (burst - 1) * T; bytes burst * cost */
	__u64 rate;   /* as the operator gave it, for display */
	__u64 burst;  /* as the operator gave it, for display */
};

#define LV_BYTE_SHIFT 16

#ifndef __bpf__
LV_STATIC_ASSERT(sizeof(struct lv_limit) == 32, "lv_limit layout");
#endif

#endif /* LEVEE_COMMON_TYPES_H */
