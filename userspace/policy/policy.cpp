#include "policy/policy.hpp"

#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "core/units.hpp"
#include "rules.h"

namespace levee {
namespace {

Error at(const Where& w, std::string what, std::string hint = {}) {
  return usage_error(w.describe().empty() ? what : fmt::format("{}: {}", w.describe(), what), std::move(hint));
}

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() >= LV_NAME_LEN) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
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

bool has(const std::vector<Proto>& v, Proto p) { return std::find(v.begin(), v.end(), p) != v.end(); }

// Which l4 kinds a match can see at all.
bool kind_matches(const Match& m, unsigned kind) {
  auto proto_ok = [&](Proto p) { return m.protos.empty() || has(m.protos, p); };
  switch (kind) {
    case LV_L4_TCP_SYN:
      return proto_ok(Proto::Tcp);
    case LV_L4_TCP:
      return !m.syn && proto_ok(Proto::Tcp);
    case LV_L4_UDP:
      return !m.syn && proto_ok(Proto::Udp);
    case LV_L4_ICMP:
      return !m.syn && m.ports.empty() && proto_ok(Proto::Icmp);
    case LV_L4_ICMP6:
      return !m.syn && m.ports.empty() && proto_ok(Proto::Icmp6);
    case LV_L4_OTHER:
      return !m.syn && m.ports.empty() && proto_ok(Proto::Other);
    case LV_L4_TCP_FRAG:
      return !m.syn && m.ports.empty() && proto_ok(Proto::Tcp);
    case LV_L4_UDP_FRAG:
      return !m.syn && m.ports.empty() && proto_ok(Proto::Udp);
    default:
      return false;
  }
}

unsigned __int128 mul128(uint64_t a, uint64_t b) { return static_cast<unsigned __int128>(a) * b; }

void copy_name(char (&dst)[LV_NAME_LEN], const std::string& src) {
  std::memset(dst, 0, sizeof dst);
  std::memcpy(dst, src.data(), std::min(src.size(), sizeof dst - 1));
}

// Prefix keys independent of family, for fallback search: (len, masked address).
using PrefixKey = std::pair<unsigned, std::array<uint8_t, 16>>;

PrefixKey prefix_of(const lv_lpm4& k) {
  std::array<uint8_t, 16> a{};
  std::memcpy(a.data(), &k.addr, 4);
  return {k.prefixlen, a};
}
PrefixKey prefix_of(const lv_lpm6& k) {
  std::array<uint8_t, 16> a{};
  std::memcpy(a.data(), k.addr, 16);
  return {k.prefixlen, a};
}

int precedence(uint8_t kind) {  // at one prefix: allow beats deny beats override
  switch (kind) {
    case LV_LIST_ALLOW:
      return 3;
    case LV_LIST_DENY:
      return 2;
    case LV_LIST_OVERRIDE:
      return 1;
    default:
      return 0;
  }
}

uint64_t limit_tau_ok(const lv_limit& l, uint64_t tick_ns) { return l.cost == 0 || l.tau_ns >= 2 * tick_ns; }

uint32_t mask4_of(unsigned prefix) { return htonl(prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix)); }

void mask6_of(unsigned prefix, uint32_t (&out)[4]) {
  for (unsigned w = 0; w < 4; ++w) {
    unsigned bits = prefix > 32 * w ? prefix - 32 * w : 0;
    uint32_t m = bits >= 32 ? ~uint32_t{0} : bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
    out[w] = htonl(m);
  }
}

// Where a class's own key was, or the class itself.
const Where& or_class(const Where& w, const ClassSpec& c) { return w.file.empty() && !w.line ? c.where : w; }

Status check_class_extras(const ClassSpec& c) {
  LV_TRY(check_rate(c.new_sources, c.where, "new-source", kMaxRatePps, kMaxBurst));
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
      return at(w, "a ban duration is over 100 years", "give e.g. \"2s\", \"10m\" or \"1h\"");
    if (b.max_or_default() < b.ban_ns)
      return at(w,
                fmt::format("class '{}': ban_max {} is shorter than the first ban, {}", c.name,
                            format_duration(b.max_or_default()), format_duration(b.ban_ns)),
                "give ban_max at least as long as ban");
  }
  return {};
}

}  // namespace

