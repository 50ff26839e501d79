// preflight.hpp - the checks of a command that only reads an interface's pins (stats,
// status, top) before it opens them: privileges and a mounted bpffs.
#pragma once

#include "core/result.hpp"

namespace levee::cli {

Status readers_preflight(const char* action);

}  // namespace levee::cli
