/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tcp_options.h - the TCP options of a handshake, as pure functions: compiled into the
 * XDP and tc programs (SYN authentication's proxy mode, synauth.h and handoff.h) and
 * into the unit tests and the fuzzer, which check them against the RFCs' layouts.
 *
 * levee answers a SYN itself and keeps nothing, so what the client asked for (MSS,
 * window scale, SACK, timestamps) travels in the cookie's option bits (syncookie.h),
 * and the SYN-ACK offers back exactly that, packed as Linux packs it:
 *
 *   MSS | NOP WS | SACKP TS or NOP NOP TS | TSval | TSecr    (or NOP NOP SACKP)
 *
 * The options are read from a copy of at most 40 bytes (the most a TCP header holds),
 * one option a step, so that the BPF side runs them under bpf_loop: verified once, not
 * once per option. A malformed list ends the walk; what was read before it stands (as
 * the kernel's tcp_parse_options does).
 */
#ifndef LEVEE_TCP_OPTIONS_H
#define LEVEE_TCP_OPTIONS_H

#include "levee_abi.h"
#include "syncookie.h"

/* Host to network order, for both compilers (the BPF target and x86 are little-endian). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define lv_htonl(x) __builtin_bswap32(x)
#else
#define lv_htonl(x) (x)
#endif

/* A value the compiler must not reason about. For an index into a stack array: clang
 * would otherwise fold "array + 4 * n" into "array | 4 * n", which the verifier refuses
 * on a pointer. */
#ifdef __bpf__
#define LV_OPAQUE(x) asm volatile("" : "+r"(x))
#else
#define LV_OPAQUE(x) ((void)0)
#endif

#define LV_TCPOPT_EOL 0
#define LV_TCPOPT_NOP 1
#define LV_TCPOPT_MSS 2
#define LV_TCPOPT_WINDOW 3
#define LV_TCPOPT_SACK_PERM 4
#define LV_TCPOPT_TIMESTAMP 8
#define LV_TCP_MAX_WSCALE 14
#define LV_TCP_OPT_BYTES 40 /* the most a TCP header holds: data offset 15 */
#define LV_SYNACK_OPT_WORDS 5
#define LV_SYNACK_WSCALE 7 /* the window scale levee offers: Linux's for its default buffers */

/* The options of one segment: the copy, the walk's place and what it found. */
struct lv_tcp_opts {
	__u8 buf[64]; /* LV_TCP_OPT_BYTES used; the rest lets an index be masked in bounds */
	__u32 len;    /* bytes copied into buf */
	__u32 off;    /* where the walk is */
	__u32 tsval, tsecr;
	__u16 mss;   /* 0: none */
	__u8 wscale; /* LV_COOKIE_NO_WSCALE: none */
	__u8 sack;
	__u8 ts;
};

LV_INLINE __u8 lv_tcp_opt_byte(const struct lv_tcp_opts *p, __u32 i)
{
	return p->buf[i & 63];
}

LV_INLINE __u32 lv_tcp_opt_be32(const struct lv_tcp_opts *p, __u32 i)
{
	return (__u32)lv_tcp_opt_byte(p, i) << 24 | (__u32)lv_tcp_opt_byte(p, i + 1) << 16 |
	       (__u32)lv_tcp_opt_byte(p, i + 2) << 8 | lv_tcp_opt_byte(p, i + 3);
}

/* Start a walk over `len` copied bytes. */
LV_INLINE void lv_tcp_opts_start(struct lv_tcp_opts *p, __u32 len)
{
	p->len = len < LV_TCP_OPT_BYTES ? len : LV_TCP_OPT_BYTES;
	p->off = 0;
	p->tsval = p->tsecr = 0;
	p->mss = 0;
	p->wscale = LV_COOKIE_NO_WSCALE;
	p->sack = p->ts = 0;
}

/* One option: 0 to go on, 1 when the list ended (EOL, the end, or a malformed length). */
LV_INLINE int lv_tcp_opt_step(struct lv_tcp_opts *p)
{
	__u32 i = p->off, size;
	__u8 kind;

	if (i >= p->len)
		return 1;
	kind = lv_tcp_opt_byte(p, i);
	if (kind == LV_TCPOPT_EOL)
		return 1;
	if (kind == LV_TCPOPT_NOP) {
		p->off = i + 1;
		return 0;
	}
	if (i + 1 >= p->len)
		return 1;
	size = lv_tcp_opt_byte(p, i + 1);
	if (size < 2 || i + size > p->len)
		return 1;
	if (kind == LV_TCPOPT_MSS && size == 4) {
		__u16 mss = (__u16)(lv_tcp_opt_byte(p, i + 2) << 8 | lv_tcp_opt_byte(p, i + 3));

		if (mss) /* Linux ignores an MSS of 0 (tcp_parse_options): an earlier one stands */
			p->mss = mss;
	} else if (kind == LV_TCPOPT_WINDOW && size == 3) {
		p->wscale = lv_tcp_opt_byte(p, i + 2);
		if (p->wscale > LV_TCP_MAX_WSCALE) /* RFC 7323 2.3: use 14 */
			p->wscale = LV_TCP_MAX_WSCALE;
	} else if (kind == LV_TCPOPT_SACK_PERM && size == 2) {
		p->sack = 1;
	} else if (kind == LV_TCPOPT_TIMESTAMP && size == 10) {
		p->ts = 1;
		p->tsval = lv_tcp_opt_be32(p, i + 2);
		p->tsecr = lv_tcp_opt_be32(p, i + 6);
	}
	p->off = i + size;
	return 0;
}

/* The cookie's option bits for what a SYN asked for. A SYN without an MSS option means
 * 536 (RFC 9293 3.7.1), the table's first. */
LV_INLINE __u32 lv_cookie_opts_of(const struct lv_tcp_opts *p, __u8 family)
{
	__u32 opts = lv_cookie_mss_index(p->mss ? p->mss : 536, family) << LV_COOKIE_OPT_MSS_SHIFT;

	opts |= p->wscale & LV_COOKIE_OPT_WSCALE;
	if (p->sack)
		opts |= LV_COOKIE_OPT_SACK;
	if (p->ts)
		opts |= LV_COOKIE_OPT_TS;
	return opts;
}

/* The cookie's option bits less what the listener's network namespace turned off
 * (lv_control.tcp_off): the kernel refuses a hand-off with an option its sysctl
 * disabled, so the SYN-ACK must not offer it. */
LV_INLINE __u32 lv_cookie_opts_allowed(__u32 opts, __u32 tcp_off)
{
	if (tcp_off & LV_TCP_OFF_WSCALE)
		opts |= LV_COOKIE_NO_WSCALE;
	if (tcp_off & LV_TCP_OFF_SACK)
		opts &= ~LV_COOKIE_OPT_SACK;
	if (tcp_off & LV_TCP_OFF_TS)
		opts &= ~LV_COOKIE_OPT_TS;
	return opts;
}

/*
 * The SYN-ACK's options for a cookie's option bits, into `out` (network byte order):
 * the number of 32-bit words. `mss` is levee's own (0: left out), `tsval` levee's
 * timestamp and `tsecr` the client's TSval. Only what the client offered is offered
 * back. At most LV_SYNACK_OPT_WORDS.
 */
LV_INLINE void lv_opt_put(__u32 out[LV_SYNACK_OPT_WORDS], __u32 *n, __u32 word)
{
	__u32 i = *n;

	LV_OPAQUE(i);
	if (i >= LV_SYNACK_OPT_WORDS)
		return;
	out[i] = lv_htonl(word);
	*n = i + 1;
}

LV_INLINE __u32 lv_synack_options(__u32 opts, __u16 mss, __u32 tsval, __u32 tsecr, __u32 out[LV_SYNACK_OPT_WORDS])
{
	__u32 n = 0;

	if (mss)
		lv_opt_put(out, &n, (__u32)LV_TCPOPT_MSS << 24 | 4u << 16 | mss);
	if ((opts & LV_COOKIE_OPT_WSCALE) != LV_COOKIE_NO_WSCALE)
		lv_opt_put(out, &n,
			   (__u32)LV_TCPOPT_NOP << 24 | (__u32)LV_TCPOPT_WINDOW << 16 | 3u << 8 | LV_SYNACK_WSCALE);
	if (opts & LV_COOKIE_OPT_TS) {
		lv_opt_put(out, &n,
			   ((opts & LV_COOKIE_OPT_SACK) ? (__u32)LV_TCPOPT_SACK_PERM << 24 | 2u << 16
							: (__u32)LV_TCPOPT_NOP << 24 | (__u32)LV_TCPOPT_NOP << 16) |
				   (__u32)LV_TCPOPT_TIMESTAMP << 8 | 10);
		lv_opt_put(out, &n, tsval);
		lv_opt_put(out, &n, tsecr);
	} else if (opts & LV_COOKIE_OPT_SACK) {
		lv_opt_put(out, &n,
			   (__u32)LV_TCPOPT_NOP << 24 | (__u32)LV_TCPOPT_NOP << 16 | (__u32)LV_TCPOPT_SACK_PERM << 8 |
				   2);
	}
	return n;
}

#endif /* LEVEE_TCP_OPTIONS_H */
