#include "cli/options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "core/quote.hpp"
#include "core/units.hpp"

namespace levee::cli {

void add_iface(CLI::App* cmd, std::string& iface) {
  cmd->add_option("iface", iface, "network interface, e.g. eth0")->required();
}

void add_iface_address(CLI::App* cmd, std::string& iface, std::string& address, const char* address_help) {
  add_iface(cmd, iface);
  cmd->add_option("address", address, address_help)->required();
}

void add_watch_options(CLI::App* cmd, bool& watch, double& interval, unsigned& count, const char* watch_help,
                       const char* each, double min_interval) {
  cmd->add_flag("-w,--watch", watch, watch_help);
  cmd->add_option("--interval", interval, fmt::format("seconds between --watch {}", each))
      ->check(CLI::Range(min_interval, 3600.0))
      ->capture_default_str();
  cmd->add_option("--count", count, fmt::format("stop --watch after this many {}", each));
}

CLI::Option* add_xdp_mode_option(CLI::App* cmd, std::string& mode, const char* help) {
  auto* xdp = cmd->add_option("--xdp-mode", mode, help)->check(CLI::IsMember({"auto", "native", "generic"}));
  if (!mode.empty()) xdp->capture_default_str();
  // An empty group hides it from --help.
  cmd->add_option("--mode", mode, "the older name of --xdp-mode")
      ->check(CLI::IsMember({"auto", "native", "generic"}))
      ->group("");
  return xdp;
}

CLI::Option* add_text_option(CLI::App* cmd, const TextOption& o) { return cmd->add_option(o.name, o.value, o.help); }

Result<uint64_t> count_arg(const std::string& opt, const std::string& text) {
  auto v = parse_count(text);
  if (!v) return usage_error(fmt::format("{} {} is not a count", opt, quote_value(text)), "give e.g. 500, 10k or 1.5M");
  return *v;
}

Result<uint64_t> duration_arg(const std::string& opt, const std::string& text) {
  auto v = parse_duration_ns(text);
  if (!v)
    return usage_error(fmt::format("{} {} is not a duration", opt, quote_value(text)),
                       "give e.g. 500ms, 2s, 10m or 1h");
  if (*v == 0) return usage_error(fmt::format("{} {} is no time at all", opt, text), "give a positive duration");
  return *v;
}

}  // namespace levee::cli
