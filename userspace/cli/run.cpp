// run.cpp - `levee run [IFACE] --config FILE ...`: the command line of the daemon.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/units.hpp"
#include "daemon/daemon.hpp"
#include "policy/config.hpp"
#include "policy/policy.hpp"

namespace levee::cli {

Status run(const RunArgs& a) {
  DaemonOptions o;
  o.config = a.config;
  o.events_path = a.events;
  o.detach_on_exit = a.detach_on_exit;
  if (!a.mode.empty()) o.mode = parse_attach_mode(a.mode).value_or(LV_MODE_AUTO);  // CLI11 checked it
  if (!a.metrics.empty()) {
    LV_TRY_ASSIGN(auto m, parse_listen_address(a.metrics));
    o.metrics = m;
  }
  auto every = parse_duration_ns(a.prune_every);
  if (!every || *every < 100'000'000)
    return usage_error(fmt::format("--prune-every '{}' is not a duration of 100ms or more", a.prune_every),
                       "give e.g. 30s or 5m");
  o.prune_every_ns = *every;
  if (a.idle == "off") {
    o.idle_ns = 0;
  } else {
    auto idle = parse_duration_ns(a.idle);
    if (!idle || *idle == 0)
      return usage_error(fmt::format("--idle '{}' is not a positive duration", a.idle), "give e.g. 10m or 1h, or off");
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
