// version.hpp - levee's version, as the build (CMake's project version) gives it.
#pragma once

#include <string>

namespace levee {

const char* levee_version();  // "0.1.0"

// How this binary was built: "GCC 12.2.0, RelWithDebInfo" (the compiler and CMake's build type).
std::string levee_build();

}  // namespace levee
