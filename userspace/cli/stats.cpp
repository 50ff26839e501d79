#include "cli/stats.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <thread>

#include "cli/options.hpp"
#include "cli/orphaned.hpp"
#include "datapath/inspect.hpp"
#include "datapath/kernel.hpp"
#include "datapath/maps.hpp"
#include "datapath/pins.hpp"
#include "export/render_stats.hpp"

namespace levee::cli {

CLI::App* add_stats_command(CLI::App& app, StatsArgs& a) {
  auto* stats = app.add_subcommand("stats", "counters of an interface, summed over CPUs");
  add_iface(stats, a.iface);
  stats->add_flag("--json", a.json, "one JSON object (with --watch: one per sample)");
  add_watch_options(stats, a.watch, a.interval, a.count, "print rates every interval until interrupted", "samples",
                    0.05);
  stats->footer("\nExamples: levee stats eth0 --json\n          levee stats eth0 --watch");
  return stats;
}

Status stats(const StatsArgs& a) {
  LV_TRY(preflight("stats"));
  LV_TRY_ASSIGN(auto p, open_pinned(a.iface));
  warn_if_orphaned(p);
  LV_TRY_ASSIGN(auto c, interface_counters(p));
  ClassNames names;
  LV_TRY_ASSIGN(auto cc, class_counters(p));
  bool monitoring = false;
  for (const auto& k : cc) names.emplace_back(k.name, k.id), monitoring |= k.monitor;
  if (!a.watch) {
    if (a.json)
      fmt::print("{}\n", stats_json(a.iface, c, names).dump());
    else
      fmt::print("{}", stats_text(a.iface, c, names, monitoring));
    return {};
  }
  using clock = std::chrono::steady_clock;
  auto interval = std::chrono::duration<double>(a.interval > 0 ? a.interval : 1.0);
  auto next = clock::now();
  Counters prev = c;
  auto prev_t = clock::now();
  for (unsigned i = 0; a.count == 0 || i < a.count; ++i) {
    next += std::chrono::duration_cast<clock::duration>(interval);
    std::this_thread::sleep_until(next);
    LV_TRY_ASSIGN(auto cur, interface_counters(p));
    auto now = clock::now();
    if (a.json)
      fmt::print("{}\n", stats_json(a.iface, cur, names).dump());
    else
      fmt::print("{}  {}\n", a.iface, rates_line(prev, cur, std::chrono::duration<double>(now - prev_t).count()));
    std::fflush(stdout);
    prev = cur;
    prev_t = now;
  }
  return {};
}

}  // namespace levee::cli
