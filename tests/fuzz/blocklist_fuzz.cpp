// blocklist_fuzz.cpp - blocklist files as `levee deny import` reads them
// (cli/blocklist: parse_blocklist, which the command calls on the file's bytes).
//
// Properties: every line that is neither blank nor a comment is counted once, as an
// entry, a repeat or a rejection; entries are distinct, never /0, in file order; the
// rejections carry their line numbers in order and a reason, and show at most a short
// excerpt of the line; the entries written back one per line read as the same entries
// with nothing rejected.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "cli/blocklist.hpp"
#include "fuzz.hpp"

namespace levee::cli {
namespace {

using fuzz::escaped;

constexpr std::string_view kSpace = " \t\r\v\f";

// Lines that hold something other than blanks and a comment, and all lines.
std::pair<size_t, unsigned> count_lines(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  size_t meaningful = 0;
  unsigned lines = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    pos = end + 1;
    ++lines;
    l = l.substr(0, l.find_first_of("#;"));
    if (l.find_first_not_of(kSpace) != std::string_view::npos) ++meaningful;
  }
  return {meaningful, lines};
}

void check(std::string_view text) {
  const Blocklist b = parse_blocklist(text);
  const auto [meaningful, lines] = count_lines(text);
  LV_PROPERTY(b.entries.size() + b.repeated + b.rejected.size() == meaningful,
              "{} lines with content, but {} entries, {} repeats and {} rejected in {}", meaningful, b.entries.size(),
              b.repeated, b.rejected.size(), escaped(text.substr(0, 200)));

  std::set<CidrKey> keys;
  for (const Cidr& c : b.entries) {
    LV_PROPERTY(c.len > 0, "a /0 entry {} accepted", c.to_string());
    LV_PROPERTY(keys.insert(key_of(c)).second, "{} listed twice", c.to_string());
  }
  unsigned last = 0;
  for (const RejectedLine& r : b.rejected) {
    LV_PROPERTY(r.line > last && r.line <= lines, "rejected line {} after line {}, of {}", r.line, last, lines);
    LV_PROPERTY(!r.why.empty(), "line {} rejected without a reason", r.line);
    LV_PROPERTY(r.text.size() <= 63, "line {} shown with {} bytes", r.line, r.text.size());
    last = r.line;
  }

  std::string written;
  for (const Cidr& c : b.entries) written += c.to_string() + "\n";
  const Blocklist again = parse_blocklist(written);
  LV_PROPERTY(again.rejected.empty() && again.repeated == 0 && again.entries == b.entries,
              "the entries of {} written back read as {} entries, {} rejected ({})", escaped(text.substr(0, 200)),
              again.entries.size(), again.rejected.size(), again.rejected.empty() ? "" : again.rejected[0].why);
}

}  // namespace
}  // namespace levee::cli

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  levee::cli::check(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
