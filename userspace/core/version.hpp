// version.hpp - levee's version, as the build (CMake's project version) gives it.
#pragma once

namespace levee {

const char* levee_version();  // "0.1.0"

}  // namespace levee
