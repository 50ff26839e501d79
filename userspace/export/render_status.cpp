#include "export/render_status.hpp"

#include <fmt/format.h>

#include "export/render_policy.hpp"
#include "export/render_units.hpp"
#include "policy/compile.hpp"
#include "policy/limits.hpp"

namespace levee {
namespace {

using nlohmann::json;

// A class's id: from the status, or its position where a status carries none.
unsigned class_id_at(const IfaceStatus& s, size_t i) {
  return i < s.class_ids.size() ? s.class_ids[i] : static_cast<unsigned>(i);
}
// A class's limits beyond its own: null where it has none.
json network_json(const ClassSpec& c) {
  if (!c.network.set()) return nullptr;
  return {{"prefix4", c.network.prefix4},       {"prefix6", c.network.prefix6},
          {"rate", c.network.packets.rate},     {"burst", c.network.packets.burst},
          {"bytes_rate", c.network.bytes.rate}, {"bytes_burst", c.network.bytes.burst}};
}

json total_json(const ClassSpec& c, const lv_class& k) {
  if (!c.total.set()) return nullptr;
  return {{"rate", c.total.packets.rate},
          {"burst", c.total.packets.burst},
          {"bytes_rate", c.total.bytes.rate},
          {"bytes_burst", c.total.bytes.burst},
          {"lease_ns", k.lease_ns}};
}

json ban_json(const ClassSpec& c) {
  if (!c.ban.set()) return nullptr;
  return {{"ban_ms", c.ban.ban_ns / kNsPerMs},
          {"ban_max_ms", c.ban.max_or_default() / kNsPerMs},
          {"forget_after_ms", c.ban.forget_or_default() / kNsPerMs},
          {"scope", c.ban.all_classes ? "all" : "class"}};
}

// Class i of the status (in first-match order).
json class_json(const IfaceStatus& s, size_t i) {
  const lv_class& k = s.classes[i];
  const ClassSpec c = class_of(k);
  return {{"name", c.name},
          {"id", class_id_at(s, i)},
          {"rate", c.packets.rate},
          {"burst", c.packets.burst},
          {"effective_rate", effective_rate(k)},
          {"bytes_rate", c.bytes.rate},
          {"bytes_burst", c.bytes.burst},
          {"prefix4", c.prefix4},
          {"prefix6", c.prefix6},
          {"fast_reject", (k.flags & LV_CLASS_FAST_REJECT) != 0},
          {"monitor", (k.flags & LV_CLASS_MONITOR) != 0},
          {"own_mode", c.monitor ? "monitor" : "enforce"},
          {"new_sources", c.new_sources.rate},
          {"new_sources_burst", c.new_sources.burst},
          {"admitted", i < s.admitted.size() ? s.admitted[i] : 0},
          {"network", network_json(c)},
          {"total", total_json(c, k)},
          {"ban", ban_json(c)}};
}

json overrides_json(const IfaceStatus& s) {
  json overrides = json::array();
  for (const lv_override& o : s.overrides)
    overrides.push_back({{"name", name_of(o.name)},
                         {"rate", o.pkt.rate},
                         {"burst", o.pkt.burst},
                         {"bytes_rate", o.bytes.rate},
                         {"bytes_burst", o.bytes.burst}});
  return overrides;
}

// One interface that could be read.
json iface_json(const IfaceStatus& s) {
  json classes = json::array();
  size_t monitoring = 0;
  for (size_t i = 0; i < s.classes.size(); ++i) {
    classes.push_back(class_json(s, i));
    monitoring += (s.classes[i].flags & LV_CLASS_MONITOR) != 0;
  }
  json e = {{"interface", s.iface},
            {"ifindex", s.ifindex},
            {"attached", !s.defunct},
            {"other_netns", s.other_netns},
            {"mode", s.mode},
            {"prog_id", s.prog_id},
            {"link_id", s.link_id},
            {"source", s.source},
            {"classes", classes},
            {"overrides", overrides_json(s)},
            {"lists", {{"allow", s.allow}, {"deny", s.deny}, {"override", s.override_entries}}},
            {"policy_generation", s.generation},
            {"max_sources", s.max_sources},
            {"sources", s.sources},
            {"networks", s.networks},
            {"monitor", monitor_mode(s, true)},
            {"monitor_classes", monitoring},
            {"monitor_switch", (s.policy_flags & LV_POL_MONITOR) != 0},
            {"deny_in_monitor", (s.policy_flags & LV_POL_MONITOR_DENY) ? "drop" : "count"},
            {"when_full", (s.policy_flags & LV_POL_REFUSE_FULL) ? "refuse" : "evict"},
            {"full_at", (s.policy_flags & LV_POL_REFUSE_FULL) ? json(s.full_at) : json(nullptr)},
            {"bans", s.bans_active},
            {"ban_records", s.ban_records},
            {"max_bans", s.max_bans}};
  // The default class (the last) at the top level: the --rate/--burst shorthand.
  if (!classes.empty())
    for (const char* k : {"rate", "burst", "effective_rate", "prefix4", "prefix6", "fast_reject"})
      e[k] = classes.back()[k];
  return e;
}

}  // namespace

std::string monitor_mode(const IfaceStatus& s, bool json) {
  size_t n = 0;
  for (const lv_class& k : s.classes) n += (k.flags & LV_CLASS_MONITOR) != 0;
  if ((s.policy_flags & LV_POL_MONITOR) || (n && n == s.classes.size())) return "monitor";
  if (n == 0) return "enforce";
  return json ? "mixed" : fmt::format("mixed: {} class{} monitor{}", n, n == 1 ? "" : "es", n == 1 ? "s" : "");
}

json status_json(const std::vector<IfaceStatus>& all) {
  json list = json::array();
  for (const auto& s : all) {
    if (!s.problem.empty())
      list.push_back({{"interface", s.iface}, {"problem", s.problem}});
    else
      list.push_back(iface_json(s));
  }
  return json{{"interfaces", list}};
}

std::string status_text(const std::vector<IfaceStatus>& all) {
  if (all.empty()) return "no interface is attached\n";
  std::string out;
  for (const auto& s : all) {
    if (!s.problem.empty()) {
      out += fmt::format("{}: cannot be read: {}\n", s.iface, s.problem);
      continue;
    }
    if (s.defunct)
      out +=
          fmt::format("{}: interface gone, levee pins left behind (clear with: levee detach {})\n", s.iface, s.iface);
    else if (s.other_netns)
      out += fmt::format("{}: attached in another network namespace (ifindex {}), program {}\n", s.iface, s.ifindex,
                         s.prog_id);
    else
      out += fmt::format("{}: {} mode, program {}, policy from {}\n", s.iface, s.mode, s.prog_id, s.source);
    for (size_t i = 0; i < s.classes.size(); ++i) {
      const ClassSpec c = class_of(s.classes[i]);
      std::string admitted;
      if (c.new_sources.set() && i < s.admitted.size())
        admitted = fmt::format("; {} admitted", group_digits(s.admitted[i]));
      out += fmt::format("  class {:<14} {}{}\n", c.name, describe_limits(c), admitted);
    }
    for (const lv_override& o : s.overrides) {
      std::string in;
      size_t n = 0;
      for (size_t i = 0; i < s.classes.size(); ++i)
        if ((o.classes >> class_id_at(s, i)) & 1) in += (n++ ? ", " : "") + name_of(s.classes[i].name);
      out += override_line(name_of(o.name), {o.pkt.rate, o.pkt.burst}, {o.bytes.rate, o.bytes.burst},
                           n == s.classes.size() ? "every class" : "classes " + in);
    }
    if (s.allow + s.deny + s.override_entries) out += lists_line(s.allow, s.deny, s.override_entries);
    if (s.defunct) continue;
    std::string mode = monitor_mode(s);
    if (s.policy_flags & LV_POL_MONITOR) mode += " (the interface's switch: levee set --mode enforce)";
    if (mode != "enforce")
      mode += (s.policy_flags & LV_POL_MONITOR_DENY) ? "; the deny list drops" : "; the deny list counts";
    out += fmt::format("  mode     {}\n", mode);
    out += fmt::format("  sources  {} tracked of {}, {} network{}; when full: {}\n", group_digits(s.sources),
                       group_digits(s.max_sources), group_digits(s.networks), s.networks == 1 ? "" : "s",
                       (s.policy_flags & LV_POL_REFUSE_FULL)
                           ? fmt::format("refuse new sources (at {})", group_digits(s.full_at))
                           : std::string("evict the least recently seen"));
    out += fmt::format("  bans     {} active, {} records of {}\n", group_digits(s.bans_active),
                       group_digits(s.ban_records), group_digits(s.max_bans));
  }
  return out;
}

}  // namespace levee
