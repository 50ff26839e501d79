// reload.hpp - `levee reload IFACE --config FILE`: replace an attached interface's policy
// from its file, atomically.
#pragma once

#include <string>

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

struct ReloadArgs {
  std::string iface;
  std::string config;
};

CLI::App* add_reload_command(CLI::App& app, ReloadArgs& a);

Status reload(const ReloadArgs& a);

}  // namespace levee::cli
