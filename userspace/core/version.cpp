#include "core/version.hpp"

#ifndef LEVEE_VERSION
#error "LEVEE_VERSION is set by userspace/CMakeLists.txt from the project's version"
#endif

namespace levee {

const char* levee_version() { return LEVEE_VERSION; }

}  // namespace levee
