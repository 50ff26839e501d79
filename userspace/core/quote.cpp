#include "core/quote.hpp"

#include <fmt/format.h>

namespace levee {

namespace {

// At most `max` bytes of the text, cut back to the start of a UTF-8 character (never
// half of one), control characters as \xNN, then `close`; with the text's size when cut.
std::string shown(std::string_view text, size_t max, std::string_view close) {
  size_t cut = text.size();
  if (cut > max) {
    cut = max;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  }
  std::string out;
  for (char c : text.substr(0, cut)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  if (cut < text.size()) return fmt::format("{}…{} ({} bytes)", out, close, text.size());
  return out.append(close);
}

}  // namespace

std::string quote_value(std::string_view value) { return "'" + shown(value, kQuotedMax, "'"); }

std::string clipped(std::string_view text) { return shown(text, kClippedMax, ""); }

}  // namespace levee
