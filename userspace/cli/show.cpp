#include "cli/show.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"
#include "cli/orphaned.hpp"
#include "core/clock.hpp"
#include "datapath/inspect.hpp"
#include "datapath/live.hpp"
#include "export/render_show.hpp"

namespace levee::cli {

CLI::App* add_show_command(CLI::App& app, ShowArgs& a) {
  auto* show = app.add_subcommand("show", "one address: its list entry, and per class its tokens, wait and counters");
  add_iface_address(show, a.iface, a.address, "an IPv4 or IPv6 address");
  show->add_flag("--json", a.json, "one JSON object");
  show->footer(
      "\nExample: levee show eth0 203.0.113.7 --json\n"
      "An address with no state was not seen since its state was evicted, or never.");
  return show;
}

Status show(const ShowArgs& a) {
  LV_TRY_ASSIGN(auto r, levee::show(a.iface, a.address));  // checks the address before anything else
  warn_if_orphaned(a.iface);
  const uint64_t now = Clocks::read().now_unix_ns;
  if (a.json)
    fmt::print("{}\n", show_json(a.iface, r, now).dump());
  else
    fmt::print("{}", show_text(a.iface, r, now));
  return {};
}

}  // namespace levee::cli
