#include "cli/prune.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "core/quote.hpp"
#include "core/units.hpp"
#include "datapath/prune.hpp"
#include "export/render_prune.hpp"

namespace levee::cli {

CLI::App* add_prune_command(CLI::App& app, PruneArgs& a) {
  auto* prune = app.add_subcommand("prune", "remove idle per-source state and forgotten ban records");
  add_iface(prune, a.iface);
  prune
      ->add_option("--idle", a.idle,
                   "state whose every limit has been full this long is removed (default 10m; 500ms, 30s, 1h)")
      ->type_name("DURATION");
  prune->add_flag("--json", a.json, "one JSON object");
  prune->footer(
      "\nExamples: levee prune eth0\n"
      "          levee prune eth0 --idle 1h --json\n"
      "A state is idle when each of its limits has been full (its ready time plus the limit's\n"
      "burst tolerance) for --idle: deleting it changes no decision, the source comes back\n"
      "with a full bucket. Banned sources are kept; state of classes a reload removed goes.\n"
      "Ban records over and past forget_after go too. With when_full = \"refuse\" this is\n"
      "what frees room: the deletions are taken off the source count. The known-source\n"
      "filter is refreshed from what is kept.");
  return prune;
}

Status prune(const PruneArgs& a) {
  uint64_t idle = kDefaultIdleNs;
  if (!a.idle.empty()) {
    auto v = parse_duration_ns(a.idle);
    if (!v)
      return usage_error(fmt::format("--idle {} is not a duration", quote_value(a.idle)), "give e.g. 30s, 10m or 1h");
    if (*v == 0) return usage_error("--idle 0 is no time at all", "give a positive duration, e.g. 1s");
    idle = *v;
  }
  LV_TRY_ASSIGN(auto r, levee::prune(a.iface, idle));
  if (a.json)
    fmt::print("{}\n", prune_json(a.iface, idle, r).dump());
  else
    fmt::print("{}", prune_text(a.iface, idle, r));
  return {};
}

}  // namespace levee::cli
