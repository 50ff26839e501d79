// events.hpp - `levee events IFACE [--json]`: the interface's event log, as lines or
// JSON lines, until --count events, --duration seconds, or SIGINT/SIGTERM.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

struct EventsArgs {
  std::string iface;
  bool json = false;
  uint64_t count = 0;   // stop after this many events; 0: no limit
  double duration = 0;  // stop after this many seconds; 0: no limit
};

CLI::App* add_events_command(CLI::App& app, EventsArgs& a);

Status events(const EventsArgs& a);

}  // namespace levee::cli