const char* list_kind_name(lv_list_kind k) {
  switch (k) {
    case LV_LIST_ALLOW:
      return "allow";
    case LV_LIST_DENY:
      return "deny";
    case LV_LIST_OVERRIDE:
      return "override";
    default:
      return "none";
  }
}

const char* list_origin_name(lv_list_origin o) {
  switch (o) {
    case LV_ORIGIN_CONFIG:
      return "config";
    case LV_ORIGIN_CLI:
      return "cli";
    case LV_ORIGIN_IMPORT:
      return "import";
  }
  return "unknown";
}

std::string Where::describe() const {
  std::string s = file;
  if (line) s += fmt::format(":{}", line);
  if (!key.empty()) s += (s.empty() ? "" : ": ") + key;
  return s;
}

std::optional<Proto> parse_proto(std::string_view s) {
  if (s == "tcp") return Proto::Tcp;
  if (s == "udp") return Proto::Udp;
  if (s == "icmp") return Proto::Icmp;
  if (s == "icmpv6" || s == "icmp6") return Proto::Icmp6;
  if (s == "other") return Proto::Other;
  return std::nullopt;
}

const char* proto_name(Proto p) {
  switch (p) {
    case Proto::Tcp:
      return "tcp";
    case Proto::Udp:
      return "udp";
    case Proto::Icmp:
      return "icmp";
    case Proto::Icmp6:
      return "icmpv6";
    case Proto::Other:
      return "other";
  }
  return "?";
}

Policy one_class_policy(const Limits& l) {
  Policy p;
  ClassSpec c;
  c.name = "default";
  c.packets = {l.rate, l.burst};
  c.prefix4 = l.prefix4;
  c.prefix6 = l.prefix6;
  p.classes.push_back(c);
  p.source = "command line";
  return p;
}

