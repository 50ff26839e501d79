#include "policy/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/quote.hpp"
#include "core/units.hpp"
#include "policy/lists.hpp"

namespace levee {
namespace {

Error at(const Where& w, std::string what, std::string hint = {}) {
  return usage_error(w.describe().empty() ? what : fmt::format("{}: {}", w.describe(), what), std::move(hint));
}

Status check_rate(const Rate& r, const Where& w, const char* what, uint64_t max_rate, uint64_t max_burst) {
  if (!r.set() && r.burst == 0) return {};
  if (r.rate == 0 || r.rate > max_rate)
    return at(w, fmt::format("{} rate {} is out of range", what, r.rate), fmt::format("give 1 to {}", max_rate));
  if (r.burst == 0 || r.burst > max_burst)
    return at(w, fmt::format("{} burst {} is out of range", what, r.burst),
              fmt::format("give 1 to {} with the rate", max_burst));
  return {};
}

// Where a class's own key was, or the class itself.
const Where& or_class(const Where& w, const ClassSpec& c) { return w.file.empty() && !w.line ? c.where : w; }

// The match of one class: port ranges in order, ports and SYN only with protocols that
// have them.
Status check_match(const ClassSpec& c) {
  for (const auto* ranges : {&c.match.ports, &c.match.sports})
    for (const PortRange& r : *ranges)
      if (r.first > r.last) return at(c.where, fmt::format("port range {}-{} is empty", r.first, r.last));
  if (!c.match.ports.empty() && !c.match.sports.empty())
    return at(c.where, fmt::format("class '{}' matches source and destination ports", c.name),
              "match one of them per class; first match wins across classes");
  for (Proto pr : c.match.protos) {
    if (c.match.ported() && pr != Proto::Tcp && pr != Proto::Udp)
      return at(c.where, fmt::format("class '{}' matches ports but protocol {} has none", c.name, proto_name(pr)),
                "ports apply to tcp and udp");
    if (c.match.syn && pr != Proto::Tcp)
      return at(c.where, fmt::format("class '{}' matches SYN but protocol {} is not tcp", c.name, proto_name(pr)));
  }
  // SYN authentication sees a connection whole: the SYN it answers and the RST or ACK
  // that brings the cookie back must fall into the same class.
  if (!c.syn_auth_explicit()) return {};  // "auto" where it fits (syn_auth_in_force())
  // "auto" gates only TCP, and only while engaged: a class that takes other protocols
  // too (the default class) may have it, as it gets it by default.
  if (c.syn_auth == SynAuth::Auto && !c.takes_whole_tcp())
    return at(c.where,
              fmt::format("class '{}' has syn_auth = \"auto\" but does not match all of TCP's packets", c.name),
              "give it TCP among its protocols, no match.syn and no match.sport");
  if (c.syn_auth != SynAuth::Off && c.syn_auth != SynAuth::Auto &&
      (c.match.protos != std::vector<Proto>{Proto::Tcp} || c.match.syn || !c.match.sports.empty()))
    return at(c.where, fmt::format("class '{}' has syn_auth but does not match all of TCP's packets", c.name),
              "give it match.proto = \"tcp\" (destination ports as you like), no match.syn and no match.sport");
  if (c.syn_auth == SynAuth::Auto && c.admission_in_force() != Admission::Auto)
    return at(c.where,
              fmt::format("class '{}' has syn_auth = \"auto\", which the autopilot's admission engages, but "
                          "new_sources is not \"auto\"",
                          c.name),
              R"(give it new_sources = "auto", or syn_auth = "cookie" to authenticate every new TCP source)");
  return {};
}

// [auto]'s keys as validate() reports them: at the [auto] table.
std::function<Where(std::string_view)> in_auto_table(const AutoSpec& a) {
  return [&a](std::string_view key) { return Where{a.where.file, a.where.line, fmt::format("auto.{}", key)}; };
}

// Two durations of [auto] where `longer` must be at least `shorter`, reported at the
// key the file gave (the longer one when it gave both).
Status check_order(const std::function<Where(std::string_view)>& where_of, const char* longer, uint64_t l,
                   const char* shorter, uint64_t s) {
  if (l >= s) return {};
  const std::string hint = fmt::format("give {} at least as long as {}", longer, shorter);
  if (const Where w = where_of(longer); w.line || !where_of(shorter).line)
    return at(w, fmt::format("{} is shorter than {}, {}", format_duration(l), shorter, format_duration(s)), hint);
  return at(where_of(shorter), fmt::format("{} is longer than {}, {}", format_duration(s), longer, format_duration(l)),
            hint);
}

Status check_class_extras(const ClassSpec& c) {
  LV_TRY(check_rate(c.new_sources, c.where, "new-source", kMaxRatePps, kMaxBurst));
  LV_TRY(check_auto(c.autop, in_auto_table(c.autop)));
  const NetworkLimit& n = c.network;
  if (n.set() || n.packets.burst || n.bytes.burst) {
    const Where& w = or_class(n.where, c);
    LV_TRY(check_rate(n.packets, w, "network packet", kMaxRatePps, kMaxBurst));
    LV_TRY(check_rate(n.bytes, w, "network byte", kMaxRateBytes, kMaxBurstBytes));
    if (n.prefix4 < 1 || n.prefix4 > 32)
      return at(w, fmt::format("network prefix4 {} is out of range", n.prefix4), "give 1 to 32");
    if (n.prefix6 < 1 || n.prefix6 > 128)
      return at(w, fmt::format("network prefix6 {} is out of range", n.prefix6), "give 1 to 128");
    if (n.prefix4 > c.prefix4 || n.prefix6 > c.prefix6)
      return at(w,
                fmt::format("class '{}': the network /{} (IPv4), /{} (IPv6) is narrower than one source, /{}, /{}",
                            c.name, n.prefix4, n.prefix6, c.prefix4, c.prefix6),
                "a network holds whole sources: give the network a prefix no longer than the class's");
  }
  const TotalLimit& t = c.total;
  LV_TRY(check_rate(t.packets, or_class(t.where, c), "total packet", kMaxRatePps, kMaxBurst));
  LV_TRY(check_rate(t.bytes, or_class(t.where, c), "total byte", kMaxRateBytes, kMaxBurstBytes));
  const BanSpec& b = c.ban;
  if (b.set()) {
    const Where& w = or_class(b.where, c);
    if (!c.per_source_limited())
      return at(w, fmt::format("class '{}' bans sources but has no limit per source to be over", c.name),
                "give it rate and burst, or bytes_rate and bytes_burst (network and total limits do not ban)");
    if (b.ban_ns > kMaxDurationNs || b.max_or_default() > kMaxDurationNs || b.forget_or_default() > kMaxDurationNs)
      return at(w, "a ban duration is over 100 years", R"(give e.g. "2s", "10m" or "1h")");
    if (b.max_or_default() < b.ban_ns)
      return at(w,
                fmt::format("class '{}': ban_max {} is shorter than the first ban, {}", c.name,
                            format_duration(b.max_or_default()), format_duration(b.ban_ns)),
                "give ban_max at least as long as ban");
  }
  return {};
}

// One class: a unique valid name, a match unless it is the default, and its limits.
Status check_class(const ClassSpec& c, bool is_default, std::set<std::string>& names) {
  if (!valid_name(c.name))
    return at(c.where, fmt::format("class name {} is not valid", quote_value(c.name)),
              fmt::format("use 1 to {} letters, digits, '-', '_' or '.'", LV_NAME_LEN - 1));
  if (!names.insert(c.name).second) return at(c.where, fmt::format("class '{}' is defined twice", c.name));
  if (is_default && !c.match.empty())
    return at(c.where, fmt::format("the default class '{}' has a match", c.name),
              "the last class is the default: it takes everything the others do not");
  if (!is_default && c.match.empty())
    return at(c.where, fmt::format("class '{}' matches everything, so no class after it can match", c.name),
              "give it a match, or make it the default class");
  LV_TRY(check_match(c));
  if (!c.packets.set() && !c.bytes.set() && c.packets.burst == 0 && c.bytes.burst == 0 && !c.network.set() &&
      !c.total.set())
    return at(c.where, fmt::format("class '{}' has no limit", c.name),
              "give rate and burst (packets), bytes_rate and bytes_burst, or both; "
              "networks that must never be limited belong on the allow list");
  LV_TRY(check_rate(c.packets, c.where, "packet", kMaxRatePps, kMaxBurst));
  LV_TRY(check_rate(c.bytes, c.where, "byte", kMaxRateBytes, kMaxBurstBytes));
  if (c.prefix4 < 1 || c.prefix4 > 32)
    return at(c.where, fmt::format("prefix4 {} is out of range", c.prefix4), "give 1 to 32");
  if (c.prefix6 < 1 || c.prefix6 > 128)
    return at(c.where, fmt::format("prefix6 {} is out of range", c.prefix6), "give 1 to 128");
  return check_class_extras(c);
}

// Does `earlier` take some TCP SYN that `later` matches (first match wins)? Both match
// TCP and share a destination port. An earlier class of source ports takes them too:
// a spoofed SYN may carry any source port.
bool takes_syns_of(const ClassSpec& earlier, const ClassSpec& later) {
  const auto& ep = earlier.match.protos;
  if (!ep.empty() && std::find(ep.begin(), ep.end(), Proto::Tcp) == ep.end()) return false;
  if (earlier.match.ports.empty() || later.match.ports.empty()) return true;
  for (const PortRange& a : earlier.match.ports)
    for (const PortRange& b : later.match.ports)
      if (a.first <= b.last && b.first <= a.last) return true;
  return false;
}

// A class with SYN authentication must see its SYNs: a class before it that takes them
// would let them through unchallenged.
Status check_syn_auth_order(const std::vector<ClassSpec>& classes) {
  for (size_t i = 0; i < classes.size(); ++i) {
    // "auto" may share its SYNs: those an earlier class takes are that class's to judge.
    if (!classes[i].syn_auth_explicit() || classes[i].syn_auth == SynAuth::Off || classes[i].syn_auth == SynAuth::Auto)
      continue;
    for (size_t j = 0; j < i; ++j)
      if (takes_syns_of(classes[j], classes[i]))
        return at(classes[i].where,
                  fmt::format("class '{}' has syn_auth but class '{}' before it takes its SYNs", classes[i].name,
                              classes[j].name),
                  fmt::format("put '{}' first, or keep its ports out of '{}'", classes[i].name, classes[j].name));
  }
  return {};
}

Status check_classes(const std::vector<ClassSpec>& classes, std::set<std::string>& names) {
  if (classes.empty()) return usage_error("the policy has no classes", "give at least a default class");
  if (classes.size() > LV_MAX_CLASSES)
    return at(classes[LV_MAX_CLASSES].where, fmt::format("more than {} classes", LV_MAX_CLASSES));
  for (size_t i = 0; i < classes.size(); ++i) LV_TRY(check_class(classes[i], i + 1 == classes.size(), names));
  LV_TRY(check_syn_auth_order(classes));
  return check_ban_scopes(classes);
}

// Overrides: unique valid names, a limit each, and only classes that exist.
Status check_overrides(const std::vector<OverrideSpec>& overrides, const std::set<std::string>& class_names,
                       std::set<std::string>& names) {
  if (overrides.size() > LV_MAX_OVERRIDES)
    return at(overrides[LV_MAX_OVERRIDES].where, fmt::format("more than {} overrides", LV_MAX_OVERRIDES));
  for (const OverrideSpec& o : overrides) {
    if (!valid_name(o.name))
      return at(o.where, fmt::format("override name {} is not valid", quote_value(o.name)),
                fmt::format("use 1 to {} letters, digits, '-', '_' or '.'", LV_NAME_LEN - 1));
    if (!names.insert(o.name).second) return at(o.where, fmt::format("override '{}' is defined twice", o.name));
    if (!o.packets.set() && !o.bytes.set())
      return at(o.where, fmt::format("override '{}' has no limit", o.name),
                "give rate and burst, bytes_rate and bytes_burst, or both");
    LV_TRY(check_rate(o.packets, o.where, "packet", kMaxRatePps, kMaxBurst));
    LV_TRY(check_rate(o.bytes, o.where, "byte", kMaxRateBytes, kMaxBurstBytes));
    for (const auto& cn : o.classes)
      if (!class_names.contains(cn))
        return at(o.where, fmt::format("override '{}' names no class {}", o.name, quote_value(cn)));
  }
  return {};
}

// The first entry (in the file's order) the file gives a second time: a config entry
// whose prefix an earlier config entry has, unless an entry of another origin came
// first. Its index (lists.size() when none) and that first entry.
std::pair<size_t, const ListEntry*> first_repeat(const std::vector<ListEntry>& lists) {
  const auto order = sorted_prefixes(lists, [](const ListEntry& e) -> const Cidr& { return e.cidr; });
  std::pair<size_t, const ListEntry*> found{lists.size(), nullptr};
  for (size_t g = 0; g < order.size();) {
    size_t e = g + 1;
    while (e < order.size() && order[e].first == order[g].first) ++e;
    const ListEntry& first = lists[order[g].second];
    for (size_t j = g + 1; first.origin == LV_ORIGIN_CONFIG && j < e; ++j) {
      if (lists[order[j].second].origin != LV_ORIGIN_CONFIG) continue;
      if (order[j].second < found.first) found = {order[j].second, &first};
      break;
    }
    g = e;
  }
  return found;
}

// One entry per prefix and list: the same prefix twice, or on two lists, is a mistake.
Status check_lists(const std::vector<ListEntry>& lists, const std::set<std::string>& override_names) {
  const auto [repeat, first] = first_repeat(lists);
  size_t n4 = 0, n6 = 0;
  for (size_t i = 0; i < lists.size(); ++i) {
    const ListEntry& e = lists[i];
    if (e.kind == LV_LIST_OVERRIDE && !override_names.contains(e.override_name))
      return at(e.where, fmt::format("no override named {}", quote_value(e.override_name)));
    if (e.expires_unix_ns && e.kind != LV_LIST_DENY)
      return at(e.where, fmt::format("{}: only deny entries expire", e.cidr.to_string()));
    if (i == repeat)
      return at(e.where, fmt::format("{} is listed twice (also at {})", e.cidr.to_string(), first->where.describe()));
    (e.cidr.family == 4 ? n4 : n6)++;
  }
  if (n4 > LV_MAX_LIST_ENTRIES || n6 > LV_MAX_LIST_ENTRIES)
    return usage_error(fmt::format("more than {} list entries for one family", LV_MAX_LIST_ENTRIES));
  return {};
}

}  // namespace

bool valid_name(std::string_view n) {
  if (n.empty() || n.size() >= LV_NAME_LEN) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
}

Status check_auto(const AutoSpec& a, const std::function<Where(std::string_view key)>& where_of) {
  struct Count {
    const char* key;
    uint64_t v, lo, hi;
    const char* unit;
  };
  for (Count n : {Count{"floor", a.floor, 1, kMaxAutoFloor, ""}, Count{"margin", a.margin, 1, kMaxAutoMargin, ""},
                  Count{"network_prefix4", a.network_prefix4, 1, 32, "/"},
                  Count{"network_prefix6", a.network_prefix6, 1, 128, "/"},
                  Count{"network_sources", a.network_sources, 1, kMaxNetworkSources, ""}})
    if (n.v < n.lo || n.v > n.hi)
      return at(where_of(n.key), fmt::format("{}{} is out of range", n.unit, n.v),
                fmt::format("give {} to {}", n.lo, format_count(n.hi)));
  struct Span {
    const char* key;
    uint64_t v, lo, hi;
  };
  for (Span d : {Span{"burst", a.burst_ns, 10 * kNsPerMs, kHourNs}, Span{"sustain", a.sustain_ns, 0, kHourNs},
                 Span{"release", a.release_ns, kSecondNs, kDayNs},
                 Span{"known_good_after", a.known_good_after_ns, kSecondNs, 30 * kDayNs},
                 Span{"known_good_for", a.known_good_for_ns, kSecondNs, 365 * kDayNs}})
    if (d.v < d.lo || d.v > d.hi)
      return at(where_of(d.key), fmt::format("{} is out of range", format_duration(d.v)),
                fmt::format("give {} to {}", format_duration(d.lo), format_duration(d.hi)));
  if (a.network_rate && !a.network_rate->set())
    return at(where_of("network_rate"), "0 is out of range",
              fmt::format("give 1 to {}, or leave network_rate out", format_count(kMaxRatePps)));
  if (a.network_rate) LV_TRY(check_rate(*a.network_rate, where_of("network_rate"), "network", kMaxRatePps, kMaxBurst));
  LV_TRY(check_order(where_of, "release", a.release_ns, "sustain", a.sustain_ns));
  return check_order(where_of, "known_good_for", a.known_good_for_ns, "known_good_after", a.known_good_after_ns);
}

// A flood of random sources answered at answer_cap spreads answer_cap / LV_ANSWER_CELLS
// SYN-ACKs a second over each cell of lv_answers. A per-network rate under twice that
// would refuse new clients their answers in such a flood, which the cap must never do.
Status check_answer_rate(const SynAuthSpec& s) {
  const uint64_t need = (2 * s.cap + LV_ANSWER_CELLS - 1) / LV_ANSWER_CELLS;
  if (s.per_network.rate >= need) return {};
  // At the key the file gave (answer_rate, else answer_cap), as every other error.
  Where w = s.where;
  if (w.key.empty()) w.key = "syn_auth.answer_rate";
  return at(w,
            fmt::format("{}{} a second is under {}: a flood of random sources at answer_cap {} would meet it in "
                        "levee's {} network cells and refuse new clients",
                        w.key == "syn_auth.answer_rate" ? "" : "answer_rate ", s.per_network.rate, need,
                        format_count(s.cap), LV_ANSWER_CELLS),
            fmt::format("raise answer_rate to at least {}, or lower answer_cap to at most {}", need,
                        s.per_network.rate * LV_ANSWER_CELLS / 2));
}

Status validate(const Policy& p, uint64_t now_unix_ns) {
  (void)now_unix_ns;
  std::set<std::string> class_names, override_names;
  LV_TRY(check_auto(p.autop, in_auto_table(p.autop)));
  LV_TRY(check_classes(p.classes, class_names));
  LV_TRY(check_overrides(p.overrides, class_names, override_names));
  if (has_syn_auth(p)) LV_TRY(check_answer_rate(p.syn_auth));
  return check_lists(p.lists, override_names);
}

Status check_ban_scopes(const std::vector<ClassSpec>& classes) {
  const ClassSpec* first = nullptr;
  for (const ClassSpec& c : classes) {
    if (!c.ban.set() || !c.ban.all_classes) continue;
    if (!first) {
      first = &c;
      continue;
    }
    if (c.prefix4 != first->prefix4 || c.prefix6 != first->prefix6)
      return at(or_class(c.ban.scope_where, c),
                fmt::format("class '{}' bans in every class per /{} (IPv4), /{} (IPv6), and class '{}' per /{}, /{}",
                            c.name, c.prefix4, c.prefix6, first->name, first->prefix4, first->prefix6),
                "a source has one ban in every class: give the classes with ban_scope = \"all\" the same prefix4 "
                "and prefix6, or ban_scope = \"class\"");
  }
  return {};
}

}  // namespace levee
