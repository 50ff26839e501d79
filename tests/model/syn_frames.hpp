// syn_frames.hpp - hostile frames for the SYN path of SYN authentication, made from a
// seed (the differential program test, tests/progtest/syn_hostile_test.cpp) or from a
// fuzzer's bytes (tests/fuzz/synpath_fuzz.cpp), the same way for both: a frame is a
// series of draws, so a fuzzer's mutation of its input is a mutation of the frame's
// shape. What they cover: up to three VLAN tags; group MACs; IPv4 options (IHL 5 to
// 15), bad header checksums, fragments; IPv6 extension-header chains of every length
// (hop-by-hop, destination options, routing, fragment; past the parser's depth, and
// running off the frame's end), so that the TCP header starts anywhere, far past byte
// 118 too; every TCP flag byte and NS; data offsets 0 to 15; well-formed, malformed and
// truncated options; data (TCP Fast Open); bad and partial (CHECKSUM_PARTIAL) TCP
// checksums; IP lengths shorter or longer than the frame, Ethernet padding, frames cut
// anywhere; and sources and destinations that are not unicast or not the host's.
// tests/model/syn_model.hpp says what levee must answer to each.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace levee::model {

// Where the host is: what the generator aims at and the model judges by.
struct SynWorld {
  std::array<uint8_t, 4> local4{198, 19, 0, 1};  // the host's own addresses
  std::array<uint8_t, 16> local6{0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  uint16_t listen_port = 80;  // the class's port with a listener
  uint16_t closed_port = 81;  // the class's port without one
  uint16_t other_port = 443;  // a port of no class with SYN authentication
};

// Random draws: from a seed (splitmix64), or from a fuzzer's bytes, four a draw, then
// zeros once they run out (so that every input makes a frame).
class Draw {
 public:
  explicit Draw(uint64_t seed) : state_(seed) {}
  explicit Draw(std::span<const uint8_t> bytes) : bytes_(bytes), from_bytes_(true) {}
  uint32_t next() {
    if (!from_bytes_) {
      uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      return static_cast<uint32_t>(z ^ (z >> 31));
    }
    uint32_t v = 0;
    for (int i = 0; i < 4 && used_ < bytes_.size(); ++i) v = v << 8 | bytes_[used_++];
    return v;
  }
  uint32_t below(uint32_t n) { return n ? next() % n : 0; }
  bool percent(uint32_t p) { return below(100) < p; }
  uint8_t byte() { return static_cast<uint8_t>(next()); }

