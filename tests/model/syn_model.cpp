// syn_model.cpp - the SYN path's reference (syn_model.hpp says from which rules): the
// verdict and reason of a frame, and the SYN-ACK it must get, byte by byte.
#include "syn_model.hpp"

#include <linux/bpf.h>

#include <array>

#include <fmt/format.h>

namespace levee::model {
namespace {

constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kAck = 0x10;

uint16_t rd16(std::span<const uint8_t> b, size_t off) { return static_cast<uint16_t>(b[off] << 8 | b[off + 1]); }
uint32_t rd32(std::span<const uint8_t> b, size_t off) { return uint32_t{rd16(b, off)} << 16 | rd16(b, off + 2); }
void put32(Frame& f, size_t off, uint32_t v) {
  gen::put16(f, off, static_cast<uint16_t>(v >> 16));
  gen::put16(f, off + 2, static_cast<uint16_t>(v));
}

SynExpect verdict(uint32_t xdp, uint32_t reason, SynRule rule) { return SynExpect{xdp, reason, rule, true, {}}; }
SynExpect drop(uint32_t reason, SynRule rule) { return verdict(XDP_DROP, reason, rule); }

// Where a frame's headers are, and what the IP header says.
struct Headers {
  size_t l3 = 0, l4 = 0, ip_end = 0;  // ip_end: where the IP length says the datagram ends
  bool v6 = false;
  std::span<const uint8_t> src, dst;  // the IP addresses
};

Headers headers(std::span<const uint8_t> f, const Parsed& p) {
  Headers h;
  h.l3 = 14;
  while (rd16(f, h.l3 - 2) == 0x8100 || rd16(f, h.l3 - 2) == 0x88a8) h.l3 += 4;
  h.l4 = f.size() - p.l4_tail;
  h.v6 = p.family == LV_AF_INET6;
  h.ip_end = h.v6 ? h.l3 + 40 + rd16(f, h.l3 + 4) : h.l3 + rd16(f, h.l3 + 2);
  h.src = f.subspan(h.l3 + (h.v6 ? 8 : 12), h.v6 ? 16 : 4);
  h.dst = f.subspan(h.l3 + (h.v6 ? 24 : 16), h.v6 ? 16 : 4);
  return h;
}

// Is an address one a stack answers or answers from? IPv4: not 0/8 ("this network"),
// 127/8 (loopback), 224/4 (multicast), 240/4 (reserved) or the broadcast (RFC 1122
// 3.2.1.3, RFC 5735). IPv6: not ::, ::1, ff00::/8 or IPv4-mapped (RFC 4291, RFC 4038).
bool unicast(std::span<const uint8_t> a) {
  if (a.size() == 4) return a[0] != 0 && a[0] != 127 && a[0] < 224;
  if (a[0] == 0xff) return false;
  static constexpr std::array<uint8_t, 10> kZero{};
  if (!std::equal(kZero.begin(), kZero.end(), a.begin())) return true;
  if (a[10] == 0xff && a[11] == 0xff) return false;
  const bool zero = a[10] == 0 && a[11] == 0 && a[12] == 0 && a[13] == 0 && a[14] == 0;
  return !(zero && a[15] <= 1);
}

// fe80::/10 (RFC 4291 2.5.6).
bool link_local(std::span<const uint8_t> a) { return a.size() == 16 && a[0] == 0xfe && (a[1] & 0xc0) == 0x80; }

bool is_local(std::span<const uint8_t> a, const SynWorld& w) {
  return a.size() == 4 ? std::equal(a.begin(), a.end(), w.local4.begin())
                       : std::equal(a.begin(), a.end(), w.local6.begin());
}

// The TCP checksum over the pseudo-header and `len` bytes at `l4`.
uint16_t tcp_sum(std::span<const uint8_t> f, const Headers& h, size_t len) {
  uint32_t pseudo = 6 + static_cast<uint32_t>(len);
  for (size_t i = 0; i < h.src.size(); i += 2) pseudo += rd16(h.src, i) + rd16(h.dst, i);
  return gen::checksum(&f[h.l4], len, pseudo);
}

// A checksum a stack takes: right, or the pseudo-header's sum alone (CHECKSUM_PARTIAL,
// a local stack's frame on a veth: ARCHITECTURE "Judging a SYN").
bool checksum_ok(std::span<const uint8_t> f, const Headers& h, size_t len) {
  if (tcp_sum(f, h, len) == 0) return true;
  uint32_t pseudo = 6 + static_cast<uint32_t>(len);
  for (size_t i = 0; i < h.src.size(); i += 2) pseudo += rd16(h.src, i) + rd16(h.dst, i);
  return rd16(f, h.l4 + 16) == static_cast<uint16_t>(~gen::checksum(nullptr, 0, pseudo));
}

// The datagram's faults a stack drops it for before TCP (syn_model.hpp), 0 if none.
std::optional<SynRule> datagram_fault(std::span<const uint8_t> f, const Headers& h, const SynWorld& w) {
  if (!h.v6) {
    if (gen::checksum(&f[h.l3], (f[h.l3] & 15) * size_t{4}) != 0) return SynRule::Ipv4HeaderChecksum;
    if (rd16(f, h.l3 + 6) & 0x2000) return SynRule::Fragment;  // MF: more to come
  } else {
    uint8_t nh = f[h.l3 + 6];
    for (size_t off = h.l3 + 40; off < h.l4;) {
      if (nh == 0 && off != h.l3 + 40) return SynRule::HopByHopNotFirst;
      if (nh == 44 && (rd16(f, off + 2) & 1)) return SynRule::Fragment;
      const size_t len = nh == 44 ? 8 : nh == 51 ? (f[off + 1] + 2u) * 4 : (f[off + 1] + 1u) * 8;
      nh = f[off];
      off += len;
    }
  }
  if (is_local(h.src, w)) return SynRule::SourceIsHost;  // RFC 1812 5.3.7: a martian source
  return std::nullopt;
}

// What a SYN offered (RFC 9293 3.1, 3.7.1; RFC 7323 2, 3; RFC 2018): Linux's reading
// (tcp_parse_options): EOL ends the list, NOP is one byte, a length under 2 or past the
// end ends it, a known kind of the wrong length is skipped, a later one overrides.
struct Offered {
  uint16_t mss = 0;  // 0: none (an MSS of 0 is ignored)
  int wscale = -1;   // -1: none
  bool sack = false, ts = false;
  uint32_t tsval = 0;
  bool zero_mss_after = false;  // an MSS of 0 after another MSS: the other stands
};

Offered offered(std::span<const uint8_t> o) {
  Offered r;
  for (size_t i = 0; i < o.size();) {
    const uint8_t kind = o[i];
    if (kind == 0) break;
    if (kind == 1) {
      ++i;
      continue;
    }
    if (i + 1 >= o.size() || o[i + 1] < 2 || i + o[i + 1] > o.size()) break;
    const size_t len = o[i + 1];
    if (kind == 2 && len == 4) {
      r.zero_mss_after |= r.mss && !rd16(o, i + 2);
      r.mss = rd16(o, i + 2) ? rd16(o, i + 2) : r.mss;
    }
    if (kind == 3 && len == 3) r.wscale = std::min<int>(o[i + 2], 14);
    if (kind == 4 && len == 2) r.sack = true;
    if (kind == 8 && len == 10) {
      r.ts = true;
      r.tsval = rd32(o, i + 2);
    }
    i += len;
  }
  return r;
}

// The cookie's option byte (syncookie.h's layout): the index of the largest MSS of the
// kernel's table not above the client's (536 without one: RFC 9293 3.7.1), the window
// scale (none: 15), SACK and timestamps; less what the namespace turned off.
uint8_t cookie_opts(const Offered& c, bool v6, uint32_t tcp_off) {
  static constexpr std::array<uint16_t, 4> kTable4{536, 1300, 1440, 1460}, kTable6{1220, 1420, 1440, 8940};
  const auto& table = v6 ? kTable6 : kTable4;
  const uint16_t mss = c.mss ? c.mss : 536;
  uint32_t index = 0;
  for (uint32_t i = 0; i < 4; ++i)
    if (mss >= table[i]) index = i;
  uint32_t b = index << LV_COOKIE_OPT_MSS_SHIFT;
  b |= c.wscale < 0 || (tcp_off & LV_TCP_OFF_WSCALE) ? LV_COOKIE_NO_WSCALE : static_cast<uint32_t>(c.wscale);
  if (c.sack && !(tcp_off & LV_TCP_OFF_SACK)) b |= LV_COOKIE_OPT_SACK;
  if (c.ts && !(tcp_off & LV_TCP_OFF_TS)) b |= LV_COOKIE_OPT_TS;
  return static_cast<uint8_t>(b);
}

// The SYN-ACK's options as Linux packs them (tcp_options_write): MSS; NOP, window scale
// 7; SACK permitted and timestamps (or NOP NOP and timestamps; or NOP NOP SACK
// permitted). The TSval is left 0 for the program's; the TSecr is the client's TSval.
std::vector<uint8_t> synack_options(uint8_t opts, uint16_t mss, uint32_t client_tsval, size_t* tsval_at) {
  std::vector<uint8_t> o;
  if (mss) o.insert(o.end(), {2, 4, static_cast<uint8_t>(mss >> 8), static_cast<uint8_t>(mss)});
  if ((opts & LV_COOKIE_OPT_WSCALE) != LV_COOKIE_NO_WSCALE) o.insert(o.end(), {1, 3, 3, 7});
  const bool sack = opts & LV_COOKIE_OPT_SACK;
  if (opts & LV_COOKIE_OPT_TS) {
    o.insert(o.end(), {static_cast<uint8_t>(sack ? 4 : 1), static_cast<uint8_t>(sack ? 2 : 1), 8, 10});
    *tsval_at = o.size();
    o.insert(o.end(), 4, 0);
    for (int i = 3; i >= 0; --i) o.push_back(static_cast<uint8_t>(client_tsval >> (8 * i)));
  } else if (sack) {
    o.insert(o.end(), {1, 1, 4, 2});
  }
  return o;
}

// The SYN-ACK's bytes for a SYN, the numbers and the TSval left 0.
Frame synack_bytes(std::span<const uint8_t> f, const Headers& h, const std::vector<uint8_t>& opts) {
  Frame a(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(h.l3));
  std::swap_ranges(a.begin(), a.begin() + 6, a.begin() + 6);
  const size_t tcp_len = 20 + opts.size();
  if (h.v6) {
    a.insert(a.end(), {0x60, 0, 0, 0, static_cast<uint8_t>(tcp_len >> 8), static_cast<uint8_t>(tcp_len), 6, 64});
  } else {
    const size_t total = 20 + tcp_len;
    a.insert(a.end(),
             {0x45, 0, static_cast<uint8_t>(total >> 8), static_cast<uint8_t>(total), 0, 0, 0x40, 0, 64, 6, 0, 0});
  }
  a.insert(a.end(), h.dst.begin(), h.dst.end());
  a.insert(a.end(), h.src.begin(), h.src.end());
  if (!h.v6) gen::put16(a, h.l3 + 10, gen::checksum(&a[h.l3], 20));
  a.insert(a.end(), f.begin() + static_cast<std::ptrdiff_t>(h.l4 + 2),
           f.begin() + static_cast<std::ptrdiff_t>(h.l4 + 4));
  a.insert(a.end(), f.begin() + static_cast<std::ptrdiff_t>(h.l4), f.begin() + static_cast<std::ptrdiff_t>(h.l4 + 2));
  a.insert(a.end(), 8, 0);  // seq, ack
  a.insert(a.end(), {static_cast<uint8_t>(tcp_len / 4 << 4), kSyn | kAck, 0xff, 0xff, 0, 0, 0, 0});
  a.insert(a.end(), opts.begin(), opts.end());
  return a;
}

lv_cookie_in cookie_in(std::span<const uint8_t> f, const Headers& h) {
  lv_cookie_in in{};
  auto* s = reinterpret_cast<uint8_t*>(in.saddr);
  auto* d = reinterpret_cast<uint8_t*>(in.daddr);
  const size_t at = h.v6 ? 0 : 12;
  if (!h.v6) s[10] = s[11] = d[10] = d[11] = 0xff;
  std::memcpy(s + at, h.src.data(), h.src.size());
  std::memcpy(d + at, h.dst.data(), h.dst.size());
  in.sport = rd16(f, h.l4);
  in.dport = rd16(f, h.l4 + 2);
  in.family = h.v6 ? LV_AF_INET6 : LV_AF_INET;
  return in;
}

// A TCP packet of the class that is not a SYN, of a source with no proof: a RST that
// returns a reset cookie proves its connection (verified); in proxy mode an ACK that
// returns a cookie is a handshake's end (a 2^-23 guess here: undecided); anything else
// belongs to no connection the host has (the test's has none): unverified.
SynExpect not_syn(std::span<const uint8_t> f, const Headers& h, const SynSetting& s, const CookieOracle& o) {
  const uint8_t flags = f[h.l4 + 13];
  lv_cookie_in in = cookie_in(f, h);
  if ((flags & (kAck | kRst | kSyn)) == kAck && s.proxy) {
    in.isn = rd32(f, h.l4 + 4) - 1;
    if (o.wide(in, rd32(f, h.l4 + 8) - 1)) return SynExpect{XDP_PASS, LV_R_PROXIED, SynRule::AckCookie, false, {}};
  } else if ((flags & (kAck | kRst | kSyn)) == kRst && o.wide(in, rd32(f, h.l4 + 4))) {
    return drop(LV_R_VERIFIED, SynRule::RstCookie);
  }
  return drop(LV_R_UNVERIFIED, SynRule::NotSyn);
}

SynExpect answer(std::span<const uint8_t> f, const Headers& h, const SynSetting& s) {
  SynAckPlan plan;
  plan.proxy = s.proxy;
  plan.in = cookie_in(f, h);
  plan.l3 = h.l3;
  plan.l4 = h.l3 + (h.v6 ? 40 : 20);
  plan.syn_l4 = h.l4;
  std::vector<uint8_t> opts;
  bool zero_mss_after = false;
  if (s.proxy) {
    const size_t doff = (f[h.l4 + 12] >> 4) * size_t{4};
    const Offered c = offered(f.subspan(h.l4 + 20, doff - 20));
    zero_mss_after = c.zero_mss_after;
    plan.in.isn = rd32(f, h.l4 + 4);
    plan.opts = cookie_opts(c, h.v6, s.tcp_off);
    plan.in.opts = plan.opts;
    opts = synack_options(plan.opts, h.v6 ? s.mss6 : s.mss4, c.tsval, &plan.tsval_at);
    // The frame never grows: levee's MSS is left out when the SYN sent none and there
    // is no room for it.
    if (plan.l4 + 20 + opts.size() > f.size() && !c.mss) opts = synack_options(plan.opts, 0, c.tsval, &plan.tsval_at);
    if (plan.l4 + 20 + opts.size() > f.size()) return drop(LV_R_UNVERIFIED, SynRule::NoRoom);
    if (plan.tsval_at) plan.tsval_at += plan.l4 + 20;
  }
  plan.bytes = synack_bytes(f, h, opts);
  if (s.proxy) put32(plan.bytes, plan.l4 + 8, rd32(f, h.l4 + 4) + 1);
  SynExpect e = verdict(XDP_TX, LV_R_CHALLENGED, zero_mss_after ? SynRule::AnsweredAfterZeroMss : SynRule::Answered);
  e.answer = std::move(plan);
  return e;
}

// A TCP frame of the class: what the gate must make of it.
SynExpect tcp_expect(std::span<const uint8_t> f, const Headers& h, const Parsed& p, const SynWorld& w,
                     const SynSetting& s, const CookieOracle& o);

}  // namespace

const char* rule_name(SynRule r) {
  static constexpr const char* kNames[] = {"parse",
                                           "outside the gate",
                                           "not a SYN",
                                           "a RST with a cookie",
                                           "an ACK with a cookie",
                                           "flags",
                                           "data offset",
                                           "group MAC",
                                           "not unicast",
                                           "not the host's",
                                           "not the host's, link-local",
                                           "no listener",
                                           "checksum",
                                           "IPv4 header checksum",
                                           "fragment",
                                           "hop-by-hop not first",
                                           "source is the host's",
                                           "no room",
                                           "answered",
                                           "answered, a zero MSS after another"};
  static_assert(std::size(kNames) == static_cast<size_t>(SynRule::kCount));
  return kNames[static_cast<size_t>(r)];
}

SynExpect syn_expect(std::span<const uint8_t> f, const SynWorld& w, const SynSetting& s, const CookieOracle& o) {
  const Parsed p = parse_frame(f);
  if (p.reason != LV_R_CONFORMING)
    return verdict(p.reason == LV_R_NOT_IP ? XDP_PASS : XDP_DROP, p.reason, SynRule::Parse);
  const bool in_class = p.dport == w.listen_port || p.dport == w.closed_port;
  if (!in_class || (p.kind != LV_L4_TCP_SYN && p.kind != LV_L4_TCP))
    return verdict(XDP_PASS, LV_R_CONFORMING, SynRule::OutsideGate);  // a class without limits, in the test
  const Headers h = headers(f, p);
  SynExpect e = tcp_expect(f, h, p, w, s, o);
  e.l4 = h.l4;
  return e;
}

namespace {

SynExpect tcp_expect(std::span<const uint8_t> f, const Headers& h, const Parsed& p, const SynWorld& w,
                     const SynSetting& s, const CookieOracle& o) {
  if (p.kind == LV_L4_TCP) return not_syn(f, h, s, o);
  const uint8_t flags = f[h.l4 + 13];
  const size_t doff = (f[h.l4 + 12] >> 4) * size_t{4}, seg = h.ip_end - h.l4;
  if (flags & (kRst | kFin)) return drop(LV_R_MALFORMED, SynRule::Flags);
  if (doff < 20 || doff > seg) return drop(LV_R_MALFORMED, SynRule::DataOffset);
  if ((f[0] | f[6]) & 1) return drop(LV_R_MARTIAN, SynRule::GroupMac);
  if (!unicast(h.src) || !unicast(h.dst)) return drop(LV_R_MARTIAN, SynRule::NotUnicast);
  if (!is_local(h.dst, w))
    return drop(LV_R_MARTIAN, link_local(h.src) || link_local(h.dst) ? SynRule::NotOursLinkLocal : SynRule::NotOurs);
  if (p.dport != w.listen_port) return drop(LV_R_NO_LISTENER, SynRule::NoListener);
  // A SYN that carries data (TCP Fast Open) is answered without its checksum checked
  // (CONFIG: its data is not kept).
  if (doff == seg && !checksum_ok(f, h, seg)) return drop(LV_R_MALFORMED, SynRule::Checksum);
  if (const auto fault = datagram_fault(f, h, w))
    return drop(*fault == SynRule::SourceIsHost ? LV_R_MARTIAN : LV_R_MALFORMED, *fault);
  return answer(f, h, s);
}

}  // namespace

std::string synack_differs(const SynAckPlan& plan, std::span<const uint8_t> out, const CookieOracle& o) {
  if (out.size() != plan.bytes.size()) return fmt::format("a frame of {} bytes, not {}", out.size(), plan.bytes.size());
  Frame want = plan.bytes;
  const size_t l4 = plan.l4;
  const uint32_t seq = rd32(out, l4 + 4), ack = rd32(out, l4 + 8);
  const uint32_t cookie = plan.proxy ? seq : ack;
  if ((cookie & LV_COOKIE_OPTS_MASK) != plan.opts)
    return fmt::format("the cookie's option byte is {:#04x}, not {:#04x}", cookie & LV_COOKIE_OPTS_MASK, plan.opts);
  const auto wide = o.wide(plan.in, cookie);
  if (!wide) return fmt::format("the cookie {:#010x} is not good for the connection", cookie);
  put32(want, l4 + 4, plan.proxy ? cookie : ~cookie);
  if (!plan.proxy) put32(want, l4 + 8, cookie);
  if (plan.tsval_at) {
    const uint32_t tsval = rd32(out, plan.tsval_at);
    if (!o.tsval(*wide, tsval)) return fmt::format("the TSval {:#010x} is not one levee gives now", tsval);
    put32(want, plan.tsval_at, tsval);
  }
  Headers h;
  h.l4 = l4;
  h.v6 = plan.in.family == LV_AF_INET6;
  h.src = std::span<const uint8_t>(want).subspan(plan.l3 + (h.v6 ? 8 : 12), h.v6 ? 16 : 4);
  h.dst = std::span<const uint8_t>(want).subspan(plan.l3 + (h.v6 ? 24 : 16), h.v6 ? 16 : 4);
  gen::put16(want, l4 + 16, tcp_sum(want, h, want.size() - l4));
  std::string diff;
  for (size_t i = 0, n = 0; i < want.size() && n < 4; ++i)
    if (want[i] != out[i])
      diff += fmt::format("{}byte {} is {:#04x}, not {:#04x}", n++ ? "; " : "", i, out[i], want[i]);
  return diff;
}

}  // namespace levee::model
