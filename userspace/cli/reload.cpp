#include "cli/reload.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"
#include "datapath/live.hpp"
#include "export/render_policy.hpp"
#include "export/render_units.hpp"
#include "policy/config.hpp"

namespace levee::cli {

CLI::App* add_reload_command(CLI::App& app, ReloadArgs& a) {
  auto* reload = app.add_subcommand("reload", "replace the policy of an attached interface from its file, atomically");
  add_iface(reload, a.iface);
  reload->add_option("--config", a.config, "the policy file (TOML)")->required()->type_name("FILE");
  reload->footer(
      "\nExample: levee reload eth0 --config /etc/levee/levee.toml\n"
      "The whole file is checked first: a bad file changes nothing. Sources keep their\n"
      "state in classes that still exist; entries added with allow/deny/override add or\n"
      "deny import are kept.");
  return reload;
}

Status reload(const ReloadArgs& a) {
  LV_TRY_ASSIGN(auto p, load_config(a.config, a.iface));  // a bad file fails here, before anything is touched
  LV_TRY_ASSIGN(auto r, levee::reload(a.iface, p));
  fmt::print("{}: policy generation {} from {}: {} classes, {} list entries ({} of them added at run time, kept)\n{}",
             a.iface, r.generation, p.source, r.classes, group_digits(r.list_entries), group_digits(r.kept_runtime),
             policy_text(p, false));
  for (const auto& d : r.dropped) fmt::print("  dropped  {}\n", d);
  for (const auto& n : r.notes) fmt::print("  note     {}\n", n);
  return {};
}

}  // namespace levee::cli