 private:
  uint64_t state_ = 0;
  std::span<const uint8_t> bytes_;
  size_t used_ = 0;
  bool from_bytes_ = false;
};

using Frame = std::vector<uint8_t>;

// The longest frame made: BPF_PROG_TEST_RUN takes an XDP frame of one page less its
// head and tail room.
inline constexpr size_t kMaxFrame = 3400;

namespace gen {

inline void put16(Frame& f, size_t off, uint16_t v) {
  f[off] = static_cast<uint8_t>(v >> 8);
  f[off + 1] = static_cast<uint8_t>(v);
}
inline void push16(Frame& f, uint16_t v) {
  f.push_back(static_cast<uint8_t>(v >> 8));
  f.push_back(static_cast<uint8_t>(v));
}
inline void push32(Frame& f, uint32_t v) {
  push16(f, static_cast<uint16_t>(v >> 16));
  push16(f, static_cast<uint16_t>(v));
}

// The Internet checksum (RFC 1071) of `len` bytes at `p`, plus `sum` already added.
inline uint16_t checksum(const uint8_t* p, size_t len, uint32_t sum = 0) {
  uint64_t s = sum;
  for (size_t i = 0; i + 1 < len; i += 2) s += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (len & 1) s += static_cast<uint32_t>(p[len - 1] << 8);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return static_cast<uint16_t>(~s);
}

// A MAC: mostly levee's unicast ones, sometimes the broadcast or a multicast group.
inline void mac(Frame& f, Draw& d, uint8_t last) {
  const uint32_t r = d.below(100);
  if (r < 94) {
    f.insert(f.end(), {0x02, 0x00, 0x5e, 0x00, 0x00, last});
  } else if (r < 97) {
    f.insert(f.end(), 6, 0xff);
  } else {
    f.insert(f.end(), {0x01, 0x00, 0x5e, 0x00, 0x00, d.byte()});
  }
}

// An IPv4 address: `aim` (the host's, or a client's in 198.18.0.0/15) mostly, else one
// a stack never answers or one the host does not own.
inline std::array<uint8_t, 4> addr4(Draw& d, const std::array<uint8_t, 4>& aim, const std::array<uint8_t, 4>& other) {
  const uint8_t x = d.byte(), y = d.byte();
  switch (d.below(40)) {
    case 0:
      return {255, 255, 255, 255};
    case 1:
      return {static_cast<uint8_t>(224 + (x & 15)), 0, 0, y};  // multicast
    case 2:
      return {127, 0, x, y};  // loopback
    case 3:
      return {0, 0, x, y};  // "this network"
    case 4:
      return {static_cast<uint8_t>(240 + (x & 15)), 1, 2, y};  // class E
    case 5:
      return {169, 254, x, y};  // link-local
    case 6:
      return {198, 19, 0, static_cast<uint8_t>(y | 2)};  // not the host's
    case 7:
      return other;  // the other end's
    default:
      return aim;
  }
}

inline std::array<uint8_t, 16> addr6(Draw& d, const std::array<uint8_t, 16>& aim,
                                     const std::array<uint8_t, 16>& other) {
  std::array<uint8_t, 16> a{};
  const uint8_t x = d.byte();
  switch (d.below(40)) {
    case 0:
      return a;  // unspecified
    case 1:
      a[15] = 1;
      return a;  // loopback
    case 2:
      a[0] = 0xff;
      a[1] = static_cast<uint8_t>(x & 0x1f);
      a[15] = 1;
      return a;  // multicast
    case 3:
      a[10] = a[11] = 0xff;
      a[12] = 198;
      a[13] = 18;
      a[15] = x;
      return a;  // IPv4-mapped
    case 4:
      a[0] = 0xfe;
      a[1] = 0x80;
      a[15] = x;
      return a;  // link-local
    case 5:
      a = aim;
      a[15] = static_cast<uint8_t>(x | 2);
      return a;  // not the host's
    case 6:
      return other;
    default:
      return aim;
  }
}

// A client in 198.18.0.0/15 or 2001:db8::/32, from a few hundred addresses (so that one
// address opens several connections) or any.
inline std::array<uint8_t, 4> client4(Draw& d) {
  const uint32_t n = d.percent(50) ? d.below(256) : d.next();
  return {198, static_cast<uint8_t>(18 + (n >> 16 & 1)), static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n | 1)};
}
inline std::array<uint8_t, 16> client6(Draw& d) {
  const uint32_t n = d.percent(50) ? d.below(256) : d.next();
  return {0x20, 0x01, 0x0d, 0xb8, static_cast<uint8_t>(n >> 24), static_cast<uint8_t>(n >> 16), 0, 0, 0, 0,
          0,    0,    0,    0,    static_cast<uint8_t>(n >> 8),  static_cast<uint8_t>(n | 1)};
}

// One TCP option: a well-formed one (an MSS now and then 0, which a stack ignores), or
// an unknown kind, a bad length (0, 1, past the end), an EOL with bytes after it.
inline std::vector<uint8_t> tcp_option(Draw& d) {
  const uint8_t x = d.byte(), y = d.percent(15) ? 0 : d.byte();
  switch (d.below(9)) {
    case 0:
      return {2, 4, y ? x : uint8_t{0}, y};  // MSS
    case 1:
      return {1, 3, 3, static_cast<uint8_t>(d.below(17))};  // NOP, window scale
    case 2:
      return {4, 2};  // SACK permitted
    case 3:
      return {1, 1, 8, 10, x, y, d.byte(), d.byte(), 0, 0, 0, x};  // timestamps
    case 4:
      return {1};  // NOP
    case 5:
      return {0};  // EOL
    case 6:
      return {x, static_cast<uint8_t>(d.below(3))};  // a length 0 to 2
    case 7:
      return {static_cast<uint8_t>(2 + d.below(7)), static_cast<uint8_t>(d.below(44))};
    default:
      return {2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 0};  // Linux's
  }
}

// A SYN's options: up to 6, at most 40 bytes.
inline std::vector<uint8_t> tcp_options(Draw& d) {
  std::vector<uint8_t> o;
  for (uint32_t i = 0, n = d.below(7); i < n && o.size() < 40; ++i) {
    const std::vector<uint8_t> one = tcp_option(d);
    o.insert(o.end(), one.begin(), one.end());
  }
  if (o.size() > 40) o.resize(40);
  return o;
}

// One IPv6 extension header (type `nh`, followed by `next`), `units` of 8 bytes long
// for the ones that have a length: PadN options, a routing header with no segments
// left (skipped by a stack), a fragment header (offset `frag`, M `more`).
inline void ext6(Frame& f, uint8_t nh, uint8_t next, uint32_t units, uint16_t frag_word) {
  f.push_back(next);
  if (nh == 44) {
    f.push_back(0);
    push16(f, frag_word);
    push32(f, 0x1234);
    return;
  }
  f.push_back(static_cast<uint8_t>(units - 1));
  const size_t body = units * 8 - 2;
  if (nh == 43) {
    f.insert(f.end(), {254, 0});  // an experimental type, segments left 0
    f.insert(f.end(), body - 2, 0);
    return;
  }
  f.push_back(1);  // PadN over the rest
  f.push_back(static_cast<uint8_t>(body - 2));
  f.insert(f.end(), body - 2, 0);
}

// The chain of extension headers before TCP; returns the first next-header value.
inline uint8_t ext_chain(Frame& f, Draw& d) {
  const uint32_t n = d.percent(50) ? 0 : 1 + d.below(9);
  std::vector<uint8_t> types;
  for (uint32_t i = 0; i < n; ++i) {
    static constexpr uint8_t kTypes[] = {60, 60, 43, 44, 0};
    uint8_t t = kTypes[d.below(5)];
    if (t == 0 && i != 0 && !d.percent(10)) t = 60;  // hop-by-hop belongs first (RFC 8200 4.1)
    types.push_back(t);
  }
  if (!types.empty() && d.percent(30)) types[0] = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    const uint8_t next = i + 1 < types.size() ? types[i + 1] : 6;
    uint32_t units = d.percent(70) ? 1 + d.below(3) : 1 + d.below(d.percent(50) ? 40 : 256);
    if (f.size() + units * 8 > kMaxFrame - 500) units = 1;  // what BPF_PROG_TEST_RUN takes
    const uint16_t frag = d.percent(75) ? 0 : static_cast<uint16_t>(d.percent(50) ? 1 : (1 + d.below(100)) << 3);
    ext6(f, types[i], next, units, frag);
  }
  return types.empty() ? 6 : types[0];
}

