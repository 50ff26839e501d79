// frame.cpp - the frame levee-flood sends, from the options and the interface (frame.hpp).
#include "frame.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>

#include <exception>
#include <optional>
#include <string>

namespace levee::flood {
namespace {

// The first address of `dev` in the family `v6` says (IPv6: not a link-local one).
std::optional<std::string> first_address(const std::string& dev, bool v6) {
  ifaddrs* ifa = nullptr;
  if (getifaddrs(&ifa) != 0) return std::nullopt;
  std::optional<std::string> out;
  for (ifaddrs* p = ifa; p && !out; p = p->ifa_next) {
    if (!p->ifa_addr || dev != p->ifa_name) continue;
    char b[INET6_ADDRSTRLEN];
    if (!v6 && p->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(p->ifa_addr)->sin_addr, b, sizeof b);
      out = b;
    } else if (v6 && p->ifa_addr->sa_family == AF_INET6) {
      auto* a = &reinterpret_cast<sockaddr_in6*>(p->ifa_addr)->sin6_addr;
      if (IN6_IS_ADDR_LINKLOCAL(a)) continue;
      inet_ntop(AF_INET6, a, b, sizeof b);
      out = b;
    }
  }
  freeifaddrs(ifa);
  return out;
}

pkt::Mac dst_mac_of(const Options& o, const Device& dev) {
  if (!o.dst_mac.empty()) {
    try {
      return parse_mac(o.dst_mac);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--dst-mac: ") + e.what());
    }
  }
  if (dev.peer && dev.peer->mac) return *dev.peer->mac;
  note(o, "the peer's MAC is unknown: sending to ff:ff:ff:ff:ff:ff");
  return {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
}

// The template's source: the random prefix's base, the round robin's first, --src, or
// the first address of --dev.
std::string source_of(const Options& o, bool v6, const Sources& src) {
  if (src.mode == SrcMode::Random) return format_addr(v6, src.rbase);
  std::string s = !o.src_base.empty() ? o.src_base : o.src;
  if (s.empty()) {
    auto a = first_address(o.dev, v6);
    if (!a) throw UsageError("give a source: --src, --sources with --src-base, or --random");
    s = *a;
  }
  return s;
}

}  // namespace

FrameRequest frame_request(const Options& o, const Device& dev, Proto proto, size_t size, const Sources& src) {
  FrameRequest req;
  req.v6 = is_v6(o.dst);
  req.dst = o.dst;
  req.proto = proto;
  req.sport = o.sport;
  req.dport = o.dport;
  req.vlan = o.vlan;
  req.size = size;
  req.src_mac = dev.link.mac.value_or(pkt::kSrcMac);
  req.dst_mac = dst_mac_of(o, dev);
  req.src = source_of(o, req.v6, src);
  return req;
}

FloodSpec make_spec(const Options& o, const FrameRequest& req, const Sources& src) {
  FloodSpec spec = build_spec(req);
  spec.mode = src.mode;
  spec.rr_count = o.sources;
  if (src.mode == SrcMode::Random) spec.mask = src.rmask;
  if (src.mode == SrcMode::RoundRobin) {
    uint32_t last = ntohl(spec.base[req.v6 ? 3 : 0]);
    if (static_cast<uint64_t>(last) + o.sources - 1 > 0xffffffffULL)
      throw UsageError("--src-base + --sources runs past the end of the address space" +
                       std::string(req.v6 ? " (the last 32 bits)" : ""));
  }
  note(o, "frame: " + std::to_string(spec.frame.size()) + " bytes, " + format_mac(req.src_mac) + " -> " +
              format_mac(req.dst_mac) + ", " + req.src + " -> " + o.dst);
  return spec;
}

}  // namespace levee::flood
