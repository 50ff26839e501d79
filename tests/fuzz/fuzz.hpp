// fuzz.hpp - what the harnesses share: a property that does not hold stops the run the
// way a crash does, so libFuzzer saves the input and scripts/fuzz.sh fails.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace levee::fuzz {

// Bytes as a C string literal would spell them: the failing input in one line.
inline std::string escaped(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", static_cast<char>(c));
    else if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  return out + "\"";
}

[[noreturn]] inline void property_failed(const char* file, int line, const char* cond, const std::string& detail) {
  std::fprintf(stderr, "%s:%d: property does not hold: %s\n  %s\n", file, line, cond, detail.c_str());
  std::abort();
}

}  // namespace levee::fuzz

// LV_PROPERTY(cond, "format", args...): the format says on what input, with what values.
#define LV_PROPERTY(cond, ...) \
  ((cond) ? void(0) : ::levee::fuzz::property_failed(__FILE__, __LINE__, #cond, fmt::format(__VA_ARGS__)))
