// state_file.hpp - what levee run's CrowdSec threads tell `levee status`, which cannot
// ask the daemon: a small JSON object in /run/levee (core/lock.hpp names the files),
// written whole (a rename over the last one) so that a reader never sees half of it,
// and removed when the thread stops. status ignores a file whose pid is gone.
#pragma once

#include <string>

namespace levee::daemon {

// Best effort: status then says nothing of the thread; the metrics still do.
void write_state_file(const std::string& path, const std::string& json);

}  // namespace levee::daemon
