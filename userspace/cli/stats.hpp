// stats.hpp - `levee stats IFACE [--json] [--watch]`: an interface's counters, summed
// over CPUs, once or as rates every interval.
#pragma once

#include <string>

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

struct StatsArgs {
  std::string iface;
  bool json = false;
  bool watch = false;
  double interval = 1.0;
  unsigned count = 0;  // 0: until interrupted
};

CLI::App* add_stats_command(CLI::App& app, StatsArgs& a);

Status stats(const StatsArgs& a);

}  // namespace levee::cli