Status validate(const Policy& p, uint64_t now_unix_ns) {
  (void)now_unix_ns;
  if (p.classes.empty()) return usage_error("the policy has no classes", "give at least a default class");
  if (p.classes.size() > LV_MAX_CLASSES)
    return at(p.classes[LV_MAX_CLASSES].where, fmt::format("more than {} classes", LV_MAX_CLASSES));
  std::set<std::string> names;
  for (size_t i = 0; i < p.classes.size(); ++i) {
    const ClassSpec& c = p.classes[i];
    const bool is_default = i + 1 == p.classes.size();
    if (!valid_name(c.name))
      return at(c.where, fmt::format("class name '{}' is not valid", c.name),
                fmt::format("use 1 to {} letters, digits, '-', '_' or '.'", LV_NAME_LEN - 1));
    if (!names.insert(c.name).second) return at(c.where, fmt::format("class '{}' is defined twice", c.name));
    if (is_default && !c.match.empty())
      return at(c.where, fmt::format("the default class '{}' has a match", c.name),
                "the last class is the default: it takes everything the others do not");
    if (!is_default && c.match.empty())
      return at(c.where, fmt::format("class '{}' matches everything, so no class after it can match", c.name),
                "give it a match, or make it the default class");
    for (const PortRange& r : c.match.ports)
      if (r.first > r.last) return at(c.where, fmt::format("port range {}-{} is empty", r.first, r.last));
    for (Proto pr : c.match.protos) {
      if (!c.match.ports.empty() && pr != Proto::Tcp && pr != Proto::Udp)
        return at(c.where, fmt::format("class '{}' matches ports but protocol {} has none", c.name, proto_name(pr)),
                  "ports apply to tcp and udp");
      if (c.match.syn && pr != Proto::Tcp)
        return at(c.where, fmt::format("class '{}' matches SYN but protocol {} is not tcp", c.name, proto_name(pr)));
    }
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
    LV_TRY(check_class_extras(c));
  }
  LV_TRY(check_ban_scopes(p.classes));

  if (p.overrides.size() > LV_MAX_OVERRIDES)
    return at(p.overrides[LV_MAX_OVERRIDES].where, fmt::format("more than {} overrides", LV_MAX_OVERRIDES));
  std::set<std::string> ov_names;
  for (const OverrideSpec& o : p.overrides) {
    if (!valid_name(o.name))
      return at(o.where, fmt::format("override name '{}' is not valid", o.name),
                fmt::format("use 1 to {} letters, digits, '-', '_' or '.'", LV_NAME_LEN - 1));
    if (!ov_names.insert(o.name).second) return at(o.where, fmt::format("override '{}' is defined twice", o.name));
    if (!o.packets.set() && !o.bytes.set())
      return at(o.where, fmt::format("override '{}' has no limit", o.name),
                "give rate and burst, bytes_rate and bytes_burst, or both");
    LV_TRY(check_rate(o.packets, o.where, "packet", kMaxRatePps, kMaxBurst));
    LV_TRY(check_rate(o.bytes, o.where, "byte", kMaxRateBytes, kMaxBurstBytes));
    for (const auto& cn : o.classes)
      if (!names.count(cn)) return at(o.where, fmt::format("override '{}' names no class '{}'", o.name, cn));
  }

  // One entry per prefix and list: the same prefix twice, or on two lists, is a mistake.
  std::map<std::pair<uint8_t, PrefixKey>, const ListEntry*> seen;
  size_t n4 = 0, n6 = 0;
  for (const ListEntry& e : p.lists) {
    if (e.kind == LV_LIST_OVERRIDE && !ov_names.count(e.override_name))
      return at(e.where, fmt::format("no override named '{}'", e.override_name));
    if (e.expires_unix_ns && e.kind != LV_LIST_DENY)
      return at(e.where, fmt::format("{}: only deny entries expire", e.cidr.to_string()));
    auto [it, fresh] = seen.emplace(std::make_pair(e.cidr.family, PrefixKey{e.cidr.len, e.cidr.addr}), &e);
    if (!fresh && it->second->origin == LV_ORIGIN_CONFIG && e.origin == LV_ORIGIN_CONFIG) {
      const ListEntry& first = *it->second;
      return at(e.where, fmt::format("{} is listed twice (also at {})", e.cidr.to_string(), first.where.describe()));
    }
    (e.cidr.family == 4 ? n4 : n6)++;
  }
  if (n4 > LV_MAX_LIST_ENTRIES || n6 > LV_MAX_LIST_ENTRIES)
    return usage_error(fmt::format("more than {} list entries for one family", LV_MAX_LIST_ENTRIES));
  return {};
}

lv_limit compile_packet_limit(const Rate& r) {
  lv_limit l{};
  if (!r.set()) return l;
  l.rate = r.rate;
  l.burst = r.burst;
  l.cost = (LV_NSEC_PER_SEC + r.rate - 1) / r.rate;  // round up: never looser
  l.tau_ns = (r.burst - 1) * l.cost;
  return l;
}

lv_limit compile_byte_limit(const Rate& r) {
  lv_limit l{};
  if (!r.set()) return l;
  l.rate = r.rate;
  l.burst = r.burst;
  unsigned __int128 scaled = static_cast<unsigned __int128>(LV_NSEC_PER_SEC) << LV_BYTE_SHIFT;
  l.cost = static_cast<uint64_t>((scaled + r.rate - 1) / r.rate);
  l.tau_ns = static_cast<uint64_t>(mul128(r.burst, l.cost) >> LV_BYTE_SHIFT);
  return l;
}

void compile_table(const std::vector<ClassSpec>& classes, lv_class_table& t, const std::vector<uint8_t>& ids) {
  auto id_of = [&](size_t i) { return ids.empty() ? static_cast<uint8_t>(i) : ids[i]; };
  const uint8_t def = classes.empty() ? 0 : id_of(classes.size() - 1);
  std::memset(&t, def, sizeof t);
  // Paint from the last class to the first, so the first match is what remains.
  for (size_t i = classes.size(); i-- > 0;) {
    const Match& m = classes[i].match;
    const uint8_t id = id_of(i);
    for (unsigned kind = 0; kind < LV_L4_KINDS; ++kind) {
      if (!kind_matches(m, kind)) continue;
      if (kind >= LV_L4_PORTED) {
        t.by_kind[kind] = id;
        continue;
      }
      if (m.ports.empty()) {
        std::memset(t.by_port[kind], id, sizeof t.by_port[kind]);
        continue;
      }
      for (const PortRange& r : m.ports) std::memset(&t.by_port[kind][r.first], id, r.last - r.first + 1u);
    }
  }
}

