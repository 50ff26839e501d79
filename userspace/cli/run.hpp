// run.hpp - `levee run [IFACE] --config FILE ...`: the command line of the daemon
// (daemon/daemon.hpp), which keeps an interface's filter as a service.
#pragma once

#include <string>

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

struct RunArgs {
  std::string iface;  // "": the config's [interface] name
  std::string config;
  std::string metrics;  // [ADDR:]PORT; "": no metrics server
  std::string events;   // a file; "": stdout
  std::string mode;     // "": the config's, else auto
  std::string prune_every = "30s";
  std::string idle = "10m";  // or "off"
  bool detach_on_exit = false;
};

CLI::App* add_run_command(CLI::App& app, RunArgs& a);

Status run(const RunArgs& a);

}  // namespace levee::cli
