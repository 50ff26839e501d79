#include "cli/run.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"
#include "core/iface.hpp"
#include "core/quote.hpp"
#include "core/units.hpp"
#include "daemon/daemon.hpp"
#include "policy/config.hpp"

namespace levee::cli {

CLI::App* add_run_command(CLI::App& app, RunArgs& a) {
  auto* run = app.add_subcommand("run", "keep an interface's filter as a service: metrics, events, reload on SIGHUP");
  run->add_option("iface", a.iface, "network interface (default: the config's [interface] name)")->type_name("");
  run->add_option("--config", a.config, "the policy file (TOML)")->required()->type_name("FILE");
  run->add_option("--metrics", a.metrics,
                  "serve Prometheus metrics at http://ADDR:PORT/metrics (ADDR default 127.0.0.1; IPv6 in brackets)")
      ->type_name("[ADDR:]PORT");
  run->add_option("--events", a.events, "append the events as JSON lines to this file (default stdout)")
      ->type_name("FILE");
  add_xdp_mode_option(run, a.mode, "XDP mode when it attaches: auto tries native, then generic");
  run->add_option("--prune-every", a.prune_every, "how often the maps are walked: idle state pruned, gauges counted")
      ->type_name("DURATION")
      ->capture_default_str();
  run->add_option("--idle", a.idle, "state idle this long is pruned by the walk; off: only count")
      ->type_name("DURATION|off")
      ->capture_default_str();
  run->add_flag("--detach-on-exit", a.detach_on_exit, "detach on SIGTERM/SIGINT (default: the filter stays attached)");
  run->footer(
      "\nExamples: levee run eth0 --config /etc/levee/eth0.toml --metrics 9740\n"
      "          levee run --config /etc/levee/eth0.toml --events /var/log/levee/eth0.events\n"
      "Attaches the interface from the config, or adopts the filter already pinned there\n"
      "(a restart keeps every bucket, ban and counter; the config is reloaded into it).\n"
      "SIGHUP reloads the config atomically (a bad file changes nothing) and reopens the\n"
      "events file. SIGTERM and SIGINT stop levee run and leave the filter attached.\n"
      "One levee run per interface; CLI changes meanwhile are serialised with it.");
  return run;
}

Status run(const RunArgs& a) {
  DaemonOptions o;
  o.config = a.config;
  o.events_path = a.events;
  o.detach_on_exit = a.detach_on_exit;
  if (!a.mode.empty()) {
    LV_TRY_ASSIGN(o.mode, xdp_mode_arg(a.mode));
  }
  if (!a.metrics.empty()) {
    LV_TRY_ASSIGN(auto m, parse_listen_address(a.metrics));
    o.metrics = m;
  }
  auto every = parse_duration_ns(a.prune_every);
  if (!every || *every < 100'000'000)
    return usage_error(fmt::format("--prune-every {} is not a duration of 100ms or more", quote_value(a.prune_every)),
                       "give e.g. 30s or 5m");
  o.prune_every_ns = *every;
  if (a.idle == "off") {
    o.idle_ns = 0;
  } else {
    auto idle = parse_duration_ns(a.idle);
    if (!idle || *idle == 0)
      return usage_error(fmt::format("--idle {} is not a positive duration", quote_value(a.idle)),
                         "give e.g. 10m or 1h, or off");
    o.idle_ns = *idle;
  }
  o.iface = a.iface;
  if (o.iface.empty()) {
    // The interface the config names: read here only for its name (run_daemon reads the
    // file again, checks it whole, and a bad file fails there the same way).
    LV_TRY_ASSIGN(auto p, load_config(a.config));
    if (p.iface.name.empty())
      return usage_error(fmt::format("{} names no interface", a.config),
                         "give the interface (levee run eth0 --config ...) or [interface] name = \"eth0\"");
    o.iface = p.iface.name;
  }
  return run_daemon(o);
}

}  // namespace levee::cli