template <typename Key>
void compute_fallbacks(std::vector<std::pair<Key, lv_list_value>>& entries) {
  std::map<PrefixKey, const lv_list_value*> by_prefix;
  for (const auto& [k, v] : entries) by_prefix[prefix_of(k)] = &v;
  // The nearest entry covering `pk` (strictly shorter) that is still in force after
  // `after_ns` (never expires, or expires later), or nullptr; its length in *len.
  auto covering = [&](const PrefixKey& pk, unsigned from_len, uint64_t after_ns,
                      unsigned* len) -> const lv_list_value* {
    for (unsigned l = from_len; l-- > 0;) {
      auto it = by_prefix.find({l, mask_prefix(pk.second, l)});
      if (it == by_prefix.end()) continue;
      const uint64_t e = it->second->expires_ns;
      if (e == 0 || e > after_ns) {
        *len = l;
        return it->second;
      }
    }
    return nullptr;
  };
  std::vector<std::tuple<uint8_t, uint16_t, uint64_t, uint8_t, uint16_t>> computed(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [k, v] = entries[i];
    auto& [ak, ao, ae, tk, to] = computed[i];
    ak = LV_LIST_NONE, ao = 0, ae = 0, tk = LV_LIST_NONE, to = 0;
    if (!v.expires_ns) continue;
    const PrefixKey pk = prefix_of(k);
    unsigned alen = 0, tlen = 0;
    const lv_list_value* a = covering(pk, pk.first, v.expires_ns, &alen);
    if (!a) continue;
    ak = a->kind, ao = a->override_id, ae = a->expires_ns;
    if (!a->expires_ns) continue;
    // The covering entry expires later: what covers both once it has. Only an entry
    // that never expires qualifies (expires_ns == 0 is the only value "after" the max).
    if (const lv_list_value* t = covering(pk, alen, UINT64_MAX, &tlen)) tk = t->kind, to = t->override_id;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    lv_list_value& v = entries[i].second;
    std::tie(v.after_kind, v.after_override, v.after_expires_ns, v.then_kind, v.then_override) = computed[i];
  }
}
template void compute_fallbacks(std::vector<std::pair<lv_lpm4, lv_list_value>>&);
template void compute_fallbacks(std::vector<std::pair<lv_lpm6, lv_list_value>>&);

ClassIds class_ids(const lv_policy& slot) {
  ClassIds out;
  for (uint8_t id : class_order(slot)) out[name_of(slot.classes[id].name)] = id;
  return out;
}

std::vector<uint8_t> class_order(const lv_policy& slot) {
  std::vector<uint8_t> out;
  for (uint32_t i = 0; i < std::min<uint32_t>(slot.nr_classes, LV_MAX_CLASSES); ++i)
    out.push_back(slot.order[i] & (LV_MAX_CLASSES - 1));
  return out;
}

std::vector<uint8_t> assign_class_ids(const std::vector<ClassSpec>& classes, const ClassIds& prior) {
  std::vector<uint8_t> ids(classes.size(), 0);
  std::vector<bool> taken(LV_MAX_CLASSES, false), kept(classes.size(), false), freed(LV_MAX_CLASSES, false);
  for (const auto& [name, id] : prior) freed[id & (LV_MAX_CLASSES - 1)] = true;
  for (size_t i = 0; i < classes.size(); ++i) {
    auto it = prior.find(classes[i].name);
    if (it == prior.end() || taken[it->second]) continue;
    ids[i] = it->second;
    taken[it->second] = kept[i] = true;
    freed[it->second] = false;
  }
  for (size_t i = 0; i < classes.size(); ++i) {
    if (kept[i]) continue;
    unsigned id = 0;
    while (id < LV_MAX_CLASSES && (taken[id] || freed[id])) ++id;
    if (id == LV_MAX_CLASSES)  // every free id was just freed: reuse one after all
      for (id = 0; taken[id]; ++id) {
      }
    ids[i] = static_cast<uint8_t>(id);
    taken[id] = true;
  }
  return ids;
}

