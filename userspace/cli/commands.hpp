// commands.hpp - the subcommands, behind the CLI11 wiring in main.cpp.
#pragma once

#include <optional>
#include <string>

#include "core/result.hpp"

namespace levee::cli {

struct AttachArgs {
  std::string iface;
  std::string rate, burst;        // counts as typed ("10k"), parsed by the command
  std::string mode = "auto";
  std::string max_sources;        // empty: default
  unsigned prefix4 = 32, prefix6 = 64;
};

struct SetArgs {
  std::string iface;
  std::string class_name;         // empty: the only class
  std::string rate, burst;        // empty: unchanged
  std::string bytes_rate, bytes_burst;
  std::optional<unsigned> prefix4, prefix6;
};

struct StatsArgs {
  std::string iface;
  bool json = false;
  bool watch = false;
  double interval = 1.0;
  unsigned count = 0;  // 0: until interrupted
};

Status attach(const AttachArgs& a);
Status set(const SetArgs& a);
Status stats(const StatsArgs& a);
Status status(bool json);
Status detach(const std::string& iface);

}  // namespace levee::cli
