#include "cli/app.hpp"

#include <fmt/format.h>

#include <bpf/libbpf.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <sstream>
#include <utility>

#include "core/quote.hpp"
#include "core/version.hpp"
#include "datapath/kernel.hpp"
#include "levee_abi.h"

namespace levee::cli {
namespace {

// `levee --version`: the name and version first ("levee 0.1.0"), then what a bug report
// or an upgrade needs: the state layout it pins and accepts, the libbpf it runs with,
// and how it was built.
std::string version_text() {
  return fmt::format(
      "levee {}\n"
      "state layout (ABI) {}: a filter attached with another layout is refused; detach and attach it again\n"
      "libbpf {}.{}\n"
      "built with {}",
      levee_version(), LV_ABI_VERSION, libbpf_major_version(), libbpf_minor_version(), levee_build());
}

// "deny add " for `levee deny add ...`: where --help would tell more.
std::string parsed_path(const CLI::App& app) {
  std::string path;
  for (const CLI::App* cur = &app; !cur->get_subcommands().empty();) {
    cur = cur->get_subcommands().back();
    path += cur->get_name() + " ";
  }
  return path;
}

// The first word of the command line that is no option: the command, when there is one.
std::string first_word(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return argv[i];
  return {};
}

// A command levee does not have: CLI11 would only say that a subcommand is required.
bool unknown_command(const CLI::App& app, const std::string& word) {
  if (word.empty() || !app.get_subcommands().empty()) return false;
  const auto named = app.get_subcommands([&](const CLI::App* sub) { return sub->check_name(word); });
  return named.empty();
}

// Help and version go to stdout (exit 0); anything else is one usage line (exit 2).
Parsed parse_failure(const CLI::App& app, const CLI::ParseError& e, const std::string& command) {
  Parsed out;
  std::ostringstream o, err;
  const bool info = e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success);
  if (info) {
    app.exit(e, o, err);
    out.out = o.str();
    if (!out.out.empty() && out.out.back() != '\n') out.out += '\n';
    out.exit_code = kExitOk;
  } else if (unknown_command(app, command)) {
    out.err = fmt::format("levee: {} is not a levee command; see: levee --help (it lists every command)\n",
                          quote_value(command));
    out.exit_code = kExitUsage;
  } else {
    // CLI11's message echoes what was typed: clipped as quote_value() clips a value.
    out.err = fmt::format("levee: {}; see: levee {}--help\n", clipped(e.what()), parsed_path(app));
    out.exit_code = kExitUsage;
  }
  return out;
}

}  // namespace

Parsed parse(int argc, const char* const* argv) {
  Invocation inv;
  CLI::App app{"levee drops floods at the NIC driver with XDP: a token bucket per source address.", "levee"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text(),
                       "print the version, the state layout (ABI) and the build, and exit");
  app.add_flag("-v,--verbose", inv.verbose, "print libbpf's messages (the verifier log on a refused load)");
  // In the order `levee --help` lists them.
  const std::pair<const CLI::App*, Command> commands[] = {
      {add_attach_command(app, inv.attach), Command::Attach},
      {add_reload_command(app, inv.reload), Command::Reload},
      {add_set_command(app, inv.set), Command::Set},
      {add_stats_command(app, inv.stats), Command::Stats},
      {add_status_command(app, inv.status_json), Command::Status},
      {add_detach_command(app, inv.detach_iface), Command::Detach},
      {add_list_command(app, inv.lists, LV_LIST_ALLOW), Command::Lists},
      {add_list_command(app, inv.lists, LV_LIST_DENY), Command::Lists},
      {add_list_command(app, inv.lists, LV_LIST_OVERRIDE), Command::Lists},
      {add_show_command(app, inv.show), Command::Show},
      {add_unban_command(app, inv.unban), Command::Unban},
      {add_prune_command(app, inv.prune), Command::Prune},
      {add_top_command(app, inv.top), Command::Top},
      {add_suggest_command(app, inv.suggest), Command::Suggest},
      {add_events_command(app, inv.events), Command::Events},
      {add_run_command(app, inv.run), Command::Run},
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_failure(app, e, first_word(argc, argv));
  }
  for (const auto& [cmd, command] : commands)
    if (*cmd) inv.command = command;
  Parsed out;
  out.invocation = std::move(inv);
  return out;
}

int run(const Invocation& inv) {
  set_libbpf_verbose(inv.verbose);
  Status r;
  switch (inv.command) {
    case Command::Attach:
      r = attach(inv.attach);
      break;
    case Command::Reload:
      r = reload(inv.reload);
      break;
    case Command::Set:
      r = set(inv.set);
      break;
    case Command::Stats:
      r = stats(inv.stats);
      break;
    case Command::Status:
      r = status(inv.status_json);
      break;
    case Command::Detach:
      r = detach(inv.detach_iface);
      break;
    case Command::Lists:
      r = lists(inv.lists);
      break;
    case Command::Show:
      r = show(inv.show);
      break;
    case Command::Unban:
      r = unban(inv.unban);
      break;
    case Command::Prune:
      r = prune(inv.prune);
      break;
    case Command::Top:
      r = top(inv.top);
      break;
    case Command::Suggest:
      r = suggest(inv.suggest);
      break;
    case Command::Events:
      r = events(inv.events);
      break;
    case Command::Run:
      r = cli::run(inv.run);
      break;
  }
  if (!r) {
    std::fflush(stdout);
    fmt::print(stderr, "levee: {}\n", r.error().message());
    return r.error().usage ? kExitUsage : kExitError;
  }
  return kExitOk;
}

}  // namespace levee::cli
