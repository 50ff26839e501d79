#include "export/render_prune.hpp"

#include <fmt/format.h>

#include "core/units.hpp"
#include "export/render_units.hpp"

namespace levee {

nlohmann::json prune_json(const std::string& iface, uint64_t idle_ns, const PruneResult& r) {
  using nlohmann::json;
  return {{"interface", iface},
          {"idle_ms", idle_ns / 1'000'000},
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
}

std::string prune_text(const std::string& iface, uint64_t idle_ns, const PruneResult& r) {
  std::string out =
      fmt::format("{}: pruned state idle for {} in {:.3f} s\n", iface, format_duration(idle_ns), r.seconds);
  out += fmt::format("  sources      {} removed, {} kept\n", group_digits(r.sources_removed),
                     group_digits(r.sources_kept));
  out += fmt::format("  networks     {} removed, {} kept\n", group_digits(r.networks_removed),
                     group_digits(r.networks_kept));
  out += fmt::format("  ban records  {} removed, {} kept ({} banning now)\n", group_digits(r.bans_removed),
                     group_digits(r.bans_kept), group_digits(r.bans_active));
  if (r.count)
    out += fmt::format("  when full    refuse: {} states counted, new ones refused at {} ({} free)\n",
                       group_digits(*r.count), group_digits(r.full_at),
                       group_digits(r.full_at > *r.count ? r.full_at - *r.count : 0));
  out += fmt::format("  filter       known-source filter refilled from {} sources\n", group_digits(r.filter_sources));
  return out;
}

}  // namespace levee
