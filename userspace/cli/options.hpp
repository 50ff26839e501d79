// options.hpp - what the commands' command lines share: the interface argument, options
// kept as typed ("10k", "2s") for the command to read, and reading them as counts and
// durations with errors that name the option (usage errors: exit 2).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "levee_abi.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace levee::cli {

// IFACE, the first argument of every command on one interface.
void add_iface(CLI::App* cmd, std::string& iface);

// IFACE ADDRESS: a command about one address on an interface.
void add_iface_address(CLI::App* cmd, std::string& iface, std::string& address, const char* address_help);

// -w/--watch, --interval and --count: a command that repeats itself every --interval
// seconds (at least min_interval) until interrupted or --count times. `each` names
// one repetition in the help ("samples").
void add_watch_options(CLI::App* cmd, bool& watch, double& interval, unsigned& count, const char* watch_help,
                       const char* each, double min_interval);

// --xdp-mode auto|native|generic (attach, run). `levee set --mode` is the interface's
// drop mode (monitor or enforce), as a class's `mode` in the file is: the XDP mode has a
// name of its own. --mode is still taken here as an older name of --xdp-mode, for the
// scripts and units written with it, and left out of --help. Returns --xdp-mode.
CLI::Option* add_xdp_mode_option(CLI::App* cmd, std::string& mode, const char* help);
// The XDP mode given (--xdp-mode is checked as it is parsed, --mode here: a usage error).
Result<lv_attach_mode> xdp_mode_arg(const std::string& mode);

// An option kept as typed; its command reads it and names it in its errors. `value_name`
// is what --help (and so levee(8)) shows for its value: "PPS", "DURATION", "N|auto|off".
struct TextOption {
  const char* name;
  std::string& value;
  const char* help;
  const char* value_name;
};

// One of a few words: --help shows them as the value ("auto|off"), and any other word is
// a usage error that lists them.
CLI::Option* choices(CLI::Option* o, const std::vector<std::string>& words);
CLI::Option* add_text_option(CLI::App* cmd, const TextOption& o);

// Several, in this order (the order --help lists them in); returned in the same order,
// for needs() and excludes().
template <size_t N>
std::array<CLI::Option*, N> add_text_options(CLI::App* cmd, const TextOption (&options)[N]) {
  std::array<CLI::Option*, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = add_text_option(cmd, options[i]);
  return out;
}

// A count option ("500", "10k", "1.5M").
Result<uint64_t> count_arg(const std::string& opt, const std::string& text);

// A duration option ("500ms", "2s", "1h30m"), positive.
Result<uint64_t> duration_arg(const std::string& opt, const std::string& text);

}  // namespace levee::cli
