#include "export/render_status.hpp"

#include <fmt/format.h>

#include "core/units.hpp"
#include "datapath/maps.hpp"
#include "export/render_crowdsec.hpp"
#include "export/render_policy.hpp"
#include "export/render_synauth.hpp"
#include "export/render_units.hpp"
#include "guard.h"
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

// The escalated networks of class i, in the order the walk found them.
std::vector<const IfaceStatus::Escalation*> escalated_in(const IfaceStatus& s, size_t i) {
  std::vector<const IfaceStatus::Escalation*> out;
  for (const IfaceStatus::Escalation& e : s.escalated)
    if (e.key.class_id == class_id_at(s, i)) out.push_back(&e);
  return out;
}

// An escalated network's address, with the prefix its class watches.
std::string watched_network(const IfaceStatus::Escalation& e, const lv_class& k) {
  const bool v4 = lv_key_family(e.key.family) == LV_AF_INET;
  return key_address(e.key.addr, e.key.family, v4 ? k.autop.watch_prefix4 : k.autop.watch_prefix6);
}

uint64_t ago(uint64_t then, uint64_t now) { return now > then ? now - then : 0; }

json escalated_json(const IfaceStatus& s, size_t i) {
  json list = json::array();
  for (const IfaceStatus::Escalation* e : escalated_in(s, i))
    list.push_back({{"network", watched_network(*e, s.classes[i])},
                    {"since_ms", ago(e->watch.escalated_ns, s.now_ns) / kNsPerMs},
                    {"dropped_packets", LV_COUNT_PACKETS(e->watch.dropped)}});
  return list;
}

// syn_auth = "auto" in the class: "challenging" while engaged, else "ready"; null
// where the class has no such thing.
json syn_auth_state(const IfaceStatus& s, size_t i, const AutopilotView& v) {
  if (!(s.classes[i].flags & LV_CLASS_SYN_AUTO)) return nullptr;
  return v.state == AutopilotView::Engaged ? "challenging" : "ready";
}

// The admission autopilot's figures; null where the class has none of it.
json admission_json(const IfaceStatus& s, size_t i, const AutopilotView& v) {
  const lv_guard& g = v.guard;
  const lv_auto& a = s.classes[i].autop;
  const bool on = v.admission == Admission::Auto;
  const bool engaged = v.state == AutopilotView::Engaged;
  return {{"admission", admission_name(v.admission)},
          {"state", on ? json(autopilot_state_name(v.state)) : json(nullptr)},
          {"engaged_since_ms", engaged ? json(ago(g.engaged_ns, s.now_ns) / kNsPerMs) : json(nullptr)},
          {"threshold", on ? json(v.threshold) : json(nullptr)},
          {"baseline", on ? json(static_cast<double>(g.baseline) / (1u << LV_GUARD_FP)) : json(nullptr)},
          {"floor", on ? json(a.floor) : json(nullptr)},
          {"margin", on ? json(a.margin) : json(nullptr)},
          {"sustain_ms", on ? json(a.sustain_ns / kNsPerMs) : json(nullptr)},
          {"syn_auth", syn_auth_state(s, i, v)},
          {"engagements", g.engagements},
          {"arrivals", g.arrivals},
          {"probation", g.probation},
          {"promoted", g.promoted},
          {"known_good_admitted", g.good_admitted}};
}

