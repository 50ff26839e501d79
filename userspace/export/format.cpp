#include "export/format.hpp"

#include <fmt/format.h>

#include "core/reasons.hpp"
#include "core/units.hpp"
#include "policy/policy.hpp"

#include <cstring>

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

nlohmann::json stats_json(const std::string& iface, const Counters& c, const std::vector<std::string>& class_names) {
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
  json classes = json::object();
  for (size_t i = 0; i < class_names.size() && i < LV_MAX_CLASSES; ++i) {
    const lv_class_counters& k = c.by_class[i];
    classes[class_names[i]] = {{"passed_packets", k.passed.packets}, {"passed_bytes", k.passed.bytes},
                               {"dropped_packets", k.dropped.packets}, {"dropped_bytes", k.dropped.bytes}};
  }
  j["classes"] = classes;
  return j;
}

std::string stats_text(const std::string& iface, const Counters& c, const std::vector<std::string>& class_names) {
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
  if (class_names.size() > 1) {
    out += fmt::format("\n{:<20} {:>18} {:>18} {:>18} {:>18}\n", "class", "passed packets", "passed bytes",
                       "dropped packets", "dropped bytes");
    for (size_t i = 0; i < class_names.size() && i < LV_MAX_CLASSES; ++i) {
      const lv_class_counters& k = c.by_class[i];
      out += fmt::format("{:<20} {:>18} {:>18} {:>18} {:>18}\n", class_names[i], group_digits(k.passed.packets),
                         group_digits(k.passed.bytes), group_digits(k.dropped.packets), group_digits(k.dropped.bytes));
    }
  }
  return out;
}

std::string describe_limits(const ClassSpec& c) {
  std::string s;
  if (c.packets.set()) s += fmt::format("{} pps, burst {}", format_count(c.packets.rate), format_count(c.packets.burst));
  if (c.bytes.set())
    s += fmt::format("{}{} B/s, burst {} B", s.empty() ? "" : "; ", format_count(c.bytes.rate), format_count(c.bytes.burst));
  if (s.empty()) s = "no limit";
  return s + fmt::format("; per source /{} (IPv4), /{} (IPv6)", c.prefix4, c.prefix6);
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
    json classes = json::array();
    for (const lv_class& k : s.classes) {
      const ClassSpec c = class_of(k);
      classes.push_back({{"name", c.name},
                         {"rate", c.packets.rate},
                         {"burst", c.packets.burst},
                         {"effective_rate", effective_rate(k)},
                         {"bytes_rate", c.bytes.rate},
                         {"bytes_burst", c.bytes.burst},
                         {"prefix4", c.prefix4},
                         {"prefix6", c.prefix6},
                         {"fast_reject", (k.flags & LV_CLASS_FAST_REJECT) != 0}});
    }
    json overrides = json::array();
    for (const lv_override& o : s.overrides)
      overrides.push_back({{"name", std::string(o.name, strnlen(o.name, LV_NAME_LEN))},
                           {"rate", o.pkt.rate},
                           {"burst", o.pkt.burst},
                           {"bytes_rate", o.bytes.rate},
                           {"bytes_burst", o.bytes.burst}});
    json e = {{"interface", s.iface},
              {"ifindex", s.ifindex},
              {"attached", !s.defunct},
              {"other_netns", s.other_netns},
              {"mode", s.mode},
              {"prog_id", s.prog_id},
              {"link_id", s.link_id},
              {"source", s.source},
              {"classes", classes},
              {"overrides", overrides},
              {"lists", {{"allow", s.allow}, {"deny", s.deny}, {"override", s.override_entries}}},
              {"policy_generation", s.generation},
              {"max_sources", s.max_sources},
              {"sources", s.sources}};
    // The default class (the last) at the top level: the --rate/--burst shorthand.
    if (!classes.empty())
      for (const char* k : {"rate", "burst", "effective_rate", "prefix4", "prefix6", "fast_reject"})
        e[k] = classes.back()[k];
    list.push_back(e);
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
      out += fmt::format("{}: {} mode, program {}, policy from {}\n", s.iface, s.mode, s.prog_id, s.source);
    for (const lv_class& k : s.classes) {
      const ClassSpec c = class_of(k);
      out += fmt::format("  class {:<14} {}\n", c.name, describe_limits(c));
    }
    if (s.allow + s.deny + s.override_entries)
      out += fmt::format("  lists    {} allow, {} deny, {} override entries\n", s.allow, s.deny, s.override_entries);
    out += fmt::format("  sources  {} tracked of {}\n", group_digits(s.sources), group_digits(s.max_sources));
  }
  return out;
}

}  // namespace levee
