// commands.hpp - the subcommands, behind the CLI11 wiring in app.cpp.
//
// commands.cpp: attach, reload, set, stats, status, detach; lists.cpp: allow, deny and
// override lists; show.cpp: show and unban; prune.cpp, top.cpp, events.cpp: the
// operations on a running interface (prune, top, events); run.cpp: the daemon. Each checks its values before anything
// touches the kernel (usage errors, exit 2), then prints its result or returns one error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "levee_abi.h"

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
  std::string new_sources, new_sources_burst;
  std::string ban, ban_max, forget_after;
  bool monitor = false;  // the interface's monitor switch: count, drop nothing
};

struct ReloadArgs {
  std::string iface;
  std::string config;
};

struct SetArgs {
  std::string iface;
  std::string class_name;   // empty: the only class
  std::string rate, burst;  // empty: unchanged
  std::string bytes_rate, bytes_burst;
  std::optional<unsigned> prefix4, prefix6;
  std::string new_sources, new_sources_burst;  // "off": no new-source budget
  std::string ban, ban_max, forget_after;      // durations; --ban off: no bans
  std::string mode;                            // "monitor" or "enforce": the interface's switch
};

struct UnbanArgs {
  std::string iface;
  std::string address;
  std::string class_name;  // empty: every class
};

struct StatsArgs {
  std::string iface;
  bool json = false;
  bool watch = false;
  double interval = 1.0;
  unsigned count = 0;  // 0: until interrupted
};

// `levee allow|deny|override add|del|list` and `levee deny import`.
enum class ListOp { Add, Del, List, Import };
struct ListArgs {
  lv_list_kind kind = LV_LIST_DENY;
  ListOp op = ListOp::List;
  std::string iface;
  std::string override_name;       // override add: an override the config defines
  std::vector<std::string> cidrs;  // add, del; list: only entries overlapping these
  std::string expires;             // deny add, deny import: a duration or RFC 3339 time
  std::string file;                // deny import
  bool json = false;               // list
};

struct ShowArgs {
  std::string iface;
  std::string address;
  bool json = false;
};

struct PruneArgs {
  std::string iface;
  std::string idle;  // a duration as typed; empty: 10m
  bool json = false;
};

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

struct EventsArgs {
  std::string iface;
  bool json = false;
  uint64_t count = 0;   // stop after this many events; 0: no limit
  double duration = 0;  // stop after this many seconds; 0: no limit
};

// `levee run`: the daemon (daemon/daemon.hpp).
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

Status attach(const AttachArgs& a);
Status run(const RunArgs& a);
Status reload(const ReloadArgs& a);
Status set(const SetArgs& a);
Status stats(const StatsArgs& a);
Status status(bool json);
Status detach(const std::string& iface);
Status lists(const ListArgs& a);
Status show(const ShowArgs& a);
Status unban(const UnbanArgs& a);
Status prune(const PruneArgs& a);
Status top(const TopArgs& a);
Status events(const EventsArgs& a);

}  // namespace levee::cli
