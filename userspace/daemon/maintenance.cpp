#include "daemon/maintenance.hpp"

#include <chrono>

#include "bpf/inspect.hpp"
#include "bpf/prune.hpp"
#include "core/clock.hpp"
#include "daemon/log.hpp"
#include "export/render_units.hpp"

namespace levee::daemon {
namespace {

// What the walk kept: a prune's counts (and its deletions said), or with idle off a
// status walk's.
Result<WalkCounts> walk(const DaemonOptions& o, const Pinned& pins) {
  if (o.idle_ns) {
    LV_TRY_ASSIGN(auto r, prune(o.iface, o.idle_ns));
    if (r.sources_removed || r.networks_removed || r.bans_removed)
      say(o.iface, "pruned {} idle sources, {} networks, {} ban records", group_digits(r.sources_removed),
          group_digits(r.networks_removed), group_digits(r.bans_removed));
    return WalkCounts{.sources = r.sources_kept,
                      .networks = r.networks_kept,
                      .bans_active = r.bans_active,
                      .ban_records = r.bans_kept};
  }
  LV_TRY_ASSIGN(auto st, query_status(pins, true));
  return WalkCounts{
      .sources = st.sources, .networks = st.networks, .bans_active = st.bans_active, .ban_records = st.ban_records};
}

}  // namespace

std::optional<WalkCounts> maintenance_walk(const DaemonOptions& o, const Pinned& pins) {
  const auto t0 = std::chrono::steady_clock::now();
  auto w = walk(o, pins);
  if (!w) {
    say(o.iface, "maintenance walk failed: {}", w.error().message());
    return std::nullopt;
  }
  w->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  w->at_unix_ns = unix_now_ns();
  return *w;
}

}  // namespace levee::daemon
