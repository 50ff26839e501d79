// lists.hpp - what the list commands read before they touch the kernel: blocklist
// files and expiry times. Pure functions, tested without root.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "policy/policy.hpp"

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

// --expires: a duration from now ("90s", "30m", "2h", "1d12h", "1w") or an RFC 3339
// time ("2026-12-01T00:00:00Z", "2026-12-01T02:00:00+02:00"). Returns the wall-clock
// time in ns since the epoch; a time not after now_unix_ns is a usage error.
Result<uint64_t> parse_expiry(std::string_view text, uint64_t now_unix_ns);

}  // namespace levee::cli
