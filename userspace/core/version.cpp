#include "core/version.hpp"

#include <fmt/format.h>

#ifndef LEVEE_VERSION
#error "LEVEE_VERSION is set by userspace/CMakeLists.txt from the project's version"
#endif
#ifndef LEVEE_BUILD_TYPE
#error "LEVEE_BUILD_TYPE is set by userspace/CMakeLists.txt from CMAKE_BUILD_TYPE"
#endif

namespace levee {

const char* levee_version() { return LEVEE_VERSION; }

std::string levee_build() {
#if defined(__clang__)
  const std::string compiler = fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  const std::string compiler = fmt::format("GCC {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  const std::string compiler = "an unknown compiler";
#endif
  return fmt::format("{}, {}", compiler, LEVEE_BUILD_TYPE[0] ? LEVEE_BUILD_TYPE : "no build type");
}

}  // namespace levee
