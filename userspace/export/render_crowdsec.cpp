#include "export/render_crowdsec.hpp"

#include <fmt/format.h>

#include "export/render_units.hpp"

namespace levee {

nlohmann::json bouncer_json(const IfaceStatus& s) {
  if (!s.bouncer) return nullptr;
  const IfaceStatus::Bouncer& b = *s.bouncer;
  return {{"up", b.up},
          {"for_s", static_cast<double>(b.for_ns) / 1e9},
          {"pull_errors", b.pull_errors},
          {"pull_timeouts", b.pull_timeouts},
          {"last_error", b.last_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(b.last_error)}};
}

std::string bouncer_text(const IfaceStatus& s) {
  if (!s.bouncer) return " (levee run's bouncer: see its metrics)";
  const IfaceStatus::Bouncer& b = *s.bouncer;
  if (b.up) return fmt::format("; pulls working for {}", format_remaining(b.for_ns));
  return fmt::format("; pulls failing for {} ({} failed, {} at their deadline): {}", format_remaining(b.for_ns),
                     group_digits(b.pull_errors), group_digits(b.pull_timeouts), b.last_error);
}

}  // namespace levee