CompiledPolicy compile(const Policy& p, const Clocks& clk, const lv_policy* prior) {
  CompiledPolicy out;
  lv_policy& s = out.slot;
  const ClassIds prior_ids = prior ? class_ids(*prior) : ClassIds{};
  const std::vector<uint8_t> ids = assign_class_ids(p.classes, prior_ids);
  if (prior)  // unused ids keep their epoch, so a later class given one moves past it
    for (unsigned id = 0; id < LV_MAX_CLASSES; ++id) s.classes[id].epoch = prior->classes[id].epoch;
  s.nr_classes = static_cast<uint32_t>(p.classes.size());
  for (size_t i = 0; i < p.classes.size(); ++i) {
    const uint8_t id = ids[i];
    const uint8_t epoch = s.classes[id].epoch;
    s.classes[id] = compile_class(p.classes[i], clk.tick_ns);
    s.order[i] = id;
    auto kept = prior_ids.find(p.classes[i].name);
    if (prior && kept != prior_ids.end() && kept->second == id) {
      s.classes[id].epoch = epoch;
      s.class_base[id] = prior->class_base[id];
    } else if (prior) {
      s.classes[id].epoch = static_cast<uint8_t>(epoch + 1);
      out.new_ids.push_back(id);
    }
  }
  std::map<std::string, uint16_t> ov_ids;
  s.nr_overrides = static_cast<uint32_t>(p.overrides.size());
  for (size_t i = 0; i < p.overrides.size(); ++i) {
    const OverrideSpec& o = p.overrides[i];
    lv_override& k = s.overrides[i];
    k.pkt = compile_packet_limit(o.packets);
    k.bytes = compile_byte_limit(o.bytes);
    if (o.classes.empty()) {
      for (uint8_t id : ids) k.classes |= uint64_t{1} << id;
    } else {
      for (size_t c = 0; c < p.classes.size(); ++c)
        if (std::find(o.classes.begin(), o.classes.end(), p.classes[c].name) != o.classes.end())
          k.classes |= uint64_t{1} << ids[c];
    }
    if (limit_tau_ok(k.pkt, clk.tick_ns) && limit_tau_ok(k.bytes, clk.tick_ns)) k.flags |= LV_CLASS_FAST_REJECT;
    copy_name(k.name, o.name);
    ov_ids[o.name] = static_cast<uint16_t>(i);
  }
  std::snprintf(s.source, sizeof s.source, "%s", p.source.c_str());
  compile_table(p.classes, s.table, ids);
  if (p.monitor) s.flags |= LV_POL_MONITOR;
  if (p.deny_in_monitor) s.flags |= LV_POL_MONITOR_DENY;
  if (p.iface.refuse_full) s.flags |= LV_POL_REFUSE_FULL;
  s.events = compile_packet_limit(events_rate(p.iface.events_per_second));
  // The map's size as the file asks; a controller changing a running attachment
  // recomputes it from the map it has (a reload cannot resize it).
  s.full_at = refuse_full_at(p.iface.max_sources.value_or(LV_DEFAULT_MAX_SOURCES), possible_cpus());
  apply_interface(s);

  // Lists: one value per prefix, the higher precedence winning; expired entries dropped.
  std::map<std::pair<uint8_t, PrefixKey>, std::pair<lv_list_value, int>> merged;
  for (const ListEntry& e : p.lists) {
    lv_list_value v{};
    v.kind = static_cast<uint8_t>(e.kind);
    v.origin = static_cast<uint8_t>(e.origin);
    if (e.kind == LV_LIST_OVERRIDE) v.override_id = ov_ids.at(e.override_name);
    if (e.expires_unix_ns) {
      if (e.expires_unix_ns <= clk.now_unix_ns) continue;  // already over
      v.expires_ns = clk.to_mono(e.expires_unix_ns);
    }
    auto key = std::make_pair(e.cidr.family, PrefixKey{e.cidr.len, e.cidr.addr});
    auto it = merged.find(key);
    if (it == merged.end()) {
      merged.emplace(key, std::make_pair(v, precedence(v.kind)));
    } else if (precedence(v.kind) > it->second.second) {
      it->second = {v, precedence(v.kind)};
    }
  }
  for (const auto& [k, vp] : merged) {
    const auto& [family, pk] = k;
    if (family == 4) {
      lv_lpm4 key{pk.first, 0};
      std::memcpy(&key.addr, pk.second.data(), 4);
      out.list4.emplace_back(key, vp.first);
    } else {
      lv_lpm6 key{pk.first, {}};
      std::memcpy(key.addr, pk.second.data(), 16);
      out.list6.emplace_back(key, vp.first);
    }
  }
  compute_fallbacks(out.list4);
  compute_fallbacks(out.list6);
  s.nr_list4 = static_cast<uint32_t>(out.list4.size());
  s.nr_list6 = static_cast<uint32_t>(out.list6.size());
  return out;
}

