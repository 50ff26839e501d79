// packet.hpp - builds test and flood frames layer by layer.
//
//   auto f = Frame().eth().vlan(100).ipv4("198.18.0.2", "198.18.1.1").udp(1234, 53)
//                   .payload(18).bytes();
//
// Each layer fills in the previous layer's "next protocol" field; bytes() fixes up
// lengths and checksums. Tests that need a broken frame mutate the returned bytes
// (the offsets of each layer are available through layer()).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace levee::pkt {

using Mac = std::array<uint8_t, 6>;

inline constexpr Mac kSrcMac{0x02, 0x00, 0x5e, 0x00, 0x00, 0x01};
inline constexpr Mac kDstMac{0x02, 0x00, 0x5e, 0x00, 0x00, 0x02};

enum class Layer : uint8_t { Eth, Vlan, Ipv4, Ipv6, Ipv6Ext, Udp, Tcp, Icmp, Icmp6, Raw };

struct LayerPos {
  Layer kind;
  size_t offset;
  size_t length;  // header length (payload excluded)
};

// TCP flag bits, as on the wire.
inline constexpr uint8_t kTcpFin = 0x01, kTcpSyn = 0x02, kTcpRst = 0x04, kTcpPsh = 0x08, kTcpAck = 0x10;

class Frame {
 public:
  Frame& eth(Mac dst = kDstMac, Mac src = kSrcMac);
  // 802.1Q by default; pass 0x88a8 for an 802.1ad (QinQ outer) tag.
  Frame& vlan(uint16_t vid, uint16_t tpid = 0x8100);
  // Raw ethertype for non-IP frames (the frame body is added with payload()).
  Frame& ethertype(uint16_t type);
  Frame& arp_request(std::string_view sender_ip, std::string_view target_ip);
  // options: raw IPv4 option bytes, padded to a multiple of 4.
  Frame& ipv4(std::string_view src, std::string_view dst, std::vector<uint8_t> options = {});
  // frag_offset in 8-byte units.
  Frame& ipv4_fragment(uint16_t frag_offset, bool more_fragments);
  Frame& ipv6(std::string_view src, std::string_view dst);
  // A generic IPv6 extension header (hop-by-hop 0, routing 43, destination 60) of
  // 8 bytes, or a fragment header (44).
  Frame& ipv6_ext(uint8_t type);
  Frame& ipv6_frag(uint16_t frag_offset, bool more_fragments, uint32_t id = 1);
  Frame& udp(uint16_t sport, uint16_t dport);
  Frame& tcp(uint16_t sport, uint16_t dport, uint8_t flags = kTcpSyn);
  Frame& icmp_echo(uint16_t id = 1, uint16_t seq = 1);
  Frame& icmp6_echo(uint16_t id = 1, uint16_t seq = 1);
  Frame& payload(size_t n, uint8_t fill = 0xab);
  // Pad the finished frame with zeros to at least n bytes (Ethernet minimum is 60).
  Frame& pad_to(size_t n);

  // The finished frame: lengths and checksums filled in.
  std::vector<uint8_t> bytes() const;
  const std::vector<LayerPos>& layers() const { return layers_; }
  // Offset of the first layer of a kind (throws if absent).
  size_t layer(Layer kind) const;

 private:
  void set_next(uint16_t ethertype, uint8_t ipproto);
  size_t push(Layer kind, size_t len);

  std::vector<uint8_t> buf_;
  std::vector<LayerPos> layers_;
  size_t pad_to_ = 0;
};

// Parse a textual IPv4/IPv6 address; throws std::invalid_argument.
std::array<uint8_t, 4> ipv4_bytes(std::string_view s);
std::array<uint8_t, 16> ipv6_bytes(std::string_view s);

// RFC 1071 checksum over data, folded, starting from a partial sum.
uint16_t inet_checksum(const uint8_t* data, size_t len, uint32_t sum = 0);

}  // namespace levee::pkt
