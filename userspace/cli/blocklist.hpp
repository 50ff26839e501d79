// blocklist.hpp - blocklist files as `levee deny import` reads them, before anything
// touches the kernel. Pure functions, tested without root.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/result.hpp"
#include "levee_abi.h"
#include "policy/cidr.hpp"

namespace levee::cli {

// A line of a blocklist file that is not a network.
struct RejectedLine {
  unsigned line = 0;  // 1-based
  std::string text;   // as written (trimmed, comment removed, long lines cut short)
  std::string why;
};

// Limits of a blocklist file, past which `levee deny import` refuses the whole file
// (besides kMaxInputFileBytes, policy/config.hpp): a line is one CIDR and a comment, and
// a family's entries must fit in its list.
inline constexpr size_t kMaxBlocklistLineBytes = 4096;
inline constexpr size_t kMaxBlocklistEntries = LV_MAX_LIST_ENTRIES;  // per family
// Rejected lines kept with their reason; past these they are only counted.
inline constexpr size_t kRejectedKept = 1000;

struct Blocklist {
  std::vector<Cidr> entries;           // each network once, in file order
  size_t repeated = 0;                 // valid lines naming a network an earlier line named
  std::vector<RejectedLine> rejected;  // the first kRejectedKept
  size_t rejected_lines = 0;           // all of them
  // Parsing stopped at this line (1-based; 0: it did not): longer than
  // kMaxBlocklistLineBytes, or one entry too many for a family's list (`full`).
  unsigned stopped_at = 0;
  bool full = false;
};

// A blocklist in the ipset/netset style: one CIDR or address per line; '#' and ';'
// start a comment, at the start of a line or after an entry; blank lines, leading
// and trailing whitespace, CRLF line ends and a UTF-8 byte order mark are fine. A line
// with anything else (two fields, host bits set, a range, /0) is rejected with the
// reason. Parsing stops past `max_entries` entries of one family (`full`).
Blocklist parse_blocklist(std::string_view text, size_t max_entries = kMaxBlocklistEntries);

// A pipe feeding `deny import` (`-`, standard input, or a FIFO) must send something within
// this, each time: a FIFO nobody writes, or a writer that stalls, ends the import with
// an error instead of holding it forever.
inline constexpr std::chrono::milliseconds kBlocklistPipeWait{30'000};

// The text of a blocklist file, at most kMaxInputFileBytes of it (core/input_file.hpp):
// a regular file, a pipe or a FIFO, or standard input for `-`; a directory, a device
// (/dev/zero) or a socket is refused, as is a larger file or a pipe silent for
// `pipe_wait`, with one line saying so.
Result<std::string> read_blocklist(const std::string& path, std::chrono::milliseconds pipe_wait = kBlocklistPipeWait);

// A blocklist the import refuses whole (parsing stopped), with the file's name.
Status check_blocklist_limits(const Blocklist& b, const std::string& path);

// Networks as map keys: family, length, address.
using CidrKey = std::tuple<uint8_t, unsigned, std::array<uint8_t, 16>>;
inline CidrKey key_of(const Cidr& c) { return {c.family, c.len, c.addr}; }

}  // namespace levee::cli
