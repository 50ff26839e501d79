// cidr_fuzz.cpp - networks and addresses as the command line, the config file and
// blocklists give them (policy/cidr: Cidr::parse).
//
// Properties: what is accepted is spelled with address characters only (nothing after
// them ignored), is a prefix of its family's length with no host bits, and its text
// reads back as the same network; a "did you mean" correction is itself accepted.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz.hpp"
#include "policy/cidr.hpp"

namespace levee {
namespace {

using fuzz::escaped;

bool address_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '.' || c == ':' || c == '/';
}

void check_accepted(std::string_view text, const Cidr& c) {
  for (char ch : text)
    LV_PROPERTY(address_char(ch), "Cidr::parse({}) accepted {}, with a byte that is no part of an address",
                escaped(text), c.to_string());
  const unsigned max_len = c.family == 4 ? 32 : 128;
  LV_PROPERTY((c.family == 4 || c.family == 6) && c.len <= max_len, "Cidr::parse({}): family {}, /{}", escaped(text),
              c.family, c.len);
  LV_PROPERTY(mask_prefix(c.addr, c.len) == c.addr, "Cidr::parse({}) = {} has host bits set", escaped(text),
              c.to_string());
  if (c.family == 4)
    for (size_t i = 4; i < c.addr.size(); ++i)
      LV_PROPERTY(c.addr[i] == 0, "Cidr::parse({}): an IPv4 network with bytes past the fourth", escaped(text));
  const std::string shown = c.to_string();
  const auto back = Cidr::parse(shown);
  LV_PROPERTY(back.ok() && back.value() == c, "Cidr::parse({}) = {}, which reads back {}", escaped(text), shown,
              back.ok() ? back.value().to_string() : back.error().message());
  LV_PROPERTY(c.contains(c), "{} does not contain itself", shown);
  if (c.len > 0) {
    Cidr parent = c;
    parent.len = c.len - 1;
    parent.addr = mask_prefix(c.addr, parent.len);
    LV_PROPERTY(parent.contains(c) && !c.contains(parent), "{} and its parent {}", shown, parent.to_string());
  }
}

// "did you mean 198.51.100.0/24?": the correction must be one the parser takes.
void check_rejected(std::string_view text, const Error& e) {
  LV_PROPERTY(!e.what.empty() && e.usage, "Cidr::parse({}) refused without saying why", escaped(text));
  constexpr std::string_view kMean = "did you mean ";
  if (e.hint.rfind(kMean, 0) != 0) return;
  std::string fix = e.hint.substr(kMean.size());
  if (!fix.empty() && fix.back() == '?') fix.pop_back();
  const auto fixed = Cidr::parse(fix);
  LV_PROPERTY(fixed.ok(), "Cidr::parse({}) suggests {}, which is refused: {}", escaped(text), fix,
              fixed.ok() ? "" : fixed.error().message());
}

}  // namespace
}  // namespace levee

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto c = levee::Cidr::parse(text);
  if (c.ok())
    levee::check_accepted(text, c.value());
  else
    levee::check_rejected(text, c.error());
  return 0;
}
