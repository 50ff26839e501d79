#include "cli/blocklist.hpp"

#include "core/quote.hpp"

#include <fmt/format.h>

#include <set>

namespace levee::cli {
namespace {

constexpr std::string_view kSpace = " \t\r\v\f";

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

}  // namespace

Blocklist parse_blocklist(std::string_view text) {
  Blocklist out;
  std::set<CidrKey> seen;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  unsigned line = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    l = trim(l.substr(0, l.find_first_of("#;")));
    if (l.empty()) continue;
    auto reject = [&](std::string why) {
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
    if (seen.insert(key_of(*c)).second)
      out.entries.push_back(*c);
    else
      ++out.repeated;
  }
  return out;
}

}  // namespace levee::cli
