#include "cli/blocklist.hpp"

#include "core/quote.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <set>

#include "core/input_file.hpp"
#include "export/render_units.hpp"
#include "policy/config.hpp"

namespace levee::cli {
namespace {

constexpr std::string_view kSpace = " \t\r\v\f";

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

}  // namespace

Blocklist parse_blocklist(std::string_view text, size_t max_entries) {
  Blocklist out;
  std::set<CidrKey> seen;
  std::array<size_t, 2> per_family{};  // IPv4, IPv6
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  unsigned line = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (l.size() > kMaxBlocklistLineBytes) {
      out.stopped_at = line;
      return out;
    }
    l = trim(l.substr(0, l.find_first_of("#;")));
    if (l.empty()) continue;
    auto reject = [&](std::string why) {
      ++out.rejected_lines;
      if (out.rejected.size() >= kRejectedKept) return;
      std::string shown(l.substr(0, 60));
      if (l.size() > 60) shown += "...";
      out.rejected.push_back({line, std::move(shown), std::move(why)});
    };
    if (l.find_first_of(kSpace) != std::string_view::npos) {
      reject(fmt::format("{} is more than one field; give one CIDR per line", quote_value(l)));
      continue;
    }
    auto c = Cidr::parse(l);
    if (!c) {
      // The general hint (what a CIDR looks like) would repeat on every line; a
      // correction is worth keeping.
      const Error& e = c.error();
      reject(e.hint.rfind("did you mean", 0) == 0 ? e.message() : e.what);
      continue;
    }
    if (c->len == 0) {
      reject(fmt::format("{} covers every address; deny it with levee deny add if you mean it", quote_value(l)));
      continue;
    }
    if (!seen.insert(key_of(*c)).second) {
      ++out.repeated;
      continue;
    }
    if (++per_family[c->family == 6] > max_entries) {
      out.stopped_at = line;
      out.full = true;
      return out;
    }
    out.entries.push_back(*c);
  }
  return out;
}

Result<std::string> read_blocklist(const std::string& path, std::chrono::milliseconds pipe_wait) {
  const InputRules rules{.what = "the blocklist",
                         .max_bytes = kMaxInputFileBytes,
                         .hint = "give a file with one CIDR or address per line, or - to read standard input",
                         .too_large_hint = "split it into smaller files and import each",
                         .pipes = true,
                         .usage = false,
                         .pipe_wait = pipe_wait};
  auto f = path == "-" ? read_input_fd(STDIN_FILENO, "standard input", rules) : read_input(path, rules);
  if (!f) return f.error();
  return std::move(f->text);
}

Status check_blocklist_limits(const Blocklist& b, const std::string& path) {
  if (!b.stopped_at) return {};
  if (b.full)
    return usage_error(fmt::format("{}:{}: more than {} entries of one family, the capacity of a list; nothing was "
                                   "added",
                                   path, b.stopped_at, group_digits(kMaxBlocklistEntries)),
                       "split the file, or merge its addresses into networks");
  return usage_error(
      fmt::format("{}:{}: a line longer than {} bytes; nothing was added", path, b.stopped_at, kMaxBlocklistLineBytes),
      "a blocklist has one CIDR or address per line: fix or remove that line");
}

}  // namespace levee::cli
