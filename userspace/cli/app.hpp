// app.hpp - the command line: parse argv into one command, run it.
//
// app.cpp wires CLI11; each command is one file pair (attach, reload, set, stats, status,
// detach, lists, show, unban, prune, top, suggest, events, run): its arguments, its options
// (add_*_command) and what it does. Each checks its values before anything touches the
// kernel (usage errors, exit 2), then prints its result or returns one error.
#pragma once

#include <optional>
#include <string>

#include "cli/attach.hpp"
#include "cli/detach.hpp"
#include "cli/events.hpp"
#include "cli/lists.hpp"
#include "cli/prune.hpp"
#include "cli/reload.hpp"
#include "cli/run.hpp"
#include "cli/set.hpp"
#include "cli/show.hpp"
#include "cli/stats.hpp"
#include "cli/status.hpp"
#include "cli/suggest.hpp"
#include "cli/top.hpp"
#include "cli/unban.hpp"

namespace levee::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

enum class Command { Attach, Reload, Set, Stats, Status, Detach, Lists, Show, Unban, Prune, Top, Suggest, Events, Run };

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
  SuggestArgs suggest;
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
