// prune.hpp - `levee prune IFACE [--idle DURATION] [--json]`: remove idle per-source
// state and forgotten ban records.
#pragma once

#include <string>

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

struct PruneArgs {
  std::string iface;
  std::string idle;  // a duration as typed; empty: 10m
  bool json = false;
};

CLI::App* add_prune_command(CLI::App& app, PruneArgs& a);

Status prune(const PruneArgs& a);

}  // namespace levee::cli
