#include "cli/options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "core/iface.hpp"
#include "core/quote.hpp"
#include "core/units.hpp"

namespace levee::cli {

// A positional argument's name says what it is: no value name after it.
void add_iface(CLI::App* cmd, std::string& iface) {
  cmd->add_option("iface", iface, "network interface, e.g. eth0")->required()->type_name("");
}

void add_iface_address(CLI::App* cmd, std::string& iface, std::string& address, const char* address_help) {
  add_iface(cmd, iface);
  cmd->add_option("address", address, address_help)->required()->type_name("");
}

CLI::Option* choices(CLI::Option* o, const std::vector<std::string>& words) {
  std::string name;
  for (const std::string& w : words) name += (name.empty() ? "" : "|") + w;
  // The validator's own description would repeat the words after the value name.
  return o->type_name(name)->check(CLI::IsMember(words).description(""));
}

void add_watch_options(CLI::App* cmd, bool& watch, double& interval, unsigned& count, const char* watch_help,
                       const char* each, double min_interval) {
  cmd->add_flag("-w,--watch", watch, watch_help);
  cmd->add_option("--interval", interval, fmt::format("seconds between --watch {} ({} to 3600)", each, min_interval))
      ->check(CLI::Range(min_interval, 3600.0).description(""))
      ->type_name("S")
      ->capture_default_str();
  cmd->add_option("--count", count, fmt::format("stop --watch after this many {}", each))->type_name("N");
}

CLI::Option* add_xdp_mode_option(CLI::App* cmd, std::string& mode, const char* help) {
  auto* xdp = choices(cmd->add_option("--xdp-mode", mode, help), {"auto", "native", "generic"});
  if (!mode.empty()) xdp->capture_default_str();
  // An empty group hides it from --help (and from CLI11's messages: xdp_mode_arg() checks it).
  cmd->add_option("--mode", mode, "the older name of --xdp-mode")->group("");
  return xdp;
}

Result<lv_attach_mode> xdp_mode_arg(const std::string& mode) {
  if (auto m = parse_attach_mode(mode)) return *m;
  return usage_error(fmt::format("--mode {} is not an XDP mode", quote_value(mode)),
                     mode == "monitor" || mode == "enforce"
                         ? "give auto, native or generic (--xdp-mode); monitor mode is --monitor, or levee set "
                           "IFACE --mode monitor"
                         : "give auto, native or generic (--xdp-mode)");
}

CLI::Option* add_text_option(CLI::App* cmd, const TextOption& o) {
  return cmd->add_option(o.name, o.value, o.help)->type_name(o.value_name);
}

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
