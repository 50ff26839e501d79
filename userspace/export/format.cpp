#include "export/format.hpp"

#include <fmt/format.h>

#include "core/reasons.hpp"
#include "core/units.hpp"

namespace levee {

std::string group_digits(uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

nlohmann::json stats_json(const std::string& iface, const Counters& c) {
  using nlohmann::json;
  const lv_counter rx = c.received(), pass = c.passed(), drop = c.dropped();
  json j = {{"interface", iface},
            {"rx_packets", rx.packets},       {"rx_bytes", rx.bytes},
            {"passed_packets", pass.packets}, {"passed_bytes", pass.bytes},
            {"dropped_packets", drop.packets}, {"dropped_bytes", drop.bytes}};
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
  return j;
}

std::string stats_text(const std::string& iface, const Counters& c) {
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
  return out;
}

std::string rates_line(const Counters& a, const Counters& b, double seconds) {
  auto rate = [&](uint64_t x, uint64_t y) {
    return format_si(static_cast<double>(y - x) / seconds);
  };
  std::string out = fmt::format("rx {:>6} pps  passed {:>6} pps  dropped {:>6} pps",
                                rate(a.received().packets, b.received().packets),
                                rate(a.passed().packets, b.passed().packets),
                                rate(a.dropped().packets, b.dropped().packets));
  std::string detail;
  for (const auto& r : kReasons) {
    if (!lv_reason_drops(r.id)) continue;
    uint64_t d = b.by_reason[r.id].packets - a.by_reason[r.id].packets;
    if (d) detail += fmt::format("{}{} {}", detail.empty() ? "" : ", ", r.name, rate(0, d));
  }
  if (!detail.empty()) out += "  (" + detail + ")";
  return out;
}

nlohmann::json status_json(const std::vector<IfaceStatus>& all) {
  using nlohmann::json;
  json list = json::array();
  for (const auto& s : all) {
    list.push_back({{"interface", s.iface},
                    {"ifindex", s.ifindex},
                    {"attached", !s.defunct},
                    {"other_netns", s.other_netns},
                    {"mode", s.mode},
                    {"prog_id", s.prog_id},
                    {"link_id", s.link_id},
                    {"rate", s.limits.rate},
                    {"burst", s.limits.burst},
                    {"effective_rate", s.effective_rate},
                    {"prefix4", s.limits.prefix4},
                    {"prefix6", s.limits.prefix6},
                    {"fast_reject", s.fast_reject},
                    {"policy_generation", s.generation},
                    {"max_sources", s.max_sources},
                    {"sources", s.sources}});
  }
  return json{{"interfaces", list}};
}

std::string status_text(const std::vector<IfaceStatus>& all) {
  if (all.empty()) return "no interface is attached\n";
  std::string out;
  for (const auto& s : all) {
    if (s.defunct)
      out += fmt::format("{}: interface gone, levee pins left behind (clear with: levee detach {})\n", s.iface,
                         s.iface);
    else if (s.other_netns)
      out += fmt::format("{}: attached in another network namespace (ifindex {}), program {}\n", s.iface,
                         s.ifindex, s.prog_id);
    else
      out += fmt::format("{}: {} mode, program {}\n", s.iface, s.mode, s.prog_id);
    out += fmt::format("  limit    {} pps, burst {} per source (IPv4 /{}, IPv6 /{})\n", group_digits(s.limits.rate),
                       group_digits(s.limits.burst), s.limits.prefix4, s.limits.prefix6);
    out += fmt::format("  sources  {} tracked of {}\n", group_digits(s.sources), group_digits(s.max_sources));
  }
  return out;
}

}  // namespace levee
