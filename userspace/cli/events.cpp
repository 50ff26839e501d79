// events.cpp - `levee events IFACE`: the interface's event log, as lines or JSON lines,
// until --count events, --duration seconds, or SIGINT/SIGTERM.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "bpf/events.hpp"
#include "cli/commands.hpp"
#include "core/signals.hpp"
#include "export/events.hpp"

namespace levee::cli {

Status events(const EventsArgs& a) {
  if (a.duration < 0) return usage_error("--duration is negative", "give seconds, e.g. 10 or 0.5");
  LV_TRY_ASSIGN(auto src, EventSource::open(a.iface));
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