lv_class compile_class(const ClassSpec& c, uint64_t tick_ns, unsigned cpus) {
  lv_class k{};
  k.pkt = compile_packet_limit(c.packets);
  k.bytes = compile_byte_limit(c.bytes);
  k.prefix4 = static_cast<uint8_t>(c.prefix4);
  k.prefix6 = static_cast<uint8_t>(c.prefix6);
  k.mask4 = mask4_of(c.prefix4);
  mask6_of(c.prefix6, k.mask6);

  // Admission is a packet limit whose packets are new sources.
  k.admit = compile_packet_limit(c.new_sources);
  if (k.admit.cost) k.flags |= LV_CLASS_ADMIT;

  k.net_prefix4 = static_cast<uint8_t>(c.network.prefix4);
  k.net_prefix6 = static_cast<uint8_t>(c.network.prefix6);
  k.net_mask4 = mask4_of(c.network.prefix4);
  mask6_of(c.network.prefix6, k.net_mask6);
  k.net_pkt = compile_packet_limit(c.network.packets);
  k.net_bytes = compile_byte_limit(c.network.bytes);
  if (k.net_pkt.cost || k.net_bytes.cost) k.flags |= LV_CLASS_NETWORK;

  k.total_pkt = compile_packet_limit(c.total.packets);
  k.total_bytes = compile_byte_limit(c.total.bytes);
  if (k.total_pkt.cost || k.total_bytes.cost) k.flags |= LV_CLASS_TOTAL;
  k.lease_ns = lease_ns(k, cpus ? cpus : possible_cpus());

  if (c.ban.set()) {
    k.ban_ns = c.ban.ban_ns;
    k.ban_max_ns = c.ban.max_or_default();
    k.forget_ns = c.ban.forget_or_default();
    k.flags |= LV_CLASS_BAN | (c.ban.all_classes ? LV_CLASS_BAN_ALL : 0);
  }
  if (c.monitor) k.flags |= LV_CLASS_MONITOR_OWN | LV_CLASS_MONITOR;

  // The cached clock may be a tick stale for any limit the datapath checks on it.
  bool fast = true;
  for (const lv_limit* l : {&k.pkt, &k.bytes, &k.admit, &k.net_pkt, &k.net_bytes, &k.total_pkt, &k.total_bytes})
    fast = fast && limit_tau_ok(*l, tick_ns);
  if (fast) k.flags |= LV_CLASS_FAST_REJECT;
  copy_name(k.name, c.name);
  return k;
}

uint64_t lease_ns(const lv_class& c, unsigned cpus) {
  constexpr uint64_t kMaxLeaseNs = kNsPerMs;
  if (!c.total_pkt.cost && !c.total_bytes.cost) return 0;
  // Every CPU may hold a lease the class has not spent yet: half the tolerance shared
  // among them keeps the class's excess over burst + rate * t a small part of the burst.
  uint64_t lease = kMaxLeaseNs;
  for (const lv_limit* l : {&c.total_pkt, &c.total_bytes})
    if (l->cost) lease = std::min<uint64_t>(lease, l->tau_ns / (2 * uint64_t{std::max(cpus, 1u)}));
  return lease;
}

uint64_t refuse_full_at(uint64_t max_entries, unsigned cpus) {
  // The LRU hands each CPU free nodes in batches (LOCAL_FREE_TARGET, 128 in 6.x
  // kernels) and evicts when its own run out: counting to within two batches per CPU
  // (and never more than half the map) refuses before the LRU would evict.
  const uint64_t slack = std::min<uint64_t>(max_entries / 2, 256ull * std::max(cpus, 1u));
  return max_entries - slack;
}

