#include "spec.hpp"

#include <arpa/inet.h>

#include <cstring>
#include <stdexcept>

namespace levee::flood {
namespace {

uint16_t get16(const std::vector<uint8_t>& b, size_t off) { return static_cast<uint16_t>(b[off] << 8 | b[off + 1]); }

// One's complement partial sum of 32-bit network-order words, host-order result.
uint32_t sum_words(uint32_t sum, const std::array<uint32_t, 4>& w, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t h = ntohl(w[i]);
    sum += (h >> 16) + (h & 0xffff);
  }
  return sum;
}

uint32_t fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return sum;
}

uint16_t finish(uint32_t sum) { return static_cast<uint16_t>(~fold(sum)); }

// ~csum + sum of ~w for each 16-bit word of the template source (RFC 1624, eqn. 3).
uint32_t csum_base(uint16_t csum, const std::array<uint32_t, 4>& src, size_t n) {
  uint32_t sum = static_cast<uint16_t>(~csum);
  for (size_t i = 0; i < n; ++i) {
    uint32_t h = ntohl(src[i]);
    sum += static_cast<uint16_t>(~(h >> 16)) + static_cast<uint16_t>(~h);
  }
  return fold(sum);
}

}  // namespace

size_t min_frame_size(bool v6, Proto proto, bool vlan) {
  size_t n = 14 + (vlan ? 4 : 0) + (v6 ? 40 : 20) + (proto == Proto::Syn ? 20 : 8);
  return n < 60 ? 60 : n;
}

FloodSpec build_spec(const FrameRequest& req) {
  pkt::Frame f;
  f.eth(req.dst_mac, req.src_mac);
  if (req.vlan >= 0) f.vlan(static_cast<uint16_t>(req.vlan));
  if (req.v6)
    f.ipv6(req.src, req.dst);
  else
    f.ipv4(req.src, req.dst);
  switch (req.proto) {
    case Proto::Udp:
      f.udp(req.sport, req.dport);
      break;
    case Proto::Syn:
      f.tcp(req.sport, req.dport, pkt::kTcpSyn);
      break;
    case Proto::Icmp:
      if (req.v6)
        f.icmp6_echo(0x4c76, 1);
      else
        f.icmp_echo(0x4c76, 1);
      break;
  }
  size_t hdr = f.bytes().size();
  size_t want = req.size ? req.size : 0;
  if (want < 60) want = 60;
  // A SYN carries no data: it reaches the size with Ethernet padding, like a real one.
  if (req.proto != Proto::Syn && want > hdr) f.payload(want - hdr, 0);
  f.pad_to(want);

  FloodSpec s;
  s.frame = f.bytes();
  s.hdr_len = hdr;
  s.v6 = req.v6;
  size_t l3 = f.layer(req.v6 ? pkt::Layer::Ipv6 : pkt::Layer::Ipv4);
  s.src_off = l3 + (req.v6 ? 8 : 12);
  std::memcpy(s.base.data(), &s.frame[s.src_off], req.v6 ? 16 : 4);
  size_t nw = req.v6 ? 4 : 1;
  if (!req.v6) {
    s.ip_csum_off = l3 + 10;
    s.ip_csum_base = csum_base(get16(s.frame, s.ip_csum_off), s.base, nw);
  }
  switch (req.proto) {
    case Proto::Udp:
      s.l4_csum_off = f.layer(pkt::Layer::Udp) + 6;
      s.l4_udp = true;
      break;
    case Proto::Syn:
      s.l4_csum_off = f.layer(pkt::Layer::Tcp) + 16;
      break;
    case Proto::Icmp:
      if (req.v6) s.l4_csum_off = f.layer(pkt::Layer::Icmp6) + 2;
      break;  // the ICMPv4 checksum does not cover the IP header
  }
  if (s.l4_csum_off) s.l4_csum_base = csum_base(get16(s.frame, s.l4_csum_off), s.base, nw);
  return s;
}

void parse_prefix(const std::string& s, bool& v6, std::array<uint32_t, 4>& base, std::array<uint32_t, 4>& mask) {
  auto slash = s.find('/');
  if (slash == std::string::npos) throw std::invalid_argument("not a prefix (ADDR/LEN): " + s);
  std::string addr = s.substr(0, slash), lens = s.substr(slash + 1);
  v6 = addr.find(':') != std::string::npos;
  int maxlen = v6 ? 128 : 32;
  size_t used = 0;
  int len = -1;
  try {
    len = std::stoi(lens, &used);
  } catch (const std::exception&) {
  }
  if (len < 0 || len > maxlen || used != lens.size() || lens.empty())
    throw std::invalid_argument("bad prefix length in " + s);
  base.fill(0);
  mask.fill(0);
  if (inet_pton(v6 ? AF_INET6 : AF_INET, addr.c_str(), base.data()) != 1)
    throw std::invalid_argument("bad address in prefix " + s);
  int words = v6 ? 4 : 1;
  for (int i = 0; i < words; ++i) {
    int fixed = len - 32 * i;  // network bits in this word
    uint32_t host;
    if (fixed <= 0)
      host = 0xffffffffu;
    else if (fixed >= 32)
      host = 0;
    else
      host = 0xffffffffu >> fixed;
    mask[i] = htonl(host);
    base[i] &= ~mask[i];
  }
}

std::string format_addr(bool v6, const std::array<uint32_t, 4>& words) {
  char b[INET6_ADDRSTRLEN];
  inet_ntop(v6 ? AF_INET6 : AF_INET, words.data(), b, sizeof b);
  return b;
}

SourceGen::SourceGen(const FloodSpec& spec, uint64_t seed) : spec_(spec), rng_(seed | 1) {}

uint32_t SourceGen::rand32() {  // xorshift64*
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return static_cast<uint32_t>((rng_ * 0x2545F4914F6CDD1DULL) >> 32);
}

void SourceGen::next(std::array<uint32_t, 4>& out) {
  out = spec_.base;
  size_t nw = spec_.v6 ? 4 : 1;
  switch (spec_.mode) {
    case SrcMode::Fixed:
      break;
    case SrcMode::RoundRobin: {
      uint32_t i = idx_;
      idx_ = i + 1 >= spec_.rr_count ? 0 : i + 1;
      out[nw - 1] = htonl(ntohl(spec_.base[nw - 1]) + i);
      break;
    }
    case SrcMode::Random:
      for (size_t i = 0; i < nw; ++i)
        if (spec_.mask[i]) out[i] = (spec_.base[i] & ~spec_.mask[i]) | (rand32() & spec_.mask[i]);
      break;
  }
}

void rewrite_source(const FloodSpec& spec, uint8_t* frame, const std::array<uint32_t, 4>& addr) {
  size_t nw = spec.v6 ? 4 : 1;
  std::memcpy(frame + spec.src_off, addr.data(), nw * 4);
  auto put = [&](size_t off, uint16_t v) {
    frame[off] = static_cast<uint8_t>(v >> 8);
    frame[off + 1] = static_cast<uint8_t>(v);
  };
  if (spec.ip_csum_off) put(spec.ip_csum_off, finish(sum_words(spec.ip_csum_base, addr, 1)));
  if (spec.l4_csum_off) {
    uint16_t c = finish(sum_words(spec.l4_csum_base, addr, nw));
    if (spec.l4_udp && c == 0) c = 0xffff;
    put(spec.l4_csum_off, c);
  }
}

}  // namespace levee::flood
