#include "export/render_stats.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/reasons.hpp"
#include "core/units.hpp"
#include "export/render_units.hpp"

namespace levee {

nlohmann::json stats_json(const std::string& iface, const Counters& c, const ClassNames& class_names) {
  using nlohmann::json;
  const lv_counter rx = c.received(), pass = c.passed(), drop = c.dropped();
  json j = {{"interface", iface},         {"rx_packets", rx.packets},
            {"rx_bytes", rx.bytes},       {"passed_packets", pass.packets},
            {"passed_bytes", pass.bytes}, {"dropped_packets", drop.packets},
            {"dropped_bytes", drop.bytes}};
  json passed = json::object(), dropped = json::object();
  json passed_b = json::object(), dropped_b = json::object();
  for (const auto& r : kReasons) {
    const lv_counter& v = c.by_reason[r.id];
    std::string name(r.name);
    if (lv_reason_drops(r.id)) {
      dropped[name] = v.packets;
      dropped_b[name] = v.bytes;
    } else {
      passed[name] = v.packets;
      passed_b[name] = v.bytes;
    }
  }
  j["passed"] = passed;
  j["dropped"] = dropped;
  j["bytes"] = {{"passed", passed_b}, {"dropped", dropped_b}};
  json would = json::object(), would_b = json::object();
  for (const auto& r : kReasons) {
    if (!would_drop_reason(r.id)) continue;
    would[std::string(r.name)] = c.would[r.id].packets;
    would_b[std::string(r.name)] = c.would[r.id].bytes;
  }
  j["would_drop"] = would;
  j["would_drop_bytes"] = would_b;
  json handoff = json::object();
  for (unsigned h = 0; h < LV_HO_MAX; ++h) handoff[handoff_result_name(h)] = c.handoff[h];
  j["syn_handoffs"] = handoff;
  j["known_good"] = {{"marks_capped", c.marks_capped}};
  json classes = json::object();
  for (const auto& [name, id] : class_names) {
    const lv_class_counters& k = c.by_class[id & (LV_MAX_CLASSES - 1)];
    classes[name] = counts_json(k.passed.packets, k.passed.bytes, k.dropped.packets, k.dropped.bytes);
    classes[name]["id"] = id;
  }
  j["classes"] = classes;
  return j;
}

std::string stats_text(const std::string& iface, const Counters& c, const ClassNames& class_names, bool monitoring) {
  std::string out = fmt::format("{:<20} {:>18} {:>18}\n", iface, "packets", "bytes");
  auto row = [&](std::string_view label, const lv_counter& v) {
    out += fmt::format("{:<20} {:>18} {:>18}\n", label, group_digits(v.packets), group_digits(v.bytes));
  };
  row("received", c.received());
  row("passed", c.passed());
  for (const auto& r : kReasons)
    if (!lv_reason_drops(r.id)) row(fmt::format("  {}", r.name), c.by_reason[r.id]);
  row("dropped", c.dropped());
  for (const auto& r : kReasons)
    if (lv_reason_drops(r.id)) row(fmt::format("  {}", r.name), c.by_reason[r.id]);
  // Passed under `monitored`, counted here under the reason they would have been dropped for.
  if (monitoring || c.would_drop().packets) {
    out += "\nwould drop (monitor mode)\n";
    for (const auto& r : kReasons)
      if (would_drop_reason(r.id)) row(fmt::format("  {}", r.name), c.would[r.id]);
  }
  // What the tc program made of the ACKs passed as `proxied`: shown once there were any.
  if (c.by_reason[LV_R_PROXIED].packets) {
    out += "\nSYN proxy handoffs   packets\n";
    for (unsigned h = 0; h < LV_HO_MAX; ++h)
      out += fmt::format("  {:<18} {:>18}\n", handoff_result_name(h), group_digits(c.handoff[h]));
  }
  if (class_names.size() > 1) {
    size_t w = 20;
    for (const auto& n : class_names) w = std::max(w, n.first.size() + 1);
    out += fmt::format("\n{:<{}} {:>18} {:>18} {:>18} {:>18}\n", "class", w, "passed packets", "passed bytes",
                       "dropped packets", "dropped bytes");
    for (const auto& [name, id] : class_names) {
      const lv_class_counters& k = c.by_class[id & (LV_MAX_CLASSES - 1)];
      out += fmt::format("{:<{}} {:>18} {:>18} {:>18} {:>18}\n", name, w, group_digits(k.passed.packets),
                         group_digits(k.passed.bytes), group_digits(k.dropped.packets), group_digits(k.dropped.bytes));
    }
  }
  return out;
}

std::string rates_line(const Counters& a, const Counters& b, double seconds) {
  auto rate = [&](uint64_t x, uint64_t y) { return format_si(static_cast<double>(y - x) / seconds); };
  std::string out =
      fmt::format("rx {:>6} pps  passed {:>6} pps  dropped {:>6} pps", rate(a.received().packets, b.received().packets),
                  rate(a.passed().packets, b.passed().packets), rate(a.dropped().packets, b.dropped().packets));
  std::string detail;
  for (const auto& r : kReasons) {
    if (!lv_reason_drops(r.id)) continue;
    uint64_t d = b.by_reason[r.id].packets - a.by_reason[r.id].packets;
    if (d) detail += fmt::format("{}{} {}", detail.empty() ? "" : ", ", r.name, rate(0, d));
  }
  if (!detail.empty()) out += "  (" + detail + ")";
  if (const uint64_t w = b.would_drop().packets - a.would_drop().packets)
    out += fmt::format("  would drop {} pps", rate(0, w));
  return out;
}

}  // namespace levee