// The TCP checksum of the segment from `l4` to the frame's end, into it.
inline void fix_tcp(Frame& f, size_t l3, size_t l4, bool v6) {
  uint32_t pseudo = 6 + static_cast<uint32_t>(f.size() - l4);
  for (size_t i = v6 ? l3 + 8 : l3 + 12; i < l3 + (v6 ? 40 : 20); i += 2)
    pseudo += static_cast<uint32_t>(f[i] << 8 | f[i + 1]);
  put16(f, l4 + 16, 0);
  put16(f, l4 + 16, checksum(&f[l4], f.size() - l4, pseudo));
}

}  // namespace gen

// A proper SYN as Linux sends it (MSS 1460, SACK permitted, timestamps, NOP, window
// scale 7) from client `n` of 198.18.0.0/15 or 2001:db8::/32, port `sport`, to the
// host's listener.
inline Frame linux_syn(const SynWorld& w, bool v6, uint32_t n, uint16_t sport, uint32_t seq) {
  using namespace gen;
  Frame f{0x02, 0x00, 0x5e, 0x00, 0x00, 0x02, 0x02, 0x00, 0x5e, 0x00, 0x00, 0x01};
  push16(f, v6 ? 0x86dd : 0x0800);
  constexpr size_t l3 = 14, tcp_len = 40;
  if (v6) {
    f.insert(f.end(), {0x60,
                       0,
                       0,
                       0,
                       0,
                       tcp_len,
                       6,
                       64,
                       0x20,
                       0x01,
                       0x0d,
                       0xb8,
                       static_cast<uint8_t>(n >> 24),
                       static_cast<uint8_t>(n >> 16),
                       0,
                       0,
                       0,
                       0,
                       0,
                       0,
                       0,
                       0,
                       static_cast<uint8_t>(n >> 8),
                       static_cast<uint8_t>(n | 1)});
    f.insert(f.end(), w.local6.begin(), w.local6.end());
  } else {
    f.insert(f.end(), {0x45, 0, 0, 20 + tcp_len, 0, 1, 0x40, 0, 64, 6, 0, 0, 198, 18, static_cast<uint8_t>(n >> 8),
                       static_cast<uint8_t>(n | 1)});
    f.insert(f.end(), w.local4.begin(), w.local4.end());
    put16(f, l3 + 10, checksum(&f[l3], 20));
  }
  const size_t l4 = f.size();
  push16(f, sport);
  push16(f, w.listen_port);
  push32(f, seq);
  push32(f, 0);
  f.insert(f.end(), {(tcp_len / 4) << 4, 0x02, 0xfa, 0xf0, 0, 0, 0, 0});
  f.insert(f.end(), {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 0, 1, 3, 3, 7});
  fix_tcp(f, l3, l4, v6);
  return f;
}

