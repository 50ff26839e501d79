// frames.hpp - frames for the policy tests, beyond what the builder (tools/lib/packet.hpp)
// makes: other IP protocols, and IP lengths that end before the transport header does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "packet.hpp"

namespace levee::progtest {

using Bytes = std::vector<uint8_t>;

inline constexpr const char* kDst4 = "198.19.0.1";
inline constexpr const char* kDst6 = "2001:db8:ffff::1";

inline bool is_ipv6(const std::string& addr) { return addr.find(':') != std::string::npos; }

// Ethernet and the IP header of the family of `src`.
inline pkt::Frame ip_from(const std::string& src) {
  return is_ipv6(src) ? pkt::Frame().eth().ipv6(src, kDst6) : pkt::Frame().eth().ipv4(src, kDst4);
}

inline Bytes udp_from(const std::string& src, uint16_t dport, size_t payload = 18) {
  return ip_from(src).udp(40000, dport).payload(payload).bytes();
}

inline Bytes tcp_from(const std::string& src, uint16_t dport, uint8_t flags = pkt::kTcpSyn, size_t payload = 0) {
  return ip_from(src).tcp(40000, dport, flags).payload(payload).bytes();
}

inline void put16(Bytes& b, size_t off, uint16_t v) {
  b[off] = static_cast<uint8_t>(v >> 8);
  b[off + 1] = static_cast<uint8_t>(v);
}

// Recompute the IPv4 header checksum after an edit.
inline void fix_ipv4_checksum(Bytes& b, const pkt::Frame& f) {
  const size_t off = f.layer(pkt::Layer::Ipv4);
  const size_t ihl = (b[off] & 0x0f) * 4u;
  put16(b, off + 10, 0);
  put16(b, off + 10, pkt::inet_checksum(&b[off], ihl));
}

inline uint16_t get16(const Bytes& b, size_t off) { return static_cast<uint16_t>(b[off] << 8 | b[off + 1]); }

// Recompute the TCP checksum after an edit of the segment (its pseudo-header from the
// IP header, its length from the IP length: not the frame's, which may be padded).
inline void fix_tcp_checksum(Bytes& b, const pkt::Frame& f) {
  bool v6 = false;
  for (const auto& l : f.layers()) v6 |= l.kind == pkt::Layer::Ipv6;
  const size_t l3 = f.layer(v6 ? pkt::Layer::Ipv6 : pkt::Layer::Ipv4), l4 = f.layer(pkt::Layer::Tcp);
  const size_t end = v6 ? l3 + 40 + get16(b, l3 + 4) : l3 + get16(b, l3 + 2);
  const size_t len = end - l4;
  uint32_t pseudo = 6 + static_cast<uint32_t>(len);
  for (size_t i = v6 ? 8 : 12; i < (v6 ? 40u : 20u); i += 2) pseudo += get16(b, l3 + i);
  put16(b, l4 + 16, 0);
  put16(b, l4 + 16, pkt::inet_checksum(&b[l4], len, pseudo));
}

// The IPv4 total length, or the IPv6 payload length, set to `len`; the frame keeps its
// bytes (what lies past the new length is Ethernet padding).
inline Bytes with_ip_length(const pkt::Frame& f, uint16_t len) {
  Bytes b = f.bytes();
  bool v6 = false;
  for (const auto& l : f.layers()) v6 |= l.kind == pkt::Layer::Ipv6;
  if (v6) {
    put16(b, f.layer(pkt::Layer::Ipv6) + 4, len);
  } else {
    put16(b, f.layer(pkt::Layer::Ipv4) + 2, len);
    fix_ipv4_checksum(b, f);
  }
  return b;
}

// An IP packet of protocol `proto` (IPv4) or next header `proto` (IPv6, directly after
// the fixed header) with `payload` bytes behind it.
inline Bytes ip_proto_from(const std::string& src, uint8_t proto, size_t payload = 24) {
  pkt::Frame f = ip_from(src).payload(payload);
  Bytes b = f.bytes();
  if (is_ipv6(src)) {
    b[f.layer(pkt::Layer::Ipv6) + 6] = proto;
  } else {
    b[f.layer(pkt::Layer::Ipv4) + 9] = proto;
    fix_ipv4_checksum(b, f);
  }
  return b;
}

}  // namespace levee::progtest
