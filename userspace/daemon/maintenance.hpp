// maintenance.hpp - `levee run`'s walk of the maps, every --prune-every: idle state
// pruned (which also counts what it keeps and refreshes the known-source filter), or
// with --idle off only counted. Its counts are the gauges a scrape could not afford.
#pragma once

#include <optional>

#include "bpf/pins.hpp"
#include "daemon/daemon.hpp"
#include "export/metrics.hpp"

namespace levee::daemon {

// nullopt if the walk failed (said; the next one tries again).
std::optional<WalkCounts> maintenance_walk(const DaemonOptions& o, const Pinned& pins);

}  // namespace levee::daemon
