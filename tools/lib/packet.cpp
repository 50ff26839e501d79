#include "packet.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <stdexcept>

namespace levee::pkt {
namespace {

constexpr uint16_t kEthIp = 0x0800, kEthIpv6 = 0x86dd, kEthArp = 0x0806;
constexpr uint8_t kProtoIcmp = 1, kProtoTcp = 6, kProtoUdp = 17, kProtoIcmp6 = 58;
constexpr uint8_t kProtoFrag6 = 44;

void put16(std::vector<uint8_t>& b, size_t off, uint16_t v) {
  b[off] = static_cast<uint8_t>(v >> 8);
  b[off + 1] = static_cast<uint8_t>(v);
}

uint32_t partial_sum(const uint8_t* data, size_t len, uint32_t sum) {
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
  if (len & 1) sum += static_cast<uint32_t>(data[len - 1] << 8);
  return sum;
}

}  // namespace

uint16_t inet_checksum(const uint8_t* data, size_t len, uint32_t sum) {
  sum = partial_sum(data, len, sum);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

std::array<uint8_t, 4> ipv4_bytes(std::string_view s) {
  std::array<uint8_t, 4> out{};
  if (inet_pton(AF_INET, std::string(s).c_str(), out.data()) != 1)
    throw std::invalid_argument("not an IPv4 address: " + std::string(s));
  return out;
}

std::array<uint8_t, 16> ipv6_bytes(std::string_view s) {
  std::array<uint8_t, 16> out{};
  if (inet_pton(AF_INET6, std::string(s).c_str(), out.data()) != 1)
    throw std::invalid_argument("not an IPv6 address: " + std::string(s));
  return out;
}

size_t Frame::push(Layer kind, size_t len) {
  size_t off = buf_.size();
  buf_.resize(off + len, 0);
  layers_.push_back({kind, off, len});
  return off;
}

// Fill the "next protocol" field of the layer before the one being added.
void Frame::set_next(uint16_t ethertype, uint8_t ipproto) {
  if (layers_.empty()) return;
  const LayerPos& prev = layers_.back();
  switch (prev.kind) {
    case Layer::Eth:
      put16(buf_, prev.offset + 12, ethertype);
      break;
    case Layer::Vlan:
      put16(buf_, prev.offset + 2, ethertype);
      break;
    case Layer::Ipv4:
      buf_[prev.offset + 9] = ipproto;
      break;
    case Layer::Ipv6:
      buf_[prev.offset + 6] = ipproto;
      break;
    case Layer::Ipv6Ext:
      buf_[prev.offset] = ipproto;
      break;
    default:
      break;
  }
}

Frame& Frame::eth(Mac dst, Mac src) {
  size_t off = push(Layer::Eth, 14);
  std::copy(dst.begin(), dst.end(), buf_.begin() + off);
  std::copy(src.begin(), src.end(), buf_.begin() + off + 6);
  return *this;
}

Frame& Frame::vlan(uint16_t vid, uint16_t tpid) {
  set_next(tpid, 0);
  size_t off = push(Layer::Vlan, 4);
  put16(buf_, off, vid & 0x0fff);
  return *this;
}

Frame& Frame::ethertype(uint16_t type) {
  set_next(type, 0);
  return *this;
}

Frame& Frame::arp_request(std::string_view sender_ip, std::string_view target_ip) {
  set_next(kEthArp, 0);
  size_t off = push(Layer::Raw, 28);
  put16(buf_, off, 1);           // Ethernet
  put16(buf_, off + 2, kEthIp);  // IPv4
  buf_[off + 4] = 6;
  buf_[off + 5] = 4;
  put16(buf_, off + 6, 1);  // request
  std::copy(kSrcMac.begin(), kSrcMac.end(), buf_.begin() + off + 8);
  auto s = ipv4_bytes(sender_ip), t = ipv4_bytes(target_ip);
  std::copy(s.begin(), s.end(), buf_.begin() + off + 14);
  std::copy(t.begin(), t.end(), buf_.begin() + off + 24);
  return *this;
}

Frame& Frame::ipv4(std::string_view src, std::string_view dst, std::vector<uint8_t> options) {
  set_next(kEthIp, 0);
  while (options.size() % 4) options.push_back(0);  // end-of-options padding
  size_t hlen = 20 + options.size();
  if (hlen > 60) throw std::invalid_argument("IPv4 options longer than 40 bytes");
  size_t off = push(Layer::Ipv4, hlen);
  buf_[off] = static_cast<uint8_t>(0x40 | (hlen / 4));
  put16(buf_, off + 4, 0x1234);  // id
  buf_[off + 8] = 64;            // ttl
  auto s = ipv4_bytes(src), d = ipv4_bytes(dst);
  std::copy(s.begin(), s.end(), buf_.begin() + off + 12);
  std::copy(d.begin(), d.end(), buf_.begin() + off + 16);
  std::copy(options.begin(), options.end(), buf_.begin() + off + 20);
  return *this;
}

Frame& Frame::ipv4_fragment(uint16_t frag_offset, bool more_fragments) {
  size_t off = layer(Layer::Ipv4);
  put16(buf_, off + 6, static_cast<uint16_t>((more_fragments ? 0x2000 : 0) | (frag_offset & 0x1fff)));
  return *this;
}

Frame& Frame::ipv6(std::string_view src, std::string_view dst) {
  set_next(kEthIpv6, 0);
  size_t off = push(Layer::Ipv6, 40);
  buf_[off] = 0x60;
  buf_[off + 7] = 64;  // hop limit
  auto s = ipv6_bytes(src), d = ipv6_bytes(dst);
  std::copy(s.begin(), s.end(), buf_.begin() + off + 8);
  std::copy(d.begin(), d.end(), buf_.begin() + off + 24);
  return *this;
}

Frame& Frame::ipv6_ext(uint8_t type) {
  set_next(0, type);
  size_t off = push(Layer::Ipv6Ext, 8);
  buf_[off + 1] = 0;  // length in 8-byte units beyond the first 8
  if (type == 0 || type == 60) {
    buf_[off + 2] = 1;  // PadN option filling the header
    buf_[off + 3] = 4;
  }
  return *this;
}

Frame& Frame::ipv6_frag(uint16_t frag_offset, bool more_fragments, uint32_t id) {
  set_next(0, kProtoFrag6);
  size_t off = push(Layer::Ipv6Ext, 8);
  put16(buf_, off + 2, static_cast<uint16_t>(frag_offset << 3 | (more_fragments ? 1 : 0)));
  put16(buf_, off + 4, static_cast<uint16_t>(id >> 16));
  put16(buf_, off + 6, static_cast<uint16_t>(id));
  return *this;
}

Frame& Frame::udp(uint16_t sport, uint16_t dport) {
  set_next(0, kProtoUdp);
  size_t off = push(Layer::Udp, 8);
  put16(buf_, off, sport);
  put16(buf_, off + 2, dport);
  return *this;
}

Frame& Frame::tcp(uint16_t sport, uint16_t dport, uint8_t flags) {
  set_next(0, kProtoTcp);
  size_t off = push(Layer::Tcp, 20);
  put16(buf_, off, sport);
  put16(buf_, off + 2, dport);
  put16(buf_, off + 4, 0x0001);  // seq
  buf_[off + 12] = 5 << 4;       // data offset
  buf_[off + 13] = flags;
  put16(buf_, off + 14, 65535);  // window
  return *this;
}

Frame& Frame::icmp_echo(uint16_t id, uint16_t seq) {
  set_next(0, kProtoIcmp);
  size_t off = push(Layer::Icmp, 8);
  buf_[off] = 8;
  put16(buf_, off + 4, id);
  put16(buf_, off + 6, seq);
  return *this;
}

Frame& Frame::icmp6_echo(uint16_t id, uint16_t seq) {
  set_next(0, kProtoIcmp6);
  size_t off = push(Layer::Icmp6, 8);
  buf_[off] = 128;
  put16(buf_, off + 4, id);
  put16(buf_, off + 6, seq);
  return *this;
}

Frame& Frame::payload(size_t n, uint8_t fill) {
  size_t off = buf_.size();
  buf_.resize(off + n, fill);
  return *this;
}

Frame& Frame::pad_to(size_t n) {
  pad_to_ = n;
  return *this;
}

size_t Frame::layer(Layer kind) const {
  for (const auto& l : layers_)
    if (l.kind == kind) return l.offset;
  throw std::logic_error("frame has no such layer");
}

std::vector<uint8_t> Frame::bytes() const {
  std::vector<uint8_t> b = buf_;
  const size_t end = b.size();
  // Pseudo-header sum for the transport checksum, from the innermost IP layer.
  uint32_t pseudo = 0;
  bool have_ip = false;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const LayerPos& l = layers_[i];
    size_t rest = end - l.offset;
    switch (l.kind) {
      case Layer::Ipv4: {
        put16(b, l.offset + 2, static_cast<uint16_t>(rest));
        put16(b, l.offset + 10, 0);
        put16(b, l.offset + 10, inet_checksum(&b[l.offset], l.length));
        pseudo = partial_sum(&b[l.offset + 12], 8, 0) + b[l.offset + 9];
        have_ip = true;
        break;
      }
      case Layer::Ipv6: {
        put16(b, l.offset + 4, static_cast<uint16_t>(rest - 40));
        pseudo = partial_sum(&b[l.offset + 8], 32, 0);
        have_ip = true;
        break;
      }
      default:
        break;
    }
  }
  for (const auto& l : layers_) {
    size_t rest = end - l.offset;
    size_t csum_off = 0;
    uint8_t proto = 0;
    switch (l.kind) {
      case Layer::Udp:
        put16(b, l.offset + 4, static_cast<uint16_t>(rest));
        csum_off = 6;
        proto = kProtoUdp;
        break;
      case Layer::Tcp:
        csum_off = 16;
        proto = kProtoTcp;
        break;
      case Layer::Icmp:
        csum_off = 2;
        break;
      case Layer::Icmp6:
        csum_off = 2;
        proto = kProtoIcmp6;
        break;
      default:
        continue;
    }
    put16(b, l.offset + csum_off, 0);
    uint32_t sum = 0;
    if (l.kind != Layer::Icmp && have_ip) {
      // IPv4 pseudo-header already holds its protocol byte; IPv6 needs next header.
      bool v6 = std::any_of(layers_.begin(), layers_.end(), [](const LayerPos& x) { return x.kind == Layer::Ipv6; });
      sum = v6 ? pseudo + proto : pseudo;
      sum += static_cast<uint32_t>(rest);
    }
    uint16_t c = inet_checksum(&b[l.offset], rest, sum);
    if (l.kind == Layer::Udp && c == 0) c = 0xffff;
    put16(b, l.offset + csum_off, c);
  }
  if (b.size() < pad_to_) b.resize(pad_to_, 0);
  return b;
}

}  // namespace levee::pkt
