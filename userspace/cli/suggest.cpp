// suggest.cpp - `levee suggest IFACE`: walks lv_state every --interval for --window and
// hands the walks to the statistics (export/suggest.hpp); with --config, the suggested
// limits as a diff of that file (policy/config_edit.hpp). Nothing is changed.
#include "cli/suggest.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <optional>
#include <vector>

#include "cli/options.hpp"
#include "cli/orphaned.hpp"
#include "core/quote.hpp"
#include "core/signals.hpp"
#include "core/units.hpp"
#include "datapath/kernel.hpp"
#include "datapath/maps.hpp"
#include "datapath/pins.hpp"
#include "datapath/policy_map.hpp"
#include "export/render_suggest.hpp"
#include "export/suggest.hpp"
#include "policy/class_ids.hpp"
#include "policy/compile.hpp"
#include "policy/config.hpp"
#include "policy/config_edit.hpp"
#include "policy/policy.hpp"

namespace levee::cli {
namespace {

constexpr uint64_t kMinIntervalNs = 100'000'000;            // 100ms
constexpr uint64_t kMaxWindowNs = 3600ull * 1'000'000'000;  // 1h

struct Timing {
  uint64_t window_ns = 0, interval_ns = 0;
};

Result<Timing> timing(const SuggestArgs& a) {
  Timing t;
  LV_TRY_ASSIGN(t.window_ns, duration_arg("--window", a.window));
  LV_TRY_ASSIGN(t.interval_ns, duration_arg("--interval", a.interval));
  if (t.interval_ns < kMinIntervalNs)
    return usage_error(fmt::format("--interval {} is shorter than 100ms", quote_value(a.interval)),
                       "give 100ms or more: a walk of a full map takes about that long");
  if (t.window_ns > kMaxWindowNs)
    return usage_error(fmt::format("--window {} is longer than 1h", quote_value(a.window)), "give 1h or less");
  if (t.window_ns < 2 * t.interval_ns)
    return usage_error(
        fmt::format("--window {} is shorter than two intervals of {}", quote_value(a.window), quote_value(a.interval)),
        "give a window of at least twice --interval (30s and 1s by default)");
  if (!(a.headroom >= 1 && a.headroom <= 100))
    return usage_error(fmt::format("--headroom {} is out of range", a.headroom),
                       "give 1 (what was seen) to 100; 1.5 by default");
  return t;
}

// The classes of the active policy, in first-match order, as keys name them.
std::vector<SuggestClass> classes_of(const lv_policy& pol) {
  std::vector<SuggestClass> out;
  for (uint8_t id : class_order(pol))
    out.push_back(
        {name_of(pol.classes[id].name), id, pol.classes[id].epoch, class_of(pol.classes[id]).admission_in_force()});
  return out;
}

// Walks every interval until the window is over or a signal ends it early.
Result<SuggestSampler> sample(int state_fd, const lv_policy& pol, const Timing& t) {
  SuggestSampler s(classes_of(pol));
  Signals signals;
  const auto interval = std::chrono::nanoseconds(t.interval_ns);
  const uint64_t walks = t.window_ns / t.interval_ns + 1;
  auto next = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> t0;
  size_t hint = 0;
  for (uint64_t i = 0; i < walks; ++i) {
    if (i && !Signals::sleep_until(next)) break;
    LV_TRY_ASSIGN(auto w, walk_state(state_fd, false, hint));
    hint = w.keys.size() + w.keys.size() / 8;
    if (!t0) t0 = w.at;
    s.add(w.keys, w.states, std::chrono::duration<double>(w.at - *t0).count());
    // The next walk an interval after this one was due, or at once if it is late.
    next += interval;
    if (next < std::chrono::steady_clock::now()) next = std::chrono::steady_clock::now();
  }
  if (s.walks() < 2)
    return Error{"interrupted before two walks of the per-source state", 0,
                 "let it run for at least two intervals (--interval)"};
  return s;
}

// The file's own admission decides whether new_sources is written (config_edit.hpp).
std::vector<ClassLimits> limits_of(const SuggestReport& r) {
  std::vector<ClassLimits> out;
  for (const ClassSuggestion& c : r.classes) {
    if (!c.rate) continue;
    out.push_back({c.name, c.rate->value, c.burst->value, c.bytes_rate->value, c.bytes_burst->value,
                   c.new_sources->value, r.options.budget_new_sources});
  }
  return out;
}

}  // namespace

CLI::App* add_suggest_command(CLI::App& app, SuggestArgs& a) {
  auto* cmd = app.add_subcommand("suggest", "limits per class learnt from the traffic the filter sees");
  add_iface(cmd, a.iface);
  cmd->add_option("--window", a.window, "how long to watch (up to 1h; 30s, 5m)")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd->add_option("--interval", a.interval, "between walks of the per-source state (100ms or more)")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd->add_option("--headroom", a.headroom, "each suggestion is what was seen times this (1 to 100)")
      ->type_name("X")
      ->capture_default_str();
  cmd->add_option("--min-sources", a.min_sources, "fewer sources in a class: nothing suggested for it (1 to 1M)")
      ->check(CLI::Range(1u, 1'000'000u).description(""))
      ->type_name("N")
      ->capture_default_str();
  cmd->add_flag("--json", a.json, "one JSON object");
  cmd->add_option("--config", a.config, "show the change of this config file as a diff (never written)")
      ->type_name("FILE");
  cmd->add_flag("--new-sources-budget", a.new_sources_budget,
                "suggest new_sources also where a class has no budget: a fixed budget that turns its autopilot off");
  cmd->footer(
      "\nExamples: levee suggest eth0\n"
      "          levee suggest eth0 --window 10m --json\n"
      "          levee suggest eth0 --config /etc/levee/eth0.toml\n"
      "Per class: the p50/p90/p99/max over sources of the packets and bytes each offered per\n"
      "second (passed and dropped), and of the most it sent in one interval, and new sources\n"
      "per second. Suggested: rate and bytes_rate = p99 x headroom, burst and bytes_burst = p99\n"
      "of the busiest interval x headroom, new_sources = the peak x headroom (at least 10),\n"
      "rounded up to 2 significant figures, each with the share of sources it covers. A class\n"
      "under the autopilot (new_sources = \"auto\", the default) or \"off\" keeps it: a number for\n"
      "new_sources is a fixed budget that replaces the autopilot, suggested there only with\n"
      "--new-sources-budget (and said so). Watch ordinary traffic: what a flood sends would be\n"
      "learnt as normal. Ctrl-C ends the window early.");
  return cmd;
}

Status suggest(const SuggestArgs& a) {
  LV_TRY_ASSIGN(const Timing t, timing(a));
  std::string config_text;
  if (!a.config.empty()) {
    // Refused before the window rather than after it.
    LV_TRY_ASSIGN(config_text, read_config_text(a.config));
    LV_TRY(config_limits_diff(config_text, a.config, {}));
  }
  LV_TRY(preflight("suggest"));
  LV_TRY_ASSIGN(auto p, open_pinned(a.iface));
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  warn_if_orphaned(p);
  LV_TRY_ASSIGN(const SuggestSampler s, sample(p.state.get(), pm.active(), t));
  SuggestReport r = levee::suggest(s, {a.headroom, a.min_sources, a.new_sources_budget});
  r.iface = a.iface;
  r.interval_s = static_cast<double>(t.interval_ns) / 1e9;
  std::optional<ConfigDiff> diff;
  if (!a.config.empty()) {
    LV_TRY_ASSIGN(diff, config_limits_diff(config_text, a.config, limits_of(r)));
  }
  if (a.json) {
    fmt::print("{}\n", suggest_json(r, diff ? &*diff : nullptr, a.config).dump());
    return {};
  }
  fmt::print("{}", suggest_text(r));
  if (diff) {
    fmt::print("\n{}", diff->diff.empty() ? fmt::format("{}: nothing to change\n", a.config) : diff->diff);
    for (const std::string& n : diff->notes) fmt::print("note: {}\n", n);
  }
  return {};
}

}  // namespace levee::cli
