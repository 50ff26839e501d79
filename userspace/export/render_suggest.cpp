#include "export/render_suggest.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/units.hpp"
#include "export/render_units.hpp"
#include "policy/config_edit.hpp"

namespace levee {
namespace {

using nlohmann::json;

json spread_json(const Spread& s) { return {{"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}}; }

json suggested_json(const std::optional<Suggested>& s) {
  return s ? json{{"value", s->value}, {"covers", s->covers}} : json(nullptr);
}

// "96 %", never "100 %" for a share short of all.
std::string share(double covers) {
  const double pct = covers * 100;
  return fmt::format("{:.0f} %", covers < 1 ? std::min(pct, 99.0) : 100.0);
}

std::string row(const char* what, const Spread& s, const char* key, const std::optional<Suggested>& v, const char* of) {
  std::string out = fmt::format("  {:<13} {:>8} {:>8} {:>8} {:>8}", what, format_si(s.p50), format_si(s.p90),
                                format_si(s.p99), format_si(s.max));
  if (v)
    out += fmt::format("   {:<24} {} of {}", fmt::format("{} = {}", key, config_count(v->value)), share(v->covers), of);
  return out + "\n";
}

}  // namespace

json suggest_json(const SuggestReport& r, const ConfigDiff* diff, const std::string& config) {
  json classes = json::array();
  for (const ClassSuggestion& c : r.classes) {
    json suggest = nullptr;
    if (c.rate)
      suggest = {{"rate", suggested_json(c.rate)},
                 {"burst", suggested_json(c.burst)},
                 {"bytes_rate", suggested_json(c.bytes_rate)},
                 {"bytes_burst", suggested_json(c.bytes_burst)},
                 {"new_sources", c.new_sources_kept ? json(nullptr) : suggested_json(c.new_sources)}};
    classes.push_back({{"name", c.name},
                       {"admission", admission_name(c.admission)},
                       {"sources", c.sources},
                       {"packets_per_s", spread_json(c.pps)},
                       {"bytes_per_s", spread_json(c.bps)},
                       {"burst_packets", spread_json(c.burst_packets)},
                       {"burst_bytes", spread_json(c.burst_bytes)},
                       {"arrivals", c.arrivals},
                       {"arrivals_per_s", c.arrivals_per_s},
                       {"arrivals_peak_per_s", c.arrivals_peak_per_s},
                       {"suggest", suggest}});
  }
  json j = {{"interface", r.iface}, {"window_s", r.window_s},         {"interval_s", r.interval_s},
            {"walks", r.walks},     {"headroom", r.options.headroom}, {"min_sources", r.options.min_sources},
            {"classes", classes}};
  if (diff) j["config"] = {{"file", config}, {"diff", diff->diff}, {"notes", diff->notes}};
  return j;
}

std::string suggest_text(const SuggestReport& r) {
  std::string out = fmt::format("{}: limits from {:.1f} s of traffic ({} walks {} s apart), headroom {}x\n", r.iface,
                                r.window_s, r.walks, r.interval_s, r.options.headroom);
  for (const ClassSuggestion& c : r.classes) {
    out +=
        fmt::format("\nclass {}: {} source{} sent, {} new ({:.1f}/s, peak {:.1f}/s)\n", c.name, group_digits(c.sources),
                    c.sources == 1 ? "" : "s", group_digits(c.arrivals), c.arrivals_per_s, c.arrivals_peak_per_s);
    if (!c.sources) {
      out += "  no traffic in the window: nothing to suggest\n";
      continue;
    }
    out += fmt::format("  {:<13} {:>8} {:>8} {:>8} {:>8}{}\n", "per source", "p50", "p90", "p99", "max",
                       c.rate ? "   suggested                covers" : "");
    out += row("packets/s", c.pps, "rate", c.rate, "sources");
    out += row("packets/int", c.burst_packets, "burst", c.burst, "sources");
    out += row("bytes/s", c.bps, "bytes_rate", c.bytes_rate, "sources");
    out += row("bytes/int", c.burst_bytes, "bytes_burst", c.bytes_burst, "sources");
    if (c.new_sources && c.new_sources_kept)
      out += fmt::format(
          "  {:<13} {:>8} {:>8} {:>8} {:>8}   {:<24} kept: {} (--new-sources-budget: {})\n", "new/s (class)", "", "",
          "", format_si(c.arrivals_peak_per_s), fmt::format("new_sources = \"{}\"", admission_name(c.admission)),
          c.admission == Admission::Auto ? "the autopilot" : "no budget", config_count(c.new_sources->value));
    else if (c.new_sources)
      out += fmt::format("  {:<13} {:>8} {:>8} {:>8} {:>8}   {:<24} {} of intervals\n", "new/s (class)", "", "", "",
                         format_si(c.arrivals_peak_per_s),
                         fmt::format("new_sources = {}", config_count(c.new_sources->value)),
                         share(c.new_sources->covers));
    else
      out += fmt::format("  too few sources to suggest limits: {} sent, {} needed (--min-sources)\n",
                         group_digits(c.sources), group_digits(r.options.min_sources));
  }
  out +=
      "\npackets/int and bytes/int: the most a source sent in one interval. Sources that sent\n"
      "nothing in the window are left out. Counted are packets offered: passed and dropped.\n";
  return out;
}

}  // namespace levee
