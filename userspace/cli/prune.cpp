// prune.cpp - `levee prune IFACE [--idle DURATION] [--json]`: remove idle state.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "bpf/prune.hpp"
#include "cli/commands.hpp"
#include "core/units.hpp"
#include "export/render_units.hpp"

namespace levee::cli {

Status prune(const PruneArgs& a) {
  uint64_t idle = kDefaultIdleNs;
  if (!a.idle.empty()) {
    auto v = parse_duration_ns(a.idle);
    if (!v) return usage_error(fmt::format("--idle '{}' is not a duration", a.idle), "give e.g. 30s, 10m or 1h");
    if (*v == 0) return usage_error("--idle 0 is no time at all", "give a positive duration, e.g. 1s");
    idle = *v;
  }
  LV_TRY_ASSIGN(auto r, levee::prune(a.iface, idle));
  if (a.json) {
    using nlohmann::json;
    json j{{"interface", a.iface},
           {"idle_ms", idle / 1'000'000},
           {"sources_removed", r.sources_removed},
           {"sources_kept", r.sources_kept},
           {"networks_removed", r.networks_removed},
           {"networks_kept", r.networks_kept},
           {"bans_removed", r.bans_removed},
           {"bans_kept", r.bans_kept},
           {"bans_active", r.bans_active},
           {"when_full", r.refuse ? "refuse" : "evict"},
           {"source_count", r.count ? json(*r.count) : json(nullptr)},
           {"full_at", r.refuse ? json(r.full_at) : json(nullptr)},
           {"filter_sources", r.filter_sources},
           {"seconds", r.seconds}};
    fmt::print("{}\n", j.dump());
    return {};
  }
  fmt::print("{}: pruned state idle for {} in {:.3f} s\n", a.iface, format_duration(idle), r.seconds);
  fmt::print("  sources      {} removed, {} kept\n", group_digits(r.sources_removed), group_digits(r.sources_kept));
  fmt::print("  networks     {} removed, {} kept\n", group_digits(r.networks_removed), group_digits(r.networks_kept));
  fmt::print("  ban records  {} removed, {} kept ({} banning now)\n", group_digits(r.bans_removed),
             group_digits(r.bans_kept), group_digits(r.bans_active));
  if (r.count)
    fmt::print("  when full    refuse: {} states counted, new ones refused at {} ({} free)\n", group_digits(*r.count),
               group_digits(r.full_at), group_digits(r.full_at > *r.count ? r.full_at - *r.count : 0));
  fmt::print("  filter       known-source filter refilled from {} sources\n", group_digits(r.filter_sources));
  return {};
}

}  // namespace levee::cli