namespace gen {

// The IPv6 header (its payload length left 0) and a chain of extension headers.
inline void ip6_header(Frame& f, Draw& d, const SynWorld& w) {
  const size_t l3 = f.size();
  const std::array<uint8_t, 16> client = client6(d);
  const std::array<uint8_t, 16> src = addr6(d, client, w.local6), dst = addr6(d, w.local6, src);
  push32(f, 0x60000000);
  push16(f, 0);
  f.push_back(0);
  f.push_back(64);
  f.insert(f.end(), src.begin(), src.end());
  f.insert(f.end(), dst.begin(), dst.end());
  f[l3 + 6] = ext_chain(f, d);
}

// The IPv4 header (its total length and checksum left 0): IHL 5 to 15 (NOP options) or
// under 5, DF, or a fragment (MF, an offset).
inline void ip4_header(Frame& f, Draw& d, const SynWorld& w) {
  const std::array<uint8_t, 4> client = client4(d);
  const std::array<uint8_t, 4> src = addr4(d, client, w.local4), dst = addr4(d, w.local4, src);
  const uint32_t ihl = d.percent(80) ? 5 : d.percent(95) ? 5 + d.below(11) : d.below(5);
  f.push_back(static_cast<uint8_t>(0x40 | ihl));
  f.push_back(0);
  push16(f, 0);
  push16(f, static_cast<uint16_t>(d.next()));
  push16(f, d.percent(90) ? 0x4000 : d.percent(50) ? 0x2000 : static_cast<uint16_t>(d.below(0x2000) | 1));
  f.push_back(64);
  f.push_back(6);
  push16(f, 0);
  f.insert(f.end(), src.begin(), src.end());
  f.insert(f.end(), dst.begin(), dst.end());
  for (uint32_t i = 5; i < ihl; ++i) f.insert(f.end(), {1, 1, 1, static_cast<uint8_t>(i + 1 < ihl ? 1 : 0)});
}

// The TCP header (its checksum left 0), its options, and now and then data: any flag
// byte, NS, any data offset.
inline void tcp_header(Frame& f, Draw& d, const SynWorld& w) {
  const size_t l4 = f.size();
  const uint16_t ports[] = {w.listen_port, w.listen_port, w.listen_port, w.closed_port, w.other_port};
  push16(f, static_cast<uint16_t>(1024 + d.below(64000)));
  push16(f, ports[d.below(5)]);
  push32(f, d.next());
  push32(f, d.percent(70) ? 0 : d.next());
  const std::vector<uint8_t> opts = tcp_options(d);
  const uint32_t proper = static_cast<uint32_t>(5 + (opts.size() + 3) / 4);
  const uint32_t doff = d.percent(75) ? proper : d.below(16);
  f.push_back(static_cast<uint8_t>(doff << 4 | (d.percent(10) ? 1 : 0)));  // NS
  const uint32_t flag_pick = d.below(100);
  f.push_back(flag_pick < 50 ? 0x02 : flag_pick < 55 ? 0xc2 : d.byte());  // SYN, SYN with ECE and CWR, any
  push16(f, static_cast<uint16_t>(d.next()));
  push16(f, 0);
  push16(f, d.percent(90) ? 0 : static_cast<uint16_t>(d.next()));
  f.insert(f.end(), opts.begin(), opts.end());
  f.resize(l4 + 20 + (opts.size() + 3) / 4 * 4, 0);
  if (d.percent(8)) f.insert(f.end(), 1 + d.below(300), 0x5a);  // data: TCP Fast Open
}

// The IP length: the datagram's end mostly the frame's; sometimes shorter (Ethernet
// padding after it) or claiming more than the frame holds. Returns that end.
inline size_t ip_length(Frame& f, Draw& d, size_t l3, bool v6) {
  size_t ip_end = f.size();
  if (d.percent(6)) f.insert(f.end(), 1 + d.below(40), 0);
  if (d.percent(4)) ip_end = l3 + d.below(static_cast<uint32_t>(f.size() - l3 + 24));
  if (v6)
    put16(f, l3 + 4, static_cast<uint16_t>(ip_end > l3 + 40 ? ip_end - l3 - 40 : 0));
  else
    put16(f, l3 + 2, static_cast<uint16_t>(ip_end - l3));
  return ip_end;
}

// Checksums: right, wrong, or (TCP) the pseudo-header's sum alone, as a local stack
// leaves it to the device.
inline void checksums(Frame& f, Draw& d, size_t l3, size_t l4, size_t ip_end, bool v6) {
  const size_t seg = ip_end > l4 && ip_end <= f.size() ? ip_end - l4 : 0;
  uint32_t pseudo = 6 + static_cast<uint32_t>(seg);
  for (size_t i = v6 ? l3 + 8 : l3 + 12; i < l3 + (v6 ? 40 : 20); i += 2)
    pseudo += static_cast<uint32_t>(f[i] << 8 | f[i + 1]);
  const uint32_t how = d.below(100);
  if (seg >= 20)
    put16(f, l4 + 16,
          how < 88   ? checksum(&f[l4], seg, pseudo)
          : how < 94 ? static_cast<uint16_t>(d.next())
                     : static_cast<uint16_t>(~checksum(nullptr, 0, pseudo)));
  if (v6) return;
  const size_t ihl = (f[l3] & 15) * size_t{4};
  if (ihl <= f.size() - l3) put16(f, l3 + 10, checksum(&f[l3], ihl));
  if (d.percent(4)) f[l3 + 10] ^= static_cast<uint8_t>(1 + d.below(255));
}

}  // namespace gen

// A hostile frame for the SYN path of a host in `w`.
inline Frame hostile_syn(Draw& d, const SynWorld& w) {
  using namespace gen;
  Frame f;
  mac(f, d, 0x02);
  mac(f, d, 0x01);
  const uint32_t tags = d.percent(80) ? 0 : d.percent(60) ? 1 : d.percent(90) ? 2 : 3;
  for (uint32_t i = 0; i < tags; ++i) {
    push16(f, i + 1 < tags ? 0x88a8 : 0x8100);
    push16(f, static_cast<uint16_t>(1 + d.below(4094)));
  }
  const bool v6 = d.percent(50);
  push16(f, v6 ? 0x86dd : 0x0800);
  const size_t l3 = f.size();
  if (v6)
    ip6_header(f, d, w);
  else
    ip4_header(f, d, w);
  const size_t l4 = f.size();
  tcp_header(f, d, w);
  checksums(f, d, l3, l4, ip_length(f, d, l3, v6), v6);
  if (d.percent(4)) f.resize(f.size() - d.below(static_cast<uint32_t>(f.size() - 13)));  // cut anywhere
  return f;
}

}  // namespace levee::model
