#include "cli/status.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <vector>

#include "bpf/inspect.hpp"
#include "bpf/kernel.hpp"
#include "bpf/pins.hpp"
#include "export/render_status.hpp"

namespace levee::cli {

CLI::App* add_status_command(CLI::App& app, bool& json) {
  auto* status = app.add_subcommand("status", "every attached interface: mode, program, classes, lists, sources");
  status->add_flag("--json", json, "one JSON object");
  status->footer("\nExample: levee status --json");
  return status;
}

Status status(bool json) {
  LV_TRY(preflight("status"));
  std::vector<IfaceStatus> all;
  for (const auto& iface : list_pinned()) {
    auto p = open_pinned(iface);
    // Detached by someone else since the listing: it is simply not attached any more.
    if (!p && !pin_dir_exists(iface)) continue;
    // One interface levee cannot read (pins of another version, half removed) must not
    // hide the others: it is shown with what is wrong.
    auto s = p ? query_status(*p) : Result<IfaceStatus>(p.error());
    if (!s) {
      IfaceStatus broken;
      broken.iface = iface;
      broken.problem = s.error().message();
      all.push_back(std::move(broken));
      continue;
    }
    all.push_back(std::move(s.value()));
  }
  if (json)
    fmt::print("{}\n", status_json(all).dump());
  else
    fmt::print("{}", status_text(all));
  return {};
}

}  // namespace levee::cli