// The class's autopilot: admission (its state and counts) and escalation.
json autopilot_json(const IfaceStatus& s, size_t i) {
  const lv_class& k = s.classes[i];
  const AutopilotView v = autopilot_view(s, i);
  json a = admission_json(s, i, v);
  a["monitor"] = (k.flags & LV_CLASS_MONITOR) != 0;
  a["release_ms"] = k.autop.release_ns ? json(k.autop.release_ns / kNsPerMs) : json(nullptr);
  a["escalate"] = v.escalates;
  a["network_prefix4"] = v.escalates ? json(k.autop.watch_prefix4) : json(nullptr);
  a["network_prefix6"] = v.escalates ? json(k.autop.watch_prefix6) : json(nullptr);
  a["network_rate"] = v.escalates ? json(k.autop.watch.rate) : json(nullptr);
  a["network_burst"] = v.escalates ? json(k.autop.watch.burst) : json(nullptr);
  a["escalations"] = v.guard.escalations;
  a["escalated"] = escalated_json(s, i);
  return a;
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
          {"ban", ban_json(c)},
          {"autopilot", autopilot_json(s, i)}};
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
            {"xdp_mode", s.mode},
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
            {"mode", monitor_mode(s, true)},
            {"monitor_classes", monitoring},
            {"monitor_switch", (s.policy_flags & LV_POL_MONITOR) != 0},
            {"deny_in_monitor", (s.policy_flags & LV_POL_MONITOR_DENY) ? "drop" : "count"},
            {"when_full", (s.policy_flags & LV_POL_REFUSE_FULL) ? "refuse" : "evict"},
            {"full_at", (s.policy_flags & LV_POL_REFUSE_FULL) ? json(s.full_at) : json(nullptr)},
            {"bans", s.bans_active},
            {"ban_records", s.ban_records},
            {"max_bans", s.max_bans},
            {"crowdsec", {{"held", s.crowdsec}, {"in_force", s.crowdsec_in_force}, {"bouncer", bouncer_json(s)}}},
            {"crowdsec_publish", s.publish ? json{{"machine", s.publish->machine},
                                                  {"up", s.publish->up},
                                                  {"published", s.publish->published},
                                                  {"errors", s.publish->errors},
                                                  {"queued", s.publish->queued},
                                                  {"dropped", s.publish->dropped}}
                                           : json(nullptr)},
            {"probation", s.probation},
            {"watched", s.watched},
            {"escalated", s.escalated.size()},
            {"syn_auth", syn_auth_json(s)},
            {"known_good", known_good_json(s)}};
  // The default class (the last) at the top level: the --rate/--burst shorthand.
  if (!classes.empty())
    for (const char* k : {"rate", "burst", "effective_rate", "prefix4", "prefix6", "fast_reject"})
      e[k] = classes.back()[k];
  return e;
}

// "engaged since 12.3 s ago", "calm (release pending)", ...
std::string admission_state_text(const IfaceStatus& s, size_t i, const AutopilotView& v) {
  switch (v.state) {
    case AutopilotView::Calm:
      return "calm";
    case AutopilotView::Abnormal:
      return "abnormal (new sources admitted on probation)";
    case AutopilotView::Engaged:
      return fmt::format("{} since {} ago{}",
                         (s.classes[i].flags & LV_CLASS_MONITOR) ? "would be engaged (monitor)" : "engaged",
                         format_remaining(ago(v.guard.engaged_ns, s.now_ns)),
                         (s.classes[i].flags & LV_CLASS_SYN_AUTO) ? ", challenging new TCP sources' SYNs" : "");
    case AutopilotView::ReleasePending:
      return "calm (release pending)";
    default:
      return "off";
  }
}

// The learnt baseline (fixed point, LV_GUARD_FP) with one decimal: "2,012.4".
std::string baseline_text(uint64_t baseline) {
  const uint64_t tenths = (baseline * 10 + (1u << (LV_GUARD_FP - 1))) >> LV_GUARD_FP;
  return fmt::format("{}.{}", group_digits(tenths / 10), tenths % 10);
}

// "    admission   auto, calm: threshold 1,000 new sources/s (baseline 12.5/s, floor
// 1,000/s)" and its counts, or the class's other admission.
std::string admission_text(const IfaceStatus& s, size_t i, const AutopilotView& v) {
  constexpr const char* kIndent = "                ";
  if (v.admission == Admission::Off) return "    admission   off: every new source gets state\n";
  if (v.admission == Admission::Budget) {
    const lv_limit& b = s.classes[i].admit;
    return fmt::format("    admission   budget: {} new sources/s, burst {}\n", format_count(b.rate),
                       format_count(b.burst));
  }
  const lv_guard& g = v.guard;
  std::string out = fmt::format("    admission   auto, {}: threshold {} new sources/s (baseline {}/s, floor {}/s)\n",
                                admission_state_text(s, i, v), group_digits(v.threshold), baseline_text(g.baseline),
                                group_digits(s.classes[i].autop.floor));
  out += fmt::format(
      "{}{} engagement{}; {} arrivals while calm, {} admitted on probation, {} promoted, {} known-good let in\n",
      kIndent, group_digits(g.engagements), g.engagements == 1 ? "" : "s", group_digits(g.arrivals),
      group_digits(g.probation), group_digits(g.promoted), group_digits(g.good_admitted));
  return out;
}

