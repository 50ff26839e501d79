// app.hpp - the command line: parse argv into one command, run it.
#pragma once

#include <optional>
#include <string>

#include "cli/commands.hpp"

namespace levee::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

enum class Command { Attach, Reload, Set, Stats, Status, Detach, Lists, Show, Unban, Prune, Top, Events, Run };

struct Invocation {
  Command command = Command::Status;
  bool verbose = false;
  AttachArgs attach;
  ReloadArgs reload;
  SetArgs set;
  StatsArgs stats;
  bool status_json = false;
  std::string detach_iface;
  ListArgs lists;  // allow, deny, override
  ShowArgs show;
  UnbanArgs unban;
  PruneArgs prune;
  TopArgs top;
  EventsArgs events;
  RunArgs run;
};

struct Parsed {
  std::optional<Invocation> invocation;  // empty: nothing to run, exit with exit_code
  int exit_code = kExitOk;
  std::string out;  // help or version text, for stdout
  std::string err;  // the usage error line, for stderr
};

Parsed parse(int argc, const char* const* argv);

// Run a parsed command; prints its output and, on failure, one "levee: ..." line.
int run(const Invocation& inv);

}  // namespace levee::cli
