#include "cli/detach.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"
#include "datapath/attach.hpp"

namespace levee::cli {

CLI::App* add_detach_command(CLI::App& app, std::string& iface) {
  auto* detach = app.add_subcommand("detach", "remove levee from an interface and everything it pinned");
  add_iface(detach, iface);
  detach->footer("\nExample: levee detach eth0");
  return detach;
}

Status detach(const std::string& iface) {
  LV_TRY(levee::detach(iface));
  fmt::print("detached from {}\n", iface);
  return {};
}

}  // namespace levee::cli