// "    escalation  per /16 (IPv4), /32 (IPv6) over 32k pps, burst 6.4k: ..." and the
// networks escalated now, at most kListedEscalations of them.
std::string escalation_text(const IfaceStatus& s, size_t i, const AutopilotView& v) {
  constexpr size_t kListedEscalations = 20;
  constexpr const char* kIndent = "                ";
  if (!v.escalates)
    return v.escalate_wanted
               ? "    escalation  off: no per-source packet limit to scale (network_rate in [auto] gives one)\n"
               : "    escalation  off\n";
  const lv_class& k = s.classes[i];
  const std::vector<const IfaceStatus::Escalation*> now = escalated_in(s, i);
  std::string out = fmt::format(
      "    escalation  per /{} (IPv4), /{} (IPv6) over {} pps, burst {}: {} escalation{}, {} escalated now\n",
      k.autop.watch_prefix4, k.autop.watch_prefix6, format_count(k.autop.watch.rate), format_count(k.autop.watch.burst),
      group_digits(v.guard.escalations), v.guard.escalations == 1 ? "" : "s", group_digits(now.size()));
  for (size_t n = 0; n < now.size() && n < kListedEscalations; ++n) {
    const IfaceStatus::Escalation& e = *now[n];
    const uint32_t dropped = LV_COUNT_PACKETS(e.watch.dropped);
    out += fmt::format("{}{:<18} since {} ago, {} packet{} dropped\n", kIndent, watched_network(e, k),
                       format_remaining(ago(e.watch.escalated_ns, s.now_ns)), group_digits(dropped),
                       dropped == 1 ? "" : "s");
  }
  if (now.size() > kListedEscalations)
    out += fmt::format("{}and {} more\n", kIndent, group_digits(now.size() - kListedEscalations));
  return out;
}

// A class's line, then its autopilot's.
std::string class_text(const IfaceStatus& s, size_t i) {
  const ClassSpec c = class_of(s.classes[i]);
  std::string admitted;
  if (c.new_sources.set() && i < s.admitted.size())
    admitted = fmt::format("; {} admitted", group_digits(s.admitted[i]));
  std::string out = fmt::format("  class {:<14} {}{}\n", c.name, describe_limits(c), admitted);
  const AutopilotView v = autopilot_view(s, i);
  return out + admission_text(s, i, v) + escalation_text(s, i, v);
}

