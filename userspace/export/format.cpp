#include "export/format.hpp"

#include <fmt/format.h>

#include <time.h>

#include <algorithm>
#include <cstring>

#include "core/reasons.hpp"
#include "core/units.hpp"
#include "limiter.h"
#include "policy/compile.hpp"
#include "policy/policy.hpp"

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
  json classes = json::object();
  for (const auto& [name, id] : class_names) {
    const lv_class_counters& k = c.by_class[id & (LV_MAX_CLASSES - 1)];
    classes[name] = {{"id", id},
                     {"passed_packets", k.passed.packets},
                     {"passed_bytes", k.passed.bytes},
                     {"dropped_packets", k.dropped.packets},
                     {"dropped_bytes", k.dropped.bytes}};
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

namespace {

// "500 pps, burst 100; 1M B/s, burst 100k B", or "no limit".
std::string describe_rates(const Rate& packets, const Rate& bytes) {
  std::string s;
  if (packets.set()) s += fmt::format("{} pps, burst {}", format_count(packets.rate), format_count(packets.burst));
  if (bytes.set())
    s +=
        fmt::format("{}{} B/s, burst {} B", s.empty() ? "" : "; ", format_count(bytes.rate), format_count(bytes.burst));
  return s.empty() ? "no limit" : s;
}

std::string override_line(const std::string& name, const Rate& packets, const Rate& bytes, const std::string& where) {
  return fmt::format("  override {:<11} {}; {}\n", name, describe_rates(packets, bytes), where);
}

std::string lists_line(size_t allow, size_t deny, size_t overrides) {
  return fmt::format("  lists    {} allow, {} deny, {} override entries\n", group_digits(allow), group_digits(deny),
                     group_digits(overrides));
}

}  // namespace

std::string describe_limits(const ClassSpec& c) {
  std::string s = c.per_source_limited() ? describe_rates(c.packets, c.bytes) : "no limit per source";
  s += fmt::format("; per source /{} (IPv4), /{} (IPv6)", c.prefix4, c.prefix6);
  if (std::string extras = describe_extras(c); !extras.empty()) s += "; " + extras;
  return s;
}

std::string describe_extras(const ClassSpec& c) {
  std::vector<std::string> parts;
  if (c.new_sources.set())
    parts.push_back(
        fmt::format("new sources {}/s, burst {}", format_count(c.new_sources.rate), format_count(c.new_sources.burst)));
  if (c.network.set())
    parts.push_back(fmt::format("per network /{}, /{}: {}", c.network.prefix4, c.network.prefix6,
                                describe_rates(c.network.packets, c.network.bytes)));
  if (c.total.set()) parts.push_back("class total " + describe_rates(c.total.packets, c.total.bytes));
  if (c.ban.set())
    parts.push_back(fmt::format("ban {}, doubling up to {}, forgotten after {}{}", format_duration(c.ban.ban_ns),
                                format_duration(c.ban.max_or_default()), format_duration(c.ban.forget_or_default()),
                                c.ban.all_classes ? ", in every class" : ""));
  if (c.monitor) parts.push_back("monitor mode");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::string format_remaining(uint64_t ns) {
  if (ns < 60 * LV_NSEC_PER_SEC) return fmt::format("{:.1f} s", static_cast<double>(ns) / LV_NSEC_PER_SEC);
  return format_span((ns + LV_NSEC_PER_SEC - 1) / LV_NSEC_PER_SEC);
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

namespace {
// A class's id: from the status, or its position where a status carries none.
unsigned class_id_at(const IfaceStatus& s, size_t i) {
  return i < s.class_ids.size() ? s.class_ids[i] : static_cast<unsigned>(i);
}
}  // namespace

std::string monitor_mode(const IfaceStatus& s, bool json) {
  size_t n = 0;
  for (const lv_class& k : s.classes) n += (k.flags & LV_CLASS_MONITOR) != 0;
  if ((s.policy_flags & LV_POL_MONITOR) || (n && n == s.classes.size())) return "monitor";
  if (n == 0) return "enforce";
  return json ? "mixed" : fmt::format("mixed: {} class{} monitor{}", n, n == 1 ? "" : "es", n == 1 ? "s" : "");
}

nlohmann::json status_json(const std::vector<IfaceStatus>& all) {
  using nlohmann::json;
  json list = json::array();
  for (const auto& s : all) {
    if (!s.problem.empty()) {
      list.push_back({{"interface", s.iface}, {"problem", s.problem}});
      continue;
    }
    json classes = json::array();
    size_t monitoring = 0;
    for (size_t i = 0; i < s.classes.size(); ++i) {
      const lv_class& k = s.classes[i];
      const ClassSpec c = class_of(k);
      const bool monitor = k.flags & LV_CLASS_MONITOR;
      monitoring += monitor;
      json network = nullptr, total = nullptr, ban = nullptr;
      if (c.network.set())
        network = {{"prefix4", c.network.prefix4},       {"prefix6", c.network.prefix6},
                   {"rate", c.network.packets.rate},     {"burst", c.network.packets.burst},
                   {"bytes_rate", c.network.bytes.rate}, {"bytes_burst", c.network.bytes.burst}};
      if (c.total.set())
        total = {{"rate", c.total.packets.rate},
                 {"burst", c.total.packets.burst},
                 {"bytes_rate", c.total.bytes.rate},
                 {"bytes_burst", c.total.bytes.burst},
                 {"lease_ns", k.lease_ns}};
      if (c.ban.set())
        ban = {{"ban_ms", c.ban.ban_ns / kNsPerMs},
               {"ban_max_ms", c.ban.max_or_default() / kNsPerMs},
               {"forget_after_ms", c.ban.forget_or_default() / kNsPerMs},
               {"scope", c.ban.all_classes ? "all" : "class"}};
      classes.push_back({{"name", c.name},
                         {"id", class_id_at(s, i)},
                         {"rate", c.packets.rate},
                         {"burst", c.packets.burst},
                         {"effective_rate", effective_rate(k)},
                         {"bytes_rate", c.bytes.rate},
                         {"bytes_burst", c.bytes.burst},
                         {"prefix4", c.prefix4},
                         {"prefix6", c.prefix6},
                         {"fast_reject", (k.flags & LV_CLASS_FAST_REJECT) != 0},
                         {"monitor", monitor},
                         {"own_mode", c.monitor ? "monitor" : "enforce"},
                         {"new_sources", c.new_sources.rate},
                         {"new_sources_burst", c.new_sources.burst},
                         {"admitted", i < s.admitted.size() ? s.admitted[i] : 0},
                         {"network", network},
                         {"total", total},
                         {"ban", ban}});
    }
    json overrides = json::array();
    for (const lv_override& o : s.overrides)
      overrides.push_back({{"name", name_of(o.name)},
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
    list.push_back(e);
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

std::string describe_match(const Match& m) {
  if (m.empty()) return "any";
  std::string s;
  std::vector<Proto> protos = m.protos;
  // Ports and SYN only exist for the protocols that carry them.
  if (protos.empty() && m.syn) protos = {Proto::Tcp};
  if (protos.empty() && !m.ports.empty()) protos = {Proto::Tcp, Proto::Udp};
  for (Proto p : protos) s += fmt::format("{}{}", s.empty() ? "" : ",", proto_name(p));
  if (m.syn) s += " syn";
  if (!m.ports.empty()) {
    s += m.ports.size() == 1 && m.ports[0].first == m.ports[0].last ? " port " : " ports ";
    for (size_t i = 0; i < m.ports.size(); ++i) {
      const PortRange& r = m.ports[i];
      s += i ? "," : "";
      s += r.first == r.last ? fmt::format("{}", r.first) : fmt::format("{}-{}", r.first, r.last);
    }
  }
  return s;
}

std::string policy_text(const Policy& p, bool with_lists) {
  std::string out;
  for (const ClassSpec& c : p.classes)
    out += fmt::format("  class {:<14} {}: {}\n", c.name, describe_match(c.match), describe_limits(c));
  for (const OverrideSpec& o : p.overrides) {
    std::string in;
    for (const auto& c : o.classes) in += (in.empty() ? "" : ", ") + c;
    out += override_line(o.name, o.packets, o.bytes, in.empty() ? "every class" : "classes " + in);
  }
  if (!with_lists) return out;
  size_t n[4] = {};
  for (const ListEntry& e : p.lists) ++n[e.kind & 3];
  out += lists_line(n[LV_LIST_ALLOW], n[LV_LIST_DENY], n[LV_LIST_OVERRIDE]);
  return out;
}

std::string format_span(uint64_t s) {
  struct Unit {
    uint64_t secs;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  if (s == 0) return "0s";
  // The two largest units: "9d 3h", "2h 5m", "42s".
  for (size_t i = 0; i < std::size(kUnits); ++i) {
    if (s < kUnits[i].secs) continue;
    std::string out = fmt::format("{}{}", s / kUnits[i].secs, kUnits[i].name);
    if (i + 1 < std::size(kUnits)) {
      const uint64_t rest = s % kUnits[i].secs / kUnits[i + 1].secs;
      if (rest) out += fmt::format(" {}{}", rest, kUnits[i + 1].name);
    }
    return out;
  }
  return "0s";
}

std::string format_expiry(uint64_t expires, uint64_t now) {
  if (expires > now) return "in " + format_span((expires - now + LV_NSEC_PER_SEC - 1) / LV_NSEC_PER_SEC);
  return "expired " + format_span((now - expires) / LV_NSEC_PER_SEC) + " ago";
}

nlohmann::json list_row_json(const ListRow& r, uint64_t now) {
  using nlohmann::json;
  json j = {{"cidr", r.cidr.to_string()},
            {"family", r.cidr.family},
            {"kind", list_kind_name(r.kind)},
            {"override", r.kind == LV_LIST_OVERRIDE ? json(r.override_name) : json(nullptr)},
            {"expires", nullptr},
            {"expires_unix", nullptr},
            {"expires_in", nullptr},
            {"expired", false},
            {"origin", list_origin_name(r.origin)}};
  if (r.expires_unix_ns) {
    j["expires"] = format_time(r.expires_unix_ns);
    j["expires_unix"] = r.expires_unix_ns / LV_NSEC_PER_SEC;
    j["expires_in"] = r.expires_unix_ns > now ? (r.expires_unix_ns - now + LV_NSEC_PER_SEC - 1) / LV_NSEC_PER_SEC : 0;
    j["expired"] = r.expires_unix_ns <= now;
  }
  return j;
}

nlohmann::json list_json(const std::string& iface, lv_list_kind kind, const std::vector<ListRow>& rows, uint64_t now) {
  nlohmann::json entries = nlohmann::json::array();
  for (const ListRow& r : rows) entries.push_back(list_row_json(r, now));
  return {{"interface", iface}, {"kind", list_kind_name(kind)}, {"entries", entries}};
}

std::string list_text(const std::string& iface, lv_list_kind kind, const std::vector<ListRow>& rows, uint64_t now) {
  if (rows.empty()) return fmt::format("{}: no {} entries\n", iface, list_kind_name(kind));
  auto expires = [&](const ListRow& r) {
    return r.expires_unix_ns
               ? fmt::format("{} ({})", format_time(r.expires_unix_ns), format_expiry(r.expires_unix_ns, now))
               : std::string("never");
  };
  size_t wc = 4, wo = 8, we = 7;
  for (const ListRow& r : rows) {
    wc = std::max(wc, r.cidr.to_string().size());
    wo = std::max(wo, r.override_name.size());
    we = std::max(we, expires(r).size());
  }
  const bool ov = kind == LV_LIST_OVERRIDE;
  auto row = [&](const std::string& cidr, const std::string& name, const std::string& exp, const std::string& origin) {
    std::string line = fmt::format("  {:<{}}  ", cidr, wc);
    if (ov) line += fmt::format("{:<{}}  ", name, wo);
    return line + fmt::format("{:<{}}  {}\n", exp, we, origin);
  };
  std::string out = fmt::format("{}: {} {} entr{}\n", iface, group_digits(rows.size()), list_kind_name(kind),
                                rows.size() == 1 ? "y" : "ies");
  out += row("CIDR", "OVERRIDE", "EXPIRES", "ORIGIN");
  for (const ListRow& r : rows) out += row(r.cidr.to_string(), r.override_name, expires(r), list_origin_name(r.origin));
  return out;
}

ShowLimiter show_limiter(const ShowClass& c) {
  ShowLimiter l;
  if (c.pkt.cost) {
    l.tokens = lv_gcra_tokens(c.state.ready_ns, c.now_ns, &c.pkt);
    l.wait_ns = lv_gcra_wait(c.state.ready_ns, c.now_ns);
  }
  if (c.bytes.cost) {
    l.byte_tokens = lv_byte_tokens(c.state.ready_bytes_ns, c.now_ns, &c.bytes);
    l.wait_ns = std::max<uint64_t>(l.wait_ns, lv_gcra_wait(c.state.ready_bytes_ns, c.now_ns));
  }
  return l;
}

namespace {

// The address as the network of the given prefix lengths that holds it.
std::string masked(const std::string& address, unsigned len4, unsigned len6) {
  auto a = Cidr::parse(address);
  if (!a) return address;
  Cidr k = *a;
  k.len = k.family == 4 ? len4 : len6;
  for (unsigned i = 0; i < 16; ++i) {
    const unsigned bits = k.len > 8 * i ? std::min(8u, k.len - 8 * i) : 0;
    k.addr[i] &= static_cast<uint8_t>(bits ? 0xff << (8 - bits) : 0);
  }
  return k.to_string();
}

}  // namespace

std::string show_source(const ShowResult& r, const ShowClass& c) {
  return masked(r.address, c.cls.prefix4, c.cls.prefix6);
}

std::optional<ShowLimiter> show_network_limiter(const ShowClass& c) {
  if (!c.network) return std::nullopt;
  ShowClass n = c;
  n.state = *c.network;
  n.pkt = c.cls.net_pkt;
  n.bytes = c.cls.net_bytes;
  return show_limiter(n);
}

const lv_ban* show_ban(const ShowClass& c) {
  const lv_ban* own = c.ban ? &*c.ban : nullptr;
  const lv_ban* all = c.ban_all ? &*c.ban_all : nullptr;
  const bool own_on = own && own->until_ns > c.now_ns, all_on = all && all->until_ns > c.now_ns;
  if (own_on && all_on) return own->until_ns >= all->until_ns ? own : all;
  if (own_on) return own;
  if (all_on) return all;
  return own ? own : all;
}

namespace {

// What a list entry does to the address, as `levee show` says it.
std::string list_effect(const ListRow& r) {
  switch (r.kind) {
    case LV_LIST_ALLOW:
      return "never limited (still counted)";
    case LV_LIST_DENY:
      return "every packet dropped";
    case LV_LIST_OVERRIDE:
      return fmt::format("limited by override '{}' in the classes it names", r.override_name);
    default:
      return "";
  }
}

}  // namespace

namespace {

nlohmann::json ban_json(const lv_ban* b, uint64_t now) {
  const bool on = b && b->until_ns > now;
  return {{"banned", on},
          {"ban_remaining_ms", on ? (b->until_ns - now + kNsPerMs - 1) / kNsPerMs : 0},
          {"offences", b ? b->offences : 0},
          {"ban_duration_ms", b ? b->duration_ns / kNsPerMs : 0},
          {"ban_since_ms_ago", b && b->since_ns && b->since_ns <= now ? nlohmann::json((now - b->since_ns) / kNsPerMs)
                                                                      : nlohmann::json(nullptr)}};
}

}  // namespace

nlohmann::json show_json(const std::string& iface, const ShowResult& r, uint64_t now_unix_ns) {
  using nlohmann::json;
  json classes = json::array();
  auto opt = [](const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); };
  for (const ShowClass& c : r.classes) {
    const ShowLimiter l = show_limiter(c);
    json network = nullptr;
    if (auto nl = show_network_limiter(c))
      network = {{"network", masked(r.address, c.cls.net_prefix4, c.cls.net_prefix6)},
                 {"rate", c.cls.net_pkt.rate},
                 {"burst", c.cls.net_pkt.burst},
                 {"bytes_rate", c.cls.net_bytes.rate},
                 {"bytes_burst", c.cls.net_bytes.burst},
                 {"tokens", opt(nl->tokens)},
                 {"byte_tokens", opt(nl->byte_tokens)},
                 {"wait_ns", nl->wait_ns},
                 {"passed_packets", LV_COUNT_PACKETS(c.network->passed)},
                 {"passed_bytes", LV_COUNT_BYTES(c.network->passed)},
                 {"dropped_packets", LV_COUNT_PACKETS(c.network->dropped)},
                 {"dropped_bytes", LV_COUNT_BYTES(c.network->dropped)}};
    const lv_ban* ban = show_ban(c);
    json cj = {{"name", c.name},
               {"class_id", c.class_id},
               {"source", show_source(r, c)},
               {"override", c.override_name ? json(*c.override_name) : json(nullptr)},
               {"rate", c.pkt.rate},
               {"burst", c.pkt.burst},
               {"bytes_rate", c.bytes.rate},
               {"bytes_burst", c.bytes.burst},
               {"tokens", opt(l.tokens)},
               {"byte_tokens", opt(l.byte_tokens)},
               {"wait_ns", l.wait_ns},
               {"passed_packets", LV_COUNT_PACKETS(c.state.passed)},
               {"passed_bytes", LV_COUNT_BYTES(c.state.passed)},
               {"dropped_packets", LV_COUNT_PACKETS(c.state.dropped)},
               {"dropped_bytes", LV_COUNT_BYTES(c.state.dropped)},
               {"has_state", c.has_state},
               {"monitor", (c.cls.flags & LV_CLASS_MONITOR) != 0},
               {"network", network}};
    cj.update(ban_json(ban, c.now_ns));
    const bool from_all = ban && c.ban_all && ban == &*c.ban_all;
    cj["ban_scope"] = !ban ? json(nullptr) : json(from_all ? "all" : "class");
    classes.push_back(std::move(cj));
  }
  json ban_all = nullptr;
  if (r.ban_all) ban_all = ban_json(&*r.ban_all, r.now_ns);
  return {{"interface", iface},
          {"address", r.address},
          {"list", r.list ? list_row_json(*r.list, now_unix_ns) : json(nullptr)},
          {"classes", classes},
          {"ban_all", ban_all},
          {"counter_bits", 32}};
}

std::string show_text(const std::string& iface, const ShowResult& r, uint64_t now_unix_ns) {
  if (!r.list && r.classes.empty() && !r.ban_all)
    return fmt::format("{} on {}: no state in any class, on no list\n", r.address, iface);
  std::string out = fmt::format("{} on {}\n", r.address, iface);
  if (r.list) {
    const ListRow& e = *r.list;
    std::string what = e.kind == LV_LIST_OVERRIDE ? fmt::format("override {} {}", e.override_name, e.cidr.to_string())
                                                  : fmt::format("{} {}", list_kind_name(e.kind), e.cidr.to_string());
    std::string detail = fmt::format("origin {}", list_origin_name(e.origin));
    if (e.expires_unix_ns)
      detail += fmt::format(", expires {} ({})", format_time(e.expires_unix_ns),
                            format_expiry(e.expires_unix_ns, now_unix_ns));
    out += fmt::format("  list     {}, {}: {}\n", what, detail, list_effect(e));
  } else {
    out += "  list     no entry: limited by its class\n";
  }
  if (r.ban_all) {
    const lv_ban& b = *r.ban_all;
    const std::string offences = fmt::format("{} offence{}", b.offences, b.offences == 1 ? "" : "s");
    if (b.until_ns > r.now_ns)
      out += fmt::format("  ban      in every class: banned for {} more ({} ban, began {} ago), {}\n",
                         format_remaining(b.until_ns - r.now_ns), format_duration(b.duration_ns / kNsPerMs * kNsPerMs),
                         format_remaining(r.now_ns > b.since_ns ? r.now_ns - b.since_ns : 0), offences);
    else
      out += fmt::format("  ban      in every class: not banned; {}, the last ban ended {} ago\n", offences,
                         format_remaining(r.now_ns - b.until_ns));
  }
  if (r.classes.empty()) out += "  no state in any class\n";
  auto counts = [](uint64_t v) {
    const uint32_t p = LV_COUNT_PACKETS(v), b = LV_COUNT_BYTES(v);
    return fmt::format("{} packet{}, {} byte{}", group_digits(p), p == 1 ? "" : "s", group_digits(b),
                       b == 1 ? "" : "s");
  };
  auto tokens_of = [](const ShowLimiter& l) {
    std::string tokens;
    if (l.tokens) tokens = fmt::format("{} packets", group_digits(*l.tokens));
    if (l.byte_tokens) tokens += fmt::format("{}{} bytes", tokens.empty() ? "" : ", ", group_digits(*l.byte_tokens));
    return tokens;
  };
  auto next_of = [](const ShowLimiter& l) { return l.wait_ns ? "in " + format_ns(l.wait_ns) : std::string("now"); };
  for (const ShowClass& c : r.classes) {
    const ShowLimiter l = show_limiter(c);
    const bool monitor = c.cls.flags & LV_CLASS_MONITOR;
    out += fmt::format("  class {}  source {}{}\n", c.name, show_source(r, c), monitor ? "  (monitor mode)" : "");
    std::string limits = describe_rates({c.pkt.rate, c.pkt.burst}, {c.bytes.rate, c.bytes.burst});
    if (c.override_name) limits += fmt::format(" (override {}, replacing the class's)", *c.override_name);
    out += fmt::format("    limits   {}\n", limits);
    if (c.has_state) {
      if (std::string tokens = tokens_of(l); !tokens.empty()) out += fmt::format("    tokens   {}\n", tokens);
      out += fmt::format("    next     {}\n", next_of(l));
      out += fmt::format("    passed   {}\n", counts(c.state.passed));
      // A monitoring class drops nothing: what it counts are the packets it would drop.
      out += fmt::format("    {}  {}\n", monitor ? "would drop" : "dropped", counts(c.state.dropped));
    } else {
      out += "    state    none of its own (not seen since its state was evicted)\n";
    }
    if (auto nl = show_network_limiter(c)) {
      std::string tokens = tokens_of(*nl);
      out += fmt::format(
          "    network  {}: {}{}; next {}\n", masked(r.address, c.cls.net_prefix4, c.cls.net_prefix6),
          describe_rates({c.cls.net_pkt.rate, c.cls.net_pkt.burst}, {c.cls.net_bytes.rate, c.cls.net_bytes.burst}),
          tokens.empty() ? "" : "; tokens " + tokens, next_of(*nl));
      out += fmt::format("             passed {}; {} {}\n", counts(c.network->passed),
                         monitor ? "would drop" : "dropped", counts(c.network->dropped));
    }
    if (const lv_ban* b = show_ban(c)) {
      const bool everywhere = c.ban_all && b == &*c.ban_all;
      const std::string offences = fmt::format("{} offence{}", b->offences, b->offences == 1 ? "" : "s");
      const std::string scope = everywhere ? ", in every class" : "";
      if (b->until_ns > c.now_ns)
        out +=
            fmt::format("    ban      banned for {} more ({} ban{}, began {} ago), {}\n",
                        format_remaining(b->until_ns - c.now_ns), format_duration(b->duration_ns / kNsPerMs * kNsPerMs),
                        scope, format_remaining(c.now_ns > b->since_ns ? c.now_ns - b->since_ns : 0), offences);
      else
        out += fmt::format("    ban      not banned; {}{}, the last ban ended {} ago\n", offences, scope,
                           format_remaining(c.now_ns - b->until_ns));
    }
  }
  if (!r.classes.empty())
    out += fmt::format("  (per-source counters are 32-bit and wrap; up to {} drops per CPU are counted late)\n",
                       LV_HOT_MAX_HITS);
  return out;
}

}  // namespace levee
