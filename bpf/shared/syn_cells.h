/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * syn_cells.h - what SYN authentication remembers between packets (the map lv_syn), and
 * its rules as pure functions: compiled into the XDP program and into the controller
 * and its unit tests.
 *
 * lv_syn is one array of 64-bit cells in three regions, each direct-mapped by a hash.
 * A collision costs a little precision, never a hole: a cell shared by two keys is
 * overwritten (a retry pass or a fresh mark lost: that client is challenged again) or
 * counted for both (a network's marks: stricter).
 *
 * - marks: per network (the answer prefix, struct lv_answer), the known-good marks its
 *   sources made since lv_good last aged: (good_epoch << 32 | count). A network past
 *   answer.marks_per_network makes no more marks until the next ageing: its proven
 *   clients still connect, and are challenged again next time. One /48 cannot fill the
 *   filter that remembers everyone.
 * - fresh: sources marked known-good within a cookie's lifetime: (tag << 32 | tick).
 *   A known-good source's TCP goes straight on, but a client that opened several
 *   connections at once has handshakes in flight that levee answered before the first
 *   one marked it: their ACKs still return valid cookies, and are handed to the
 *   listener too while the mark is fresh.
 * - retry: reset mode's passes: a RST that returned a cookie lets the one SYN its
 *   client retries on the same connection through, once, within LV_SYN_RETRY_TICKS:
 *   (tag << 32 | tick of the RST) by a hash of the connection. Any host answers a
 *   SYN-ACK it did not ask for with such a RST, so the RST proves that the address is
 *   real, not that it wants to connect: it never makes its source known-good.
 */
#ifndef LEVEE_SYN_CELLS_H
#define LEVEE_SYN_CELLS_H

#include "levee_abi.h"

#ifdef __cplusplus
#define LV_SYN_INLINE inline
#else
#define LV_SYN_INLINE static __attribute__((always_inline)) inline
#endif

#define LV_SYN_TICK_SHIFT 24 /* a tick of the cells' clock: 2^24 ns, 16.8 ms */
#define LV_SYN_MARK_LOG2 14  /* 16,384 networks' mark counts (128 KB, read only when marking) */
#define LV_SYN_FRESH_LOG2 15 /* 32,768 fresh marks (256 KB) */
#define LV_SYN_RETRY_LOG2 12 /* 4,096 retry passes (32 KB: a SYN flood in reset mode reads one a SYN) */
#define LV_SYN_FRESH_AT (1u << LV_SYN_MARK_LOG2)
#define LV_SYN_RETRY_AT (LV_SYN_FRESH_AT + (1u << LV_SYN_FRESH_LOG2))
#define LV_SYN_CELLS (LV_SYN_RETRY_AT + (1u << LV_SYN_RETRY_LOG2))

/* How long a CPU keeps what a SYN's destination is (struct lv_syn_where, syn_where.h):
 * a tick. A listener that opens or closes is followed within it. */
#define LV_SYN_WHERE_NS (1ULL << LV_SYN_TICK_SHIFT)

/* A fresh mark lasts as long as the cookies answered before it: two cookie periods
 * (2^34 ns, syncookie.h). */
#define LV_SYN_FRESH_TICKS (1u << (34 - LV_SYN_TICK_SHIFT))
/* A retry pass lasts 5 s: Linux retries a SYN after 1 s, others after up to 3. */
#define LV_SYN_RETRY_TICKS ((__u32)(5 * LV_NSEC_PER_SEC >> LV_SYN_TICK_SHIFT))

LV_SYN_INLINE __u32 lv_syn_tick(__u64 now_ns)
{
	return (__u32)(now_ns >> LV_SYN_TICK_SHIFT);
}

/* The cell of a hash in a region of 2^log2 cells at `at`. */
LV_SYN_INLINE __u32 lv_syn_cell(__u64 h, __u32 at, __u32 log2)
{
	return at + (__u32)(h >> (64 - log2));
}

/* A cell's tag: 32 other bits of the same hash (never 0, which means empty). */
LV_SYN_INLINE __u64 lv_syn_tag(__u64 h)
{
	return (__u64)((__u32)h | 1u) << 32;
}

/*
 * marks: the count a network's cell holds now, and whether one more mark is within
 * `cap` (0: no bound): the new value to store, or 0 when the mark is refused. A count of
 * another epoch starts over.
 */
LV_SYN_INLINE __u64 lv_syn_mark_take(__u64 cell, __u32 epoch, __u32 cap)
{
	__u32 count = (__u32)(cell >> 32) == epoch ? (__u32)cell : 0;

	if (cap && count >= cap)
		return 0;
	return (__u64)epoch << 32 | (count + 1);
}

/* fresh and retry: is the cell `tag`'s, stamped within `ticks` before `now` (or a
 * little after it, by another CPU: lv_stamp_in_time())? */
LV_SYN_INLINE int lv_syn_stamped(__u64 cell, __u64 tag, __u32 now, __u32 ticks)
{
	return (cell & 0xffffffff00000000ULL) == tag && lv_stamp_in_time(now - (__u32)cell, ticks, LV_SYN_TICK_SHIFT);
}

#endif /* LEVEE_SYN_CELLS_H */