// The interface's mode, map, autopilot and bans (not for an interface that is gone).
std::string iface_tail_text(const IfaceStatus& s) {
  std::string mode = monitor_mode(s);
  if (s.policy_flags & LV_POL_MONITOR) mode += " (the interface's switch: levee set --mode enforce)";
  if (mode != "enforce")
    mode += (s.policy_flags & LV_POL_MONITOR_DENY) ? "; the deny list drops" : "; the deny list counts";
  std::string out = fmt::format("  mode     {}\n", mode);
  out += fmt::format("  sources  {} tracked of {}, {} network{}; when full: {}\n", group_digits(s.sources),
                     group_digits(s.max_sources), group_digits(s.networks), s.networks == 1 ? "" : "s",
                     (s.policy_flags & LV_POL_REFUSE_FULL)
                         ? fmt::format("refuse new sources (at {})", group_digits(s.full_at))
                         : std::string("evict the least recently seen"));
  bool autopilot = s.probation || s.watched || !s.escalated.empty();
  for (const lv_class& k : s.classes) autopilot |= (k.flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE)) != 0;
  if (autopilot)
    out += fmt::format("  auto     {} source{} on probation, {} network{} watched, {} escalated\n",
                       group_digits(s.probation), s.probation == 1 ? "" : "s", group_digits(s.watched),
                       s.watched == 1 ? "" : "s", group_digits(s.escalated.size()));
  out += fmt::format("  bans     {} active, {} records of {}\n", group_digits(s.bans_active),
                     group_digits(s.ban_records), group_digits(s.max_bans));
  out += syn_auth_text(s) + known_good_text(s);
  if (s.crowdsec || s.bouncer)
    out += fmt::format("  crowdsec {} decision{} held, {} in force{}\n", group_digits(s.crowdsec),
                       s.crowdsec == 1 ? "" : "s", group_digits(s.crowdsec_in_force), bouncer_text(s));
  if (s.publish)
    out +=
        fmt::format("  publish  machine {}: {} ban{} published, {} queued, {} dropped, {} error{}; Local API {}\n",
                    s.publish->machine, group_digits(s.publish->published), s.publish->published == 1 ? "" : "s",
                    group_digits(s.publish->queued), group_digits(s.publish->dropped), group_digits(s.publish->errors),
                    s.publish->errors == 1 ? "" : "s", s.publish->up ? "up" : "down");
  return out;
}

}  // namespace

std::string monitor_mode(const IfaceStatus& s, bool json) {
  size_t n = 0;
  for (const lv_class& k : s.classes) n += (k.flags & LV_CLASS_MONITOR) != 0;
  if ((s.policy_flags & LV_POL_MONITOR) || (n && n == s.classes.size())) return "monitor";
  if (n == 0) return "enforce";
  return json ? "mixed" : fmt::format("mixed: {} class{} monitor{}", n, n == 1 ? "" : "es", n == 1 ? "s" : "");
}

AutopilotView autopilot_view(const IfaceStatus& s, size_t i) {
  const lv_class& k = s.classes[i];
  AutopilotView v;
  v.admission = (k.flags & LV_CLASS_AUTO_ADMIT) ? Admission::Auto
                : (k.flags & LV_CLASS_ADMIT)    ? Admission::Budget
                                                : Admission::Off;
  v.escalates = (k.flags & LV_CLASS_ESCALATE) != 0;
  v.escalate_wanted = !v.escalates && k.autop.network_sources != 0;
  if (i < s.guards.size()) v.guard = s.guards[i];
  if (v.admission != Admission::Auto) return v;
  const lv_guard& g = v.guard;
  v.threshold = lv_guard_rate(lv_guard_cost(g.cost, &k.autop));
  const bool calm = lv_guard_calm(g.last_over_ns, s.now_ns, k.autop.release_ns);
  if (g.engaged_ns)
    v.state = calm ? AutopilotView::ReleasePending : AutopilotView::Engaged;
  else
    v.state = calm ? AutopilotView::Calm : AutopilotView::Abnormal;
  return v;
}

const char* autopilot_state_name(AutopilotView::State st) {
  switch (st) {
    case AutopilotView::Calm:
      return "calm";
    case AutopilotView::Abnormal:
      return "abnormal";
    case AutopilotView::Engaged:
      return "engaged";
    case AutopilotView::ReleasePending:
      return "release_pending";
    default:
      return "off";
  }
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
    for (size_t i = 0; i < s.classes.size(); ++i) out += class_text(s, i);
    for (const lv_override& o : s.overrides) {
      std::string in;
      size_t n = 0;
      for (size_t i = 0; i < s.classes.size(); ++i)
        if ((o.classes >> class_id_at(s, i)) & 1) in += (n++ ? ", " : "") + name_of(s.classes[i].name);
      out += override_line(name_of(o.name), {o.pkt.rate, o.pkt.burst}, {o.bytes.rate, o.bytes.burst},
                           n == s.classes.size() ? "every class" : "classes " + in);
    }
    if (s.allow + s.deny + s.override_entries) out += lists_line(s.allow, s.deny, s.override_entries);
    if (!s.defunct) out += iface_tail_text(s);
  }
  return out;
}

}  // namespace levee
