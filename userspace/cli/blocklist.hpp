// blocklist.hpp - blocklist files as `levee deny import` reads them, before anything
// touches the kernel. Pure functions, tested without root.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "policy/cidr.hpp"

namespace levee::cli {

// A line of a blocklist file that is not a network.
struct RejectedLine {
  unsigned line = 0;  // 1-based
  std::string text;   // as written (trimmed, comment removed, long lines cut short)
  std::string why;
};

struct Blocklist {
  std::vector<Cidr> entries;  // each network once, in file order
  size_t repeated = 0;        // valid lines naming a network an earlier line named
  std::vector<RejectedLine> rejected;
};

// A blocklist in the ipset/netset style: one CIDR or address per line; '#' and ';'
// start a comment, at the start of a line or after an entry; blank lines, leading
// and trailing whitespace, CRLF line ends and a UTF-8 byte order mark are fine. A line
// with anything else (two fields, host bits set, a range, /0) is rejected with the
// reason.
Blocklist parse_blocklist(std::string_view text);

// Networks as map keys: family, length, address.
using CidrKey = std::tuple<uint8_t, unsigned, std::array<uint8_t, 16>>;
inline CidrKey key_of(const Cidr& c) { return {c.family, c.len, c.addr}; }

}  // namespace levee::cli
