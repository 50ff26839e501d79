#include "cli/events.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "cli/options.hpp"
#include "cli/orphaned.hpp"
#include "core/event_types.hpp"
#include "core/signals.hpp"
#include "datapath/events.hpp"
#include "export/events.hpp"

namespace levee::cli {
namespace {

// "Types: limited, banned, ...": every event type, from the table the events are named
// by, wrapped to the help's width.
std::string types_line() {
  std::string out, line = "Types:";
  for (size_t i = 0; i < kEventTypes.size(); ++i) {
    const std::string word = std::string(kEventTypes[i].name) + (i + 1 < kEventTypes.size() ? "," : ".");
    if (line.size() + 1 + word.size() > 86) {
      out += line + "\n";
      line = "      ";
    }
    line += " " + word;
  }
  return out + line;
}

}  // namespace

CLI::App* add_events_command(CLI::App& app, EventsArgs& a) {
  auto* events = app.add_subcommand(
      "events", "the interface's events: first drops, bans and their ends, spent budgets, the autopilot");
  add_iface(events, a.iface);
  events->add_flag("--json", a.json, "one JSON object per line");
  events->add_option("--count", a.count, "stop after this many events")->type_name("N");
  events->add_option("--duration", a.duration, "stop after this many seconds")
      ->check(CLI::Range(0.0, 1e9).description(""))
      ->type_name("S");
  events->footer(
      fmt::format("\nExamples: levee events eth0\n"
                  "          levee events eth0 --json --duration 60\n"
                  "{}\n"
                  "The datapath sends at most [interface] events_per_second (default 100); an event\n"
                  "says how many were suppressed before it. Events nobody read yet come first. Runs\n"
                  "until --count, --duration, or Ctrl-C.",
                  types_line()));
  return events;
}

Status events(const EventsArgs& a) {
  if (a.duration < 0) return usage_error("--duration is negative", "give seconds, e.g. 10 or 0.5");
  LV_TRY_ASSIGN(auto src, EventSource::open(a.iface));
  warn_if_orphaned(a.iface);
  Signals signals;
  using clock = std::chrono::steady_clock;
  const auto end =
      a.duration > 0
          ? clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(a.duration))
          : clock::time_point::max();
  uint64_t printed = 0;
  const EventSource::Sink print = [&](const EventRecord& r) {
    if (a.json)
      fmt::print("{}\n", event_json(r).dump());
    else
      fmt::print("{}\n", event_text(r));
    std::fflush(stdout);  // a line as it happens, also into a pipe
    ++printed;
    return a.count == 0 || printed < a.count;
  };
  while (!Signals::stopped() && (a.count == 0 || printed < a.count)) {
    const auto now = clock::now();
    if (now >= end) break;
    const auto wait = std::min<clock::duration>(end - now, std::chrono::milliseconds(500));
    LV_TRY(
        src->poll(std::chrono::duration_cast<std::chrono::milliseconds>(wait) + std::chrono::milliseconds(1), print));
  }
  return {};
}

}  // namespace levee::cli
