// parse_model.hpp - the reference parser: what the datapath must make of a frame,
// written from the rules (docs/CLI.md "Reasons", docs/ARCHITECTURE.md "The packet
// path") and not from bpf/parse.h, so that a bug in either shows up as a disagreement.
// Used by the differential program test (tests/progtest/difftest_test.cpp) and by the
// parser's fuzz harness (tests/fuzz/parse_fuzz.cpp). Plain byte offsets, one layer per
// function, no cursor tricks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "levee_abi.h"

namespace levee::model {

// What the parse decided: LV_R_CONFORMING with the fields below, or the reason the frame
// goes no further (not_ip, malformed, vlan_depth, ext_depth).
struct Parsed {
  uint32_t reason = LV_R_MALFORMED;
  uint8_t family = 0;              // LV_AF_INET or LV_AF_INET6
  uint8_t kind = 0;                // enum lv_l4_kind
  uint16_t dport = 0;              // TCP/UDP destination port of a first fragment, else 0
  uint16_t sport = 0;              // its source port, likewise
  uint16_t l4_tail = 0;            // bytes from that header to the frame's end, likewise
  std::array<uint8_t, 16> addr{};  // source; IPv4 as ::ffff:a.b.c.d
  bool more_frags = false;         // a fragment with more to come (IPv4 MF, IPv6 M)
  bool operator==(const Parsed&) const = default;
};

namespace detail {

inline uint16_t be16(std::span<const uint8_t> b, size_t off) { return static_cast<uint16_t>(b[off] << 8 | b[off + 1]); }

constexpr uint16_t kIpv4 = 0x0800, kIpv6 = 0x86dd, kDot1q = 0x8100, kDot1ad = 0x88a8;
constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp = 1, kIcmp6 = 58, kFragment = 44, kAh = 51;
constexpr int kMaxTags = 2, kMaxExtHeaders = 8;

inline Parsed fail(uint32_t reason) {
  Parsed p;
  p.reason = reason;
  return p;
}

// The transport header. `l4` starts where it would be and runs to the frame's end;
// `avail` is what the IP length leaves for it (never more than the frame holds);
// `later_fragment`: no transport header.
inline Parsed transport(Parsed p, std::span<const uint8_t> l4, size_t avail, uint8_t proto, bool later_fragment) {
  const bool v4 = p.family == LV_AF_INET;
  p.reason = LV_R_CONFORMING;
  p.dport = 0;
  p.sport = 0;
  p.l4_tail = 0;
  if (proto == kTcp || proto == kUdp) {
    if (later_fragment) {
      p.kind = proto == kTcp ? LV_L4_TCP_FRAG : LV_L4_UDP_FRAG;
      return p;
    }
    const size_t need = proto == kTcp ? 20 : 8;
    if (avail < need || l4.size() < need) return fail(LV_R_MALFORMED);
    p.dport = be16(l4, 2);
    p.sport = be16(l4, 0);
    p.l4_tail = static_cast<uint16_t>(l4.size());
    if (proto == kUdp) {
      p.kind = LV_L4_UDP;
    } else {
      const uint8_t flags = l4[13];
      const bool syn = flags & 0x02, ack = flags & 0x10;
      p.kind = syn && !ack ? LV_L4_TCP_SYN : LV_L4_TCP;
    }
    return p;
  }
  if (proto == kIcmp && v4)
    p.kind = LV_L4_ICMP;
  else if (proto == kIcmp6 && !v4)
    p.kind = LV_L4_ICMP6;
  else
    p.kind = LV_L4_OTHER;
  return p;
}

inline Parsed ipv4(std::span<const uint8_t> ip) {
  if (ip.size() < 20 || ip[0] >> 4 != 4) return fail(LV_R_MALFORMED);
  const size_t header = (ip[0] & 0x0f) * size_t{4};
  const size_t total = be16(ip, 2);
  // The header within the total length, the total length within the frame (Ethernet
  // padding may follow it).
  if (header < 20 || total < header || total > ip.size()) return fail(LV_R_MALFORMED);
  Parsed p;
  p.family = LV_AF_INET;
  p.addr[10] = 0xff;
  p.addr[11] = 0xff;
  for (size_t i = 0; i < 4; ++i) p.addr[12 + i] = ip[12 + i];
  const bool later_fragment = (be16(ip, 6) & 0x1fff) != 0;
  p.more_frags = (be16(ip, 6) & 0x2000) != 0;
  return transport(p, ip.subspan(header), total - header, ip[9], later_fragment);
}

inline bool ipv6_extension(uint8_t nh) {
  switch (nh) {
    case 0:    // hop-by-hop options
    case 43:   // routing
    case 60:   // destination options
    case 135:  // mobility
    case 139:  // HIP
    case 140:  // shim6
    case kAh:
      return true;
    default:
      return false;
  }
}

inline Parsed ipv6(std::span<const uint8_t> ip) {
  if (ip.size() < 40 || ip[0] >> 4 != 6) return fail(LV_R_MALFORMED);
  size_t avail = be16(ip, 4);
  if (avail > ip.size() - 40) return fail(LV_R_MALFORMED);
  Parsed p;
  p.family = LV_AF_INET6;
  for (size_t i = 0; i < 16; ++i) p.addr[i] = ip[8 + i];
  uint8_t nh = ip[6];
  size_t off = 40;
  for (int walked = 0;; ++walked) {
    const bool ext = ipv6_extension(nh);
    if (!ext && nh != kFragment) return transport(p, ip.subspan(off), avail, nh, false);
    if (walked == kMaxExtHeaders) return fail(LV_R_EXT_DEPTH);
    // RFC 8200 4.1: hop-by-hop options only right after the IPv6 header.
    if (nh == 0 && walked > 0) return fail(LV_R_MALFORMED);
    if (nh == kFragment) {
      if (ip.size() - off < 8 || avail < 8) return fail(LV_R_MALFORMED);
      const uint8_t next = ip[off];
      const bool later_fragment = (be16(ip, off + 2) >> 3) != 0;
      p.more_frags = p.more_frags || (be16(ip, off + 2) & 1) != 0;  // any of them
      off += 8;
      avail -= 8;
      if (later_fragment) return transport(p, ip.subspan(off), avail, next, true);
      nh = next;
      continue;
    }
    if (ip.size() - off < 2) return fail(LV_R_MALFORMED);
    const size_t len = nh == kAh ? (ip[off + 1] + size_t{2}) * 4 : (ip[off + 1] + size_t{1}) * 8;
    if (len > avail || len > ip.size() - off) return fail(LV_R_MALFORMED);
    nh = ip[off];
    off += len;
    avail -= len;
  }
}

}  // namespace detail

// A whole frame, from its Ethernet header.
inline Parsed parse_frame(std::span<const uint8_t> f) {
  using namespace detail;
  if (f.size() < 14) return fail(LV_R_MALFORMED);
  uint16_t type = be16(f, 12);
  size_t off = 14;
  for (int tags = 0; type == kDot1q || type == kDot1ad; ++tags) {
    if (tags == kMaxTags) return fail(LV_R_VLAN_DEPTH);  // the third tag is not read
    if (f.size() - off < 4) return fail(LV_R_MALFORMED);
    type = be16(f, off + 2);
    off += 4;
  }
  if (type < 0x0600) {
    // IEEE 802.3: the field is the length, and an LLC header (3 bytes) must fit in it.
    const bool truncated = type < 3 || type > f.size() - off;
    return fail(truncated ? LV_R_MALFORMED : LV_R_NOT_IP);
  }
  if (type == kIpv4) return ipv4(f.subspan(off));
  if (type == kIpv6) return ipv6(f.subspan(off));
  return fail(LV_R_NOT_IP);
}

}  // namespace levee::model
