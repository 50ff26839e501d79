// attach.hpp - `levee attach IFACE --config FILE | --rate PPS --burst PKTS ...`: attach
// to an interface, with a policy file or the one-class shorthand.
#pragma once

#include <string>

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

struct AttachArgs {
  std::string iface;
  std::string rate, burst;  // counts as typed ("10k"), parsed by the command
  std::string mode = "auto";
  std::string max_sources;  // empty: the config file's, else the default
  unsigned prefix4 = 32, prefix6 = 64;
  std::string config;       // a policy file instead of --rate/--burst
  bool mode_given = false;  // --mode was typed: it wins over the config file's
  // With --rate: the class's new-source budget and bans, as typed ("100", "2s").
  std::string new_sources, new_sources_burst;  // a budget, or "auto" (the default), or "off"
  std::string ban, ban_max, forget_after;
  bool monitor = false;  // the interface's monitor switch: count, drop nothing
  // Maps over kMapMemorySharePercent of MemTotal (policy/map_memory.hpp) are wanted.
  bool exceed_memory_cap = false;
  std::string escalate;  // with --rate: "auto" (the default) or "off"
};

// Its options, filling `a`; a parse without --config or --rate is a usage error.
CLI::App* add_attach_command(CLI::App& app, AttachArgs& a);

Status attach(const AttachArgs& a);

}  // namespace levee::cli
