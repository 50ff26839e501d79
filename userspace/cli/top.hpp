// top.hpp - `levee top IFACE [-n N] [--by drops|packets|bytes] [--watch]`: the sources
// doing the most, from one batch walk of lv_state.
#pragma once

#include <string>

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

struct TopArgs {
  std::string iface;
  unsigned n = 10;
  std::string by = "drops";  // drops, packets, bytes
  bool json = false;
  bool networks = false;  // rank networks' state (network limits) too
  bool watch = false;
  double interval = 2.0;
  unsigned count = 0;  // --watch: stop after this many refreshes; 0: until interrupted
};

CLI::App* add_top_command(CLI::App& app, TopArgs& a);

Status top(const TopArgs& a);

}  // namespace levee::cli
