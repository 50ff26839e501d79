// maintenance.hpp - `levee run`'s walk of the maps, every --prune-every: idle state
// pruned (which also counts what it keeps and refreshes the known-source filter), or
// with --idle off only counted. Its counts are the gauges a scrape could not afford.
// The same walk judges which sources behaved and marks them known-good (known_good.hpp),
// and hands the escalated networks it finds to the releases (datapath/releases.hpp).
#pragma once

#include <functional>
#include <optional>

#include "daemon/known_good.hpp"
#include "daemon/options.hpp"
#include "datapath/known_good.hpp"
#include "datapath/pins.hpp"
#include "export/metrics.hpp"

namespace levee::daemon {

// What the walk does besides counting: `judge` sees every entry (its marks go to
// `good`), `escalated` every network escalated and not calm.
struct WalkUse {
  GoodJudge* judge = nullptr;
  KnownGood* good = nullptr;
  NetworkMarks* bound = nullptr;  // the judge's marks, bounded per network
  std::function<void(const lv_key&)> escalated;
};

// nullopt if the walk failed (said; the next one tries again).
std::optional<WalkCounts> maintenance_walk(const DaemonOptions& o, const Pinned& pins, const WalkUse& use = {});

}  // namespace levee::daemon
