// iface.hpp - interfaces and attach modes as operators name them, checked before a name
// reaches a path (pin directory, lock file) or the kernel.
#pragma once

#include <optional>
#include <string_view>

#include "levee_abi.h"

namespace levee {

// A name the kernel could give an interface, by its own rule (dev_valid_name: IFNAMSIZ,
// not "." or "..", no '/', ':', blank or NUL): checked before it names a pin directory
// or a lock file, where "." and ".." would name the directory itself or its parent.
inline bool valid_iface_name(std::string_view n) {
  using namespace std::string_view_literals;
  return !n.empty() && n.size() < 16 && n != "." && n != ".." &&
         n.find_first_of("/: \t\n\v\f\r\0"sv) == std::string_view::npos;
}

// "auto", "native", "generic" (attach --mode, run --mode, [interface] mode).
inline std::optional<lv_attach_mode> parse_attach_mode(std::string_view m) {
  if (m == "auto") return LV_MODE_AUTO;
  if (m == "native") return LV_MODE_NATIVE;
  if (m == "generic") return LV_MODE_GENERIC;
  return std::nullopt;
}

// The inverse: "native", "generic", "auto".
inline const char* mode_name(lv_attach_mode m) {
  switch (m) {
    case LV_MODE_NATIVE:
      return "native";
    case LV_MODE_GENERIC:
      return "generic";
    default:
      return "auto";
  }
}

}  // namespace levee
