// cidr.hpp - networks as operators write them: "198.51.100.0/24", "2001:db8::/32", or a
// bare address (a /32 or /128).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include "core/result.hpp"

namespace levee {

struct Cidr {
  uint8_t family = 0;              // 4 or 6
  std::array<uint8_t, 16> addr{};  // network order; IPv4 in the first 4 bytes
  unsigned len = 0;

  // Refuses host bits set ("did you mean ...?"), lengths past the family's, and anything
  // that is not an address. An IPv4-mapped IPv6 network (::ffff:198.51.100.0/120) is
  // the IPv4 network it maps (198.51.100.0/24).
  static Result<Cidr> parse(std::string_view text);
  std::string to_string() const;
  bool contains(const Cidr& o) const;  // o is within this prefix
  bool operator==(const Cidr&) const = default;
};

// An order of networks for maps and sets (by family, length, address): not containment.
struct CidrLess {
  bool operator()(const Cidr& a, const Cidr& b) const {
    return std::tie(a.family, a.len, a.addr) < std::tie(b.family, b.len, b.addr);
  }
};

// The first `len` bits of `a`, the rest zero.
std::array<uint8_t, 16> mask_prefix(const std::array<uint8_t, 16>& a, unsigned len);

}  // namespace levee
