/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * syncookie.h - the SYN cookie of SYN authentication, as pure functions: compiled into
 * the XDP program and into the unit tests, which check it against SipHash's reference
 * vectors.
 *
 * A class with SYN authentication (LV_CLASS_SYN_AUTH) answers the SYN of a source it
 * has no state for itself, with a SYN-ACK that carries a cookie, and keeps nothing. A
 * source earns state only by returning the cookie, which proves it receives what is
 * sent to its address: a spoofed source never sees the SYN-ACK.
 *
 * The cookie is a MAC of the connection (source and destination address and port, and
 * in proxy mode the client's initial sequence number), of the options it keeps and of a
 * period of the monotonic clock, under a 128-bit key (lv_control.cookie_key):
 * SipHash-2-4, the keyed hash the kernel's own SYN cookies use. Nobody outside can
 * derive the key from cookies, nor make a cookie for an address whose SYN-ACKs they
 * cannot read.
 *
 * The key is rotated. Time is cut into key epochs of LV_COOKIE_EPOCH_PERIODS periods,
 * and an epoch's cookies use key slot (epoch & 1): the other slot belongs to the epoch
 * before and the epoch after. Once the last cookies of the epoch before have expired
 * (its last period's live through the first period of this one), that slot is nobody's
 * until the next epoch begins, and `levee run` writes a fresh key into it then
 * (lv_cookie_spare_slot). Both slots are drawn at attach; without a daemon they stay.
 *
 *   bits 31..9  the MAC's top 23 bits
 *   bit  8      the period's lowest bit: which of the last two periods made it
 *   bits 7..0   the handshake's options, as the SYN asked for them (LV_COOKIE_OPT_*;
 *               0 in reset mode): what the listener needs to finish the connection
 *               when the ACK comes back, since levee keeps nothing. They are MAC'd,
 *               so a client cannot change them.
 *
 * A cookie is good during the period that made it and the next one: LV_COOKIE_PERIOD_NS
 * to twice that. Known limit: a blind guess is right once in 2^23, so a flood of forged
 * ACKs at 10 Mpps gets about one connection from a spoofed address through every
 * 0.84 s in proxy mode, where the handshake has no timestamps (with them, its ACK must
 * also echo levee's TSval: 2^-41). Such a connection does not make its source
 * known-good (synauth.h). In reset mode a good RST proves nothing of its own; it lets
 * one retried SYN through to the listener, which makes its own sequence number.
 */
#ifndef LEVEE_SYNCOOKIE_H
#define LEVEE_SYNCOOKIE_H

#include "levee_abi.h"

#ifdef __cplusplus
#define LV_INLINE inline
#else
#define LV_INLINE static __attribute__((always_inline)) inline
#endif

#define LV_COOKIE_PERIOD_SHIFT 33 /* 2^33 ns: 8.6 s; a cookie lives 8.6 to 17.2 s */
#define LV_COOKIE_PERIOD_NS (1ULL << LV_COOKIE_PERIOD_SHIFT)
#define LV_COOKIE_MAC_MASK 0xfffffe00u
#define LV_COOKIE_PERIOD_BIT 0x100u
#define LV_COOKIE_OPTS_MASK 0xffu
#define LV_COOKIE_PERIOD_MASK 0xffffffu /* the period bits the MAC binds: it wraps in 4.6 years */
#define LV_COOKIE_EPOCH_SHIFT 3         /* 8 periods: a key serves 68.7 s, every other epoch */
#define LV_COOKIE_EPOCH_PERIODS (1ULL << LV_COOKIE_EPOCH_SHIFT)

/* The option bits (the cookie's low byte). */
#define LV_COOKIE_OPT_WSCALE 0x0fu /* the client's window scale; LV_COOKIE_NO_WSCALE: none */
#define LV_COOKIE_NO_WSCALE 0x0fu
#define LV_COOKIE_OPT_SACK 0x10u                   /* the client permits SACK */
#define LV_COOKIE_OPT_TS 0x20u                     /* the client sent a timestamp */
#define LV_COOKIE_OPT_MSS_SHIFT 6                  /* bits 7..6: the client's MSS, rounded down to a table */
#define LV_COOKIE_MSS_TABLE4 0x05b405a005140218ULL /* 1460 1440 1300 536, the kernel's */
#define LV_COOKIE_MSS_TABLE6 0x22ec05a0058c04c4ULL /* 8940 1440 1420 1220 */

#define LV_ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

struct lv_sip {
	__u64 v0, v1, v2, v3;
};

LV_INLINE void lv_sip_round(struct lv_sip *s)
{
	s->v0 += s->v1;
	s->v1 = LV_ROTL64(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = LV_ROTL64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = LV_ROTL64(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = LV_ROTL64(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = LV_ROTL64(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = LV_ROTL64(s->v2, 32);
}

LV_INLINE void lv_sip_init(struct lv_sip *s, const __u64 key[2])
{
	s->v0 = key[0] ^ 0x736f6d6570736575ULL;
	s->v1 = key[1] ^ 0x646f72616e646f6dULL;
	s->v2 = key[0] ^ 0x6c7967656e657261ULL;
	s->v3 = key[1] ^ 0x7465646279746573ULL;
}

/* One 8-byte block of the message, little-endian as SipHash reads it. */
LV_INLINE void lv_sip_block(struct lv_sip *s, __u64 m)
{
	s->v3 ^= m;
	lv_sip_round(s);
	lv_sip_round(s);
	s->v0 ^= m;
}

/* The last block: the message's length in bytes in its top byte and its last `len % 8`
 * bytes, little-endian, below (`tail`); then the four finishing rounds. */
LV_INLINE __u64 lv_sip_final(struct lv_sip *s, __u32 len, __u64 tail)
{
	lv_sip_block(s, (__u64)len << 56 | tail);
	s->v2 ^= 0xff;
	lv_sip_round(s);
	lv_sip_round(s);
	lv_sip_round(s);
	lv_sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/*
 * What a cookie binds: the connection as its client sends it (addresses as lv_packet
 * holds them, IPv4-mapped for IPv4, network byte order; ports in host order), the
 * client's ISN (proxy mode; 0 in reset mode, whose reply does not carry it), the option
 * bits and the clock's period. IPv4 hashes 20 bytes, IPv6 44: the lengths keep them
 * apart, and the period and options ride in SipHash's last block, which is hashed
 * anyway.
 */
struct lv_cookie_in {
	__u32 saddr[4];
	__u32 daddr[4];
	__u32 isn;
	__u16 sport;
	__u16 dport;
	__u8 family; /* enum lv_family */
	__u8 opts;   /* LV_COOKIE_OPT_*: what lv_cookie_make binds; lv_cookie_check reads the cookie's */
};

/* SipHash after the key and an IPv6 cookie's first two blocks, its destination address:
 * from `memo` when it holds them, else hashed (and kept there, when there is a memo).
 * Word by word on purpose: a struct copy takes a stack temporary, and the SYN path's
 * frame has no room for one within the 512 bytes its chain of calls shares. */
LV_INLINE void lv_cookie_start6(struct lv_sip *s, const __u32 daddr[4], const __u64 key[2], struct lv_cookie_memo *memo)
{
	if (memo && !((memo->key[0] ^ key[0]) | (memo->key[1] ^ key[1]) | (memo->daddr[0] ^ daddr[0]) |
		      (memo->daddr[1] ^ daddr[1]) | (memo->daddr[2] ^ daddr[2]) | (memo->daddr[3] ^ daddr[3]))) {
		s->v0 = memo->v[0];
		s->v1 = memo->v[1];
		s->v2 = memo->v[2];
		s->v3 = memo->v[3];
		return;
	}
	lv_sip_init(s, key);
	lv_sip_block(s, (__u64)daddr[0] << 32 | daddr[1]);
	lv_sip_block(s, (__u64)daddr[2] << 32 | daddr[3]);
	if (!memo)
		return;
	memo->key[0] = key[0];
	memo->key[1] = key[1];
	__builtin_memcpy(memo->daddr, daddr, sizeof(memo->daddr));
	memo->v[0] = s->v0;
	memo->v[1] = s->v1;
	memo->v[2] = s->v2;
	memo->v[3] = s->v3;
}

/* The MAC of a connection with options `opts` in period `period`: SipHash-2-4. IPv6
 * hashes the destination address first, the part `memo` (if any) keeps. */
LV_INLINE __u64 lv_cookie_mac(const struct lv_cookie_in *in, __u32 opts, __u64 period, const __u64 key[2],
			      struct lv_cookie_memo *memo)
{
	__u64 ports = (__u64)in->sport << 48 | (__u64)in->dport << 32 | in->isn;
	__u64 tail = ((__u32)period & LV_COOKIE_PERIOD_MASK) << 8 | (opts & LV_COOKIE_OPTS_MASK);
	struct lv_sip s;

	if (in->family == LV_AF_INET) {
		lv_sip_init(&s, key);
		lv_sip_block(&s, (__u64)in->saddr[3] << 32 | in->daddr[3]);
		lv_sip_block(&s, ports);
		return lv_sip_final(&s, 20, tail);
	}
	lv_cookie_start6(&s, in->daddr, key, memo);
	lv_sip_block(&s, (__u64)in->saddr[0] << 32 | in->saddr[1]);
	lv_sip_block(&s, (__u64)in->saddr[2] << 32 | in->saddr[3]);
	lv_sip_block(&s, ports);
	return lv_sip_final(&s, 44, tail);
}

/* The key slot of a period's cookies: its epoch's parity. */
LV_INLINE __u32 lv_cookie_key_slot(__u64 period)
{
	return (__u32)(period >> LV_COOKIE_EPOCH_SHIFT) & 1;
}

/* The cookie for a connection and its options (in->opts) at `now_ns`, in the low half;
 * the MAC's other 32 bits, secret as the key, in the high half (a per-connection offset
 * for the SYN-ACK's timestamp, so that it does not tell the host's uptime). */
LV_INLINE __u64 lv_cookie_make_wide(const struct lv_cookie_in *in, __u64 now_ns, const __u64 keys[2][2],
				    struct lv_cookie_memo *memo)
{
	__u64 period = now_ns >> LV_COOKIE_PERIOD_SHIFT;
	__u64 mac = lv_cookie_mac(in, in->opts, period, keys[lv_cookie_key_slot(period)], memo);

	return (mac & 0xffffffff00000000ULL) | ((__u32)mac & LV_COOKIE_MAC_MASK) |
	       ((__u32)(period & 1) ? LV_COOKIE_PERIOD_BIT : 0) | in->opts;
}

/* The cookie for a connection and its options (in->opts) at `now_ns`. */
LV_INLINE __u32 lv_cookie_make(const struct lv_cookie_in *in, __u64 now_ns, const __u64 keys[2][2],
			       struct lv_cookie_memo *memo)
{
	return (__u32)lv_cookie_make_wide(in, now_ns, keys, memo);
}

/*
 * Is `cookie` one this connection was given within its lifetime, at `now_ns`, with the
 * options it names? The period bit names the period: this one, or the one before; or,
 * within LV_CLOCK_AHEAD_NS of the next period, the next one: another CPU's reading may
 * be ahead of this one and have made it there already (that shortens the life of a
 * cookie of the period before by as much). One MAC per check; the whole MAC into
 * `*wide` (its high half: lv_cookie_ts_echoed()).
 */
LV_INLINE int lv_cookie_check_wide(const struct lv_cookie_in *in, __u32 cookie, __u64 now_ns, const __u64 keys[2][2],
				   struct lv_cookie_memo *memo, __u64 *wide)
{
	__u64 period = now_ns >> LV_COOKIE_PERIOD_SHIFT;

	if (!!(cookie & LV_COOKIE_PERIOD_BIT) != (int)(period & 1)) {
		if ((now_ns + LV_CLOCK_AHEAD_NS) >> LV_COOKIE_PERIOD_SHIFT != period)
			period++;
		else
			period--;
	}
	*wide = lv_cookie_mac(in, cookie & LV_COOKIE_OPTS_MASK, period, keys[lv_cookie_key_slot(period)], memo);
	return ((__u32)*wide & LV_COOKIE_MAC_MASK) == (cookie & LV_COOKIE_MAC_MASK);
}

LV_INLINE int lv_cookie_check(const struct lv_cookie_in *in, __u32 cookie, __u64 now_ns, const __u64 keys[2][2],
			      struct lv_cookie_memo *memo)
{
	__u64 wide;

	return lv_cookie_check_wide(in, cookie, now_ns, keys, memo, &wide);
}

/*
 * Proxy mode's SYN-ACK timestamp: a clock of ~1 ms (2^20 ns) offset by the MAC's high
 * half, secret as the key (it does not tell the host's uptime, and a client's ACK must
 * echo it). A handshake with timestamps is good only if its ACK echoes a TSval levee
 * gave the connection within a cookie's lifetime: a blind guess must then hit the
 * cookie (2^-23) and a TSval among 2^14 of 2^32 (2^-18): 2^-41 in all.
 */
#define LV_COOKIE_TS_SHIFT 20

LV_INLINE __u32 lv_cookie_tsval(__u64 wide, __u64 now_ns)
{
	return (__u32)(now_ns >> LV_COOKIE_TS_SHIFT) + (__u32)(wide >> 32);
}

/* Was `tsecr` a TSval levee gave within a cookie's lifetime before `now_ns`, or up to
 * LV_CLOCK_AHEAD_NS after it (the SYN-ACK was made on a CPU whose reading was ahead)? */
LV_INLINE int lv_cookie_ts_echoed(__u64 wide, __u32 tsecr, __u64 now_ns)
{
	__u32 age = (__u32)(now_ns >> LV_COOKIE_TS_SHIFT) - (tsecr - (__u32)(wide >> 32));

	return lv_stamp_in_time(age, (2u << (LV_COOKIE_PERIOD_SHIFT - LV_COOKIE_TS_SHIFT)) + 1, LV_COOKIE_TS_SHIFT);
}

/* The MSS of an option byte (its index into the kernel's table), for the family. */
LV_INLINE __u16 lv_cookie_mss(__u32 opts, __u8 family)
{
	__u64 table = family == LV_AF_INET ? LV_COOKIE_MSS_TABLE4 : LV_COOKIE_MSS_TABLE6;

	return (__u16)(table >> (16 * ((opts >> LV_COOKIE_OPT_MSS_SHIFT) & 3)));
}

/* The index of the largest table MSS not above the client's `mss` (the first one when
 * all are). */
LV_INLINE __u32 lv_cookie_mss_index(__u16 mss, __u8 family)
{
	__u64 table = family == LV_AF_INET ? LV_COOKIE_MSS_TABLE4 : LV_COOKIE_MSS_TABLE6;
	__u32 i = 3;

	while (i > 0 && mss < (__u16)(table >> (16 * i)))
		i--;
	return i;
}

/*
 * The key slot that may be written at `now_ns` without touching a live cookie, and the
 * epoch whose key it becomes; -1 outside the window. The window is the current epoch
 * from its third period to the end of its second-to-last: the slot's previous
 * cookies died with the first period, and the next epoch, which makes cookies with
 * it, is a whole period away. The margins are a period each (8.6 s) because the
 * datapath's clock is a cached lower bound of the controller's, stale by at most a tick.
 */
LV_INLINE int lv_cookie_spare_slot(__u64 now_ns, __u64 *next_epoch)
{
	__u64 period = now_ns >> LV_COOKIE_PERIOD_SHIFT;
	__u64 in_epoch = period & (LV_COOKIE_EPOCH_PERIODS - 1);

	if (in_epoch < 2 || in_epoch >= LV_COOKIE_EPOCH_PERIODS - 1)
		return -1;
	*next_epoch = (period >> LV_COOKIE_EPOCH_SHIFT) + 1;
	return (int)(*next_epoch & 1);
}

#endif /* LEVEE_SYNCOOKIE_H */