unsigned possible_cpus() {
  const int n = libbpf_num_possible_cpus();
  return n > 0 ? static_cast<unsigned>(n) : 1;
}

void apply_interface(lv_policy& s) {
  const bool all_monitor = s.flags & LV_POL_MONITOR;
  s.flags &= ~uint32_t{LV_POL_BAN_ALL};
  s.ban_mask4 = 0;
  std::memset(s.ban_mask6, 0, sizeof s.ban_mask6);
  for (uint8_t id : class_order(s)) {
    lv_class& c = s.classes[id];
    c.flags &= ~uint32_t{LV_CLASS_MONITOR};
    if (all_monitor || (c.flags & LV_CLASS_MONITOR_OWN)) c.flags |= LV_CLASS_MONITOR;
    // validate() saw to it that every class banning in every class has one prefix.
    if ((c.flags & LV_CLASS_BAN) && (c.flags & LV_CLASS_BAN_ALL) && !(s.flags & LV_POL_BAN_ALL)) {
      s.flags |= LV_POL_BAN_ALL;
      s.ban_mask4 = c.mask4;
      std::memcpy(s.ban_mask6, c.mask6, sizeof s.ban_mask6);
    }
  }
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

namespace {

// The address in a packet's layout (struct lv_packet), masked into a key by the rule
// the datapath uses (rules.h).
lv_key masked_key(const Cidr& addr, uint32_t mask4, const uint32_t* mask6, uint16_t class_id, uint8_t flags,
                  uint8_t epoch) {
  uint32_t words[4] = {0, 0, htonl(0xffff), 0};  // IPv4-mapped
  uint8_t family = LV_AF_INET;
  if (addr.family == 4) {
    std::memcpy(&words[3], addr.addr.data(), 4);
  } else {
    std::memcpy(words, addr.addr.data(), 16);
    family = LV_AF_INET6;
  }
  lv_key k{};
  lv_key_mask(&k, words, family, mask4, mask6, class_id, flags, epoch);
  return k;
}

}  // namespace

lv_key source_key(const Cidr& addr, const lv_class& c, unsigned id) {
  return masked_key(addr, c.mask4, c.mask6, static_cast<uint16_t>(id), 0, c.epoch);
}

lv_key network_key(const Cidr& addr, const lv_class& c, unsigned id) {
  return masked_key(addr, c.net_mask4, c.net_mask6, static_cast<uint16_t>(id), LV_KEY_NETWORK, c.epoch);
}

lv_key ban_all_key(const Cidr& addr, const lv_policy& p) {
  return masked_key(addr, p.ban_mask4, p.ban_mask6, LV_ALL_CLASSES, 0, 0);
}

ClassSpec class_of(const lv_class& c) {
  ClassSpec s;
  s.name = name_of(c.name);
  s.packets = {c.pkt.rate, c.pkt.burst};
  s.bytes = {c.bytes.rate, c.bytes.burst};
  s.prefix4 = c.prefix4;
  s.prefix6 = c.prefix6;
  s.new_sources = {c.admit.rate, c.admit.burst};
  if (c.net_prefix4) s.network.prefix4 = c.net_prefix4;
  if (c.net_prefix6) s.network.prefix6 = c.net_prefix6;
  s.network.packets = {c.net_pkt.rate, c.net_pkt.burst};
  s.network.bytes = {c.net_bytes.rate, c.net_bytes.burst};
  s.total.packets = {c.total_pkt.rate, c.total_pkt.burst};
  s.total.bytes = {c.total_bytes.rate, c.total_bytes.burst};
  if (c.flags & LV_CLASS_BAN) {
    s.ban.ban_ns = c.ban_ns;
    s.ban.max_ns = c.ban_max_ns;
    s.ban.forget_ns = c.forget_ns;
    s.ban.all_classes = c.flags & LV_CLASS_BAN_ALL;
  }
  s.monitor = c.flags & LV_CLASS_MONITOR_OWN;
  return s;
}

}  // namespace levee
