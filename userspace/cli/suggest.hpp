// suggest.hpp - `levee suggest IFACE [--window D] [--interval D] [--headroom X]
// [--min-sources N] [--json] [--config FILE] [--new-sources-budget]`: limits per class
// learnt from the traffic the attached filter sees, and with --config the change of that
// file as a diff.
#pragma once

#include <string>

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

struct SuggestArgs {
  std::string iface;
  std::string window = "30s";
  std::string interval = "1s";
  double headroom = 1.5;
  unsigned min_sources = 10;
  bool json = false;
  std::string config;               // a config file to show the change of; never written
  bool new_sources_budget = false;  // new_sources also where a class has the autopilot or "off"
};

CLI::App* add_suggest_command(CLI::App& app, SuggestArgs& a);

Status suggest(const SuggestArgs& a);

}  // namespace levee::cli
