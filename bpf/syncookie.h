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
 * The cookie is a MAC of the connection (source and destination address and port) and
 * of a period of the monotonic clock, under a 128-bit key (lv_control.cookie_key):
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
 *   bits 31..8  the MAC's top 24 bits
 *   bit  7      the period's lowest bit: which of the last two periods made it
 *   bits 6..0   free for the handshake's options (0 here)
 *
 * A cookie is good during the period that made it and the next one: LV_COOKIE_PERIOD_NS
 * to twice that. Known limit: a blind guess is right once in 2^24, so a flood of forged
 * replies (ACKs or RSTs) at 10 Mpps verifies about one spoofed source every 1.7 s. Such
 * a source only gets what any real source gets: state, and its limits.
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
#define LV_COOKIE_MAC_MASK 0xffffff00u
#define LV_COOKIE_PERIOD_BIT 0x80u
#define LV_COOKIE_EPOCH_SHIFT 3 /* 8 periods: a key serves 68.7 s, every other epoch */
#define LV_COOKIE_EPOCH_PERIODS (1ULL << LV_COOKIE_EPOCH_SHIFT)

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

/* The last block (the message's length in bytes in its top byte; here every message
 * is whole blocks), and the four finishing rounds. */
LV_INLINE __u64 lv_sip_final(struct lv_sip *s, __u32 nblocks)
{
	lv_sip_block(s, (__u64)(nblocks * 8) << 56);
	s->v2 ^= 0xff;
	lv_sip_round(s);
	lv_sip_round(s);
	lv_sip_round(s);
	lv_sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/*
 * What a cookie binds: the connection as its client sends it (addresses as lv_packet
 * holds them, IPv4-mapped for IPv4, network byte order; ports in host order) and the
 * clock's period. IPv4 hashes two blocks, IPv6 five: the lengths keep them apart.
 */
struct lv_cookie_in {
	__u32 saddr[4];
	__u32 daddr[4];
	__u16 sport;
	__u16 dport;
	__u8 family; /* enum lv_family */
};

/* The MAC of a connection in period `period`: SipHash-2-4 of its blocks. */
LV_INLINE __u64 lv_cookie_mac(const struct lv_cookie_in *in, __u64 period, const __u64 key[2])
{
	__u64 last = (__u64)in->sport << 48 | (__u64)in->dport << 32 | (__u32)period;
	struct lv_sip s;

	lv_sip_init(&s, key);
	if (in->family == LV_AF_INET) {
		lv_sip_block(&s, (__u64)in->saddr[3] << 32 | in->daddr[3]);
		lv_sip_block(&s, last);
		return lv_sip_final(&s, 2);
	}
	lv_sip_block(&s, (__u64)in->saddr[0] << 32 | in->saddr[1]);
	lv_sip_block(&s, (__u64)in->saddr[2] << 32 | in->saddr[3]);
	lv_sip_block(&s, (__u64)in->daddr[0] << 32 | in->daddr[1]);
	lv_sip_block(&s, (__u64)in->daddr[2] << 32 | in->daddr[3]);
	lv_sip_block(&s, last);
	return lv_sip_final(&s, 5);
}

/* The key slot of a period's cookies: its epoch's parity. */
LV_INLINE __u32 lv_cookie_key_slot(__u64 period)
{
	return (__u32)(period >> LV_COOKIE_EPOCH_SHIFT) & 1;
}

/* The cookie for a connection at `now_ns`. */
LV_INLINE __u32 lv_cookie_make(const struct lv_cookie_in *in, __u64 now_ns, const __u64 keys[2][2])
{
	__u64 period = now_ns >> LV_COOKIE_PERIOD_SHIFT;

	return ((__u32)lv_cookie_mac(in, period, keys[lv_cookie_key_slot(period)]) & LV_COOKIE_MAC_MASK) |
	       ((__u32)(period & 1) ? LV_COOKIE_PERIOD_BIT : 0);
}

/* Is `cookie` one this connection was given within its lifetime, at `now_ns`? The
 * period bit names the period: this one, or the one before. One MAC per check. */
LV_INLINE int lv_cookie_check(const struct lv_cookie_in *in, __u32 cookie, __u64 now_ns, const __u64 keys[2][2])
{
	__u64 period = now_ns >> LV_COOKIE_PERIOD_SHIFT;

	if (!!(cookie & LV_COOKIE_PERIOD_BIT) != (int)(period & 1))
		period--;
	return ((__u32)lv_cookie_mac(in, period, keys[lv_cookie_key_slot(period)]) & LV_COOKIE_MAC_MASK) ==
	       (cookie & LV_COOKIE_MAC_MASK);
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
