// set.hpp - `levee set IFACE [--class NAME] --rate ... | --mode monitor|enforce`: change
// the limits of an attached interface, or its monitor switch, live.
#pragma once

#include <optional>
#include <string>

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

struct SetArgs {
  std::string iface;
  std::string class_name;   // empty: the only class
  std::string rate, burst;  // empty: unchanged
  std::string bytes_rate, bytes_burst;
  std::optional<unsigned> prefix4, prefix6;
  std::string new_sources, new_sources_burst;  // a budget, or "auto" (the autopilot), or "off"
  std::string ban, ban_max, forget_after;      // durations; --ban off: no bans
  std::string mode;                            // "monitor" or "enforce": the interface's switch
  std::string escalate;                        // "auto" or "off"
};

CLI::App* add_set_command(CLI::App& app, SetArgs& a);

Status set(const SetArgs& a);

}  // namespace levee::cli
