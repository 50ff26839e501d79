#include "policy/class_change.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace levee {

Result<ClassSpec> changed_class(const ClassSpec& before, const LimitChange& ch) {
  ClassSpec c = before;
  if (ch.rate) c.packets.rate = *ch.rate;
  if (ch.burst) c.packets.burst = *ch.burst;
  if (ch.bytes_rate) c.bytes.rate = *ch.bytes_rate;
  if (ch.bytes_rate == 0u) c.bytes = {};  // off: rate and burst
  if (ch.bytes_burst) c.bytes.burst = *ch.bytes_burst;
  if (ch.prefix4) c.prefix4 = *ch.prefix4;
  if (ch.prefix6) c.prefix6 = *ch.prefix6;
  // The autopilot or none: the budget goes (a budget wins over the autopilot).
  if (ch.admission) {
    c.admission = *ch.admission;
    c.new_sources = {};
  }
  if (ch.escalate) c.escalate = *ch.escalate;
  // A default given by the file follows the value it derives from; one chosen stays.
  if (ch.new_sources) {
    const bool default_burst =
        !before.new_sources.set() || before.new_sources.burst == default_new_sources_burst(before.new_sources.rate);
    c.new_sources.rate = *ch.new_sources;
    if (*ch.new_sources == 0)
      c.new_sources = {};
    else if (default_burst)
      c.new_sources.burst = default_new_sources_burst(*ch.new_sources);
  }
  if (ch.new_sources_burst) {
    if (!c.new_sources.set())
      return usage_error(fmt::format("class '{}' has no new-source limit for --new-sources-burst", c.name),
                         "give --new-sources too");
    c.new_sources.burst = *ch.new_sources_burst;
  }
  if (ch.ban_ns) {
    if (*ch.ban_ns == 0) {
      c.ban = {};
    } else {
      if (!before.ban.set() || before.ban.max_ns == std::max(before.ban.ban_ns, kHourNs)) c.ban.max_ns = 0;
      c.ban.ban_ns = *ch.ban_ns;
    }
  }
  for (auto [given, field, opt] : {std::tuple{&ch.ban_max_ns, &BanSpec::max_ns, "--ban-max"},
                                   std::tuple{&ch.forget_ns, &BanSpec::forget_ns, "--forget-after"}}) {
    if (!*given) continue;
    if (!c.ban.set())
      return usage_error(fmt::format("class '{}' bans no source: {} needs a ban", c.name, opt), "give --ban too");
    c.ban.*field = **given;
  }
  return c;
}

}  // namespace levee
