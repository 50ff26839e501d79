#include "policy/cidr.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/quote.hpp"

namespace levee {

std::array<uint8_t, 16> mask_prefix(const std::array<uint8_t, 16>& a, unsigned len) {
  std::array<uint8_t, 16> out{};
  for (unsigned i = 0; i < 16; ++i) {
    unsigned bits = len > 8 * i ? std::min(8u, len - 8 * i) : 0;
    out[i] = static_cast<uint8_t>(a[i] & (bits ? 0xff << (8 - bits) : 0));
  }
  return out;
}

namespace {

// ::ffff:a.b.c.d/p (p >= 96) is the IPv4 network a.b.c.d/(p - 96): the datapath sees
// those sources as IPv4 packets, which an IPv6 entry would never match. Parsing is the
// one place every entry, address and network passes through.
void unmap_ipv4(Cidr& c) {
  static constexpr std::array<uint8_t, 12> kMapped{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (c.len < 96 || !std::equal(kMapped.begin(), kMapped.end(), c.addr.begin())) return;
  std::array<uint8_t, 16> v4{};
  std::copy(c.addr.begin() + 12, c.addr.end(), v4.begin());
  c.family = 4;
  c.addr = v4;
  c.len -= 96;
}

}  // namespace

Result<Cidr> Cidr::parse(std::string_view text) {
  // inet_pton reads a C string: what follows a NUL would be dropped unread.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    return usage_error(fmt::format("'{}' is followed by a NUL byte", text.substr(0, nul)),
                       "write e.g. 198.51.100.0/24 or 2001:db8::/32");
  std::string s(text);
  Cidr c;
  std::string addr = s;
  std::optional<unsigned> len;
  if (auto slash = s.find('/'); slash != std::string::npos) {
    addr = s.substr(0, slash);
    std::string l = s.substr(slash + 1);
    if (l.empty() || l.size() > 3 || !std::all_of(l.begin(), l.end(), ::isdigit))
      return usage_error(fmt::format("{} is not a CIDR", quote_value(s)), "write ADDRESS/LENGTH, e.g. 198.51.100.0/24");
    len = static_cast<unsigned>(std::stoul(l));
  }
  if (inet_pton(AF_INET, addr.c_str(), c.addr.data()) == 1) {
    c.family = 4;
    c.len = len.value_or(32);
    if (c.len > 32) return usage_error(fmt::format("{}: an IPv4 prefix is at most /32", quote_value(s)));
  } else if (inet_pton(AF_INET6, addr.c_str(), c.addr.data()) == 1) {
    c.family = 6;
    c.len = len.value_or(128);
    if (c.len > 128) return usage_error(fmt::format("{}: an IPv6 prefix is at most /128", quote_value(s)));
    unmap_ipv4(c);
  } else {
    return usage_error(fmt::format("{} is not an IPv4 or IPv6 address", quote_value(s)),
                       "write e.g. 198.51.100.0/24 or 2001:db8::/32");
  }
  if (mask_prefix(c.addr, c.len) != c.addr) {
    Cidr fixed = c;
    fixed.addr = mask_prefix(c.addr, c.len);
    return usage_error(fmt::format("{} has host bits set", quote_value(s)),
                       fmt::format("did you mean {}?", fixed.to_string()));
  }
  return c;
}

std::string Cidr::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(family == 4 ? AF_INET : AF_INET6, addr.data(), buf, sizeof buf);
  return fmt::format("{}/{}", buf, len);
}

bool Cidr::contains(const Cidr& o) const {
  return family == o.family && len <= o.len && mask_prefix(o.addr, len) == addr;
}

}  // namespace levee
