#include "policy/compile.hpp"

#include <arpa/inet.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "policy/class_ids.hpp"

namespace levee {
namespace {

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
      return !m.syn && !m.ported() && proto_ok(Proto::Icmp);
    case LV_L4_ICMP6:
      return !m.syn && !m.ported() && proto_ok(Proto::Icmp6);
    case LV_L4_OTHER:
      return !m.syn && !m.ported() && proto_ok(Proto::Other);
    case LV_L4_TCP_FRAG:
      return !m.syn && !m.ported() && proto_ok(Proto::Tcp);
    case LV_L4_UDP_FRAG:
      return !m.syn && !m.ported() && proto_ok(Proto::Udp);
    default:
      return false;
  }
}

unsigned __int128 mul128(uint64_t a, uint64_t b) { return static_cast<unsigned __int128>(a) * b; }

void copy_name(char (&dst)[LV_NAME_LEN], const std::string& src) {
  std::memset(dst, 0, sizeof dst);
  std::memcpy(dst, src.data(), std::min(src.size(), sizeof dst - 1));
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

// The class's autopilot (struct lv_auto). Admission "auto" without a budget: the
// threshold's settings and LV_CLASS_AUTO_ADMIT; they stay 0 otherwise (the datapath
// gives an arrival's charge back at the threshold's cost in a class with neither kind of
// admission: 0). Escalation wanted: the watched networks' prefixes and network_sources
// (0 with an explicit network_rate); in force (a network's limit to enforce): `watch`
// and LV_CLASS_ESCALATE. A class that wants it and has no packet limit yet keeps
// network_sources without the flag, so class_of() gives its escalate back and a packet
// limit given by `levee set` turns the watch on.
void compile_autopilot(const ClassSpec& c, lv_class& k) {
  const AutoSpec& a = c.autop;
  lv_auto& o = k.autop;
  const bool admit = c.admission_in_force() == Admission::Auto;
  if (admit) {
    const uint64_t floor = std::max<uint64_t>(a.floor, 1);
    k.flags |= LV_CLASS_AUTO_ADMIT;
    o.floor = static_cast<uint32_t>(floor);
    o.floor_cost = (LV_NSEC_PER_SEC + floor - 1) / floor;  // round up: never looser than the floor
    o.burst_ns = a.burst_ns;
    o.sustain_ns = a.sustain_ns;
    o.margin = static_cast<uint32_t>(a.margin);
  }
  if (c.escalate) {
    o.watch_prefix4 = static_cast<uint8_t>(std::min(a.network_prefix4, c.prefix4));
    o.watch_prefix6 = static_cast<uint8_t>(std::min(a.network_prefix6, c.prefix6));
    o.watch_mask4 = mask4_of(o.watch_prefix4);
    mask6_of(o.watch_prefix6, o.watch_mask6);
    o.network_sources = a.network_rate_set() ? 0 : static_cast<uint32_t>(a.network_sources);
    o.sample_shift = kWatchSampleShift;
  }
  if (c.escalates()) {
    k.flags |= LV_CLASS_ESCALATE;
    o.watch = compile_packet_limit(watch_rate(c));
  }
  if (admit || c.escalate) o.release_ns = a.release_ns;  // serves both
}

// The autopilot of a compiled class, back into `s` (compile_autopilot's inverse).
void autopilot_of(const lv_class& k, ClassSpec& s) {
  const lv_auto& o = k.autop;
  AutoSpec& a = s.autop;
  s.admission = (k.flags & LV_CLASS_AUTO_ADMIT) ? Admission::Auto
                : (k.flags & LV_CLASS_ADMIT)    ? Admission::Budget
                                                : Admission::Off;
  if (k.flags & LV_CLASS_AUTO_ADMIT) {
    a.floor = o.floor;
    a.margin = o.margin;
    a.burst_ns = o.burst_ns;
    a.sustain_ns = o.sustain_ns;
  }
  s.escalate = (k.flags & LV_CLASS_ESCALATE) || o.network_sources;
  if (s.escalate) {
    a.network_prefix4 = o.watch_prefix4;
    a.network_prefix6 = o.watch_prefix6;
    if (o.network_sources)
      a.network_sources = o.network_sources;
    else
      a.network_rate = Rate{o.watch.rate, o.watch.burst};
  }
  if (o.release_ns) a.release_ns = o.release_ns;
}

// Each class under its id, in first-match order; the ids. With `prior`, a class that
// keeps its id keeps its epoch and counter baseline, and one given another id moves to
// the next epoch (listed in new_ids).
std::vector<uint8_t> compile_classes(const std::vector<ClassSpec>& classes, uint64_t tick_ns, const lv_policy* prior,
                                     CompiledPolicy& out) {
  lv_policy& s = out.slot;
  const ClassIds prior_ids = prior ? class_ids(*prior) : ClassIds{};
  std::vector<uint8_t> ids = assign_class_ids(classes, prior_ids);
  if (prior)  // unused ids keep their epoch, so a later class given one moves past it
    for (unsigned id = 0; id < LV_MAX_CLASSES; ++id) s.classes[id].epoch = prior->classes[id].epoch;
  s.nr_classes = static_cast<uint32_t>(classes.size());
  for (size_t i = 0; i < classes.size(); ++i) {
    const uint8_t id = ids[i];
    const uint8_t epoch = s.classes[id].epoch;
    s.classes[id] = compile_class(classes[i], tick_ns);
    s.order[i] = id;
    auto kept = prior_ids.find(classes[i].name);
    if (prior && kept != prior_ids.end() && kept->second == id) {
      s.classes[id].epoch = epoch;
      s.class_base[id] = prior->class_base[id];
    } else if (prior) {
      s.classes[id].epoch = static_cast<uint8_t>(epoch + 1);
      out.new_ids.push_back(id);
    }
  }
  return ids;
}

// Each override's limits and the ids of the classes it applies in; their ids by name.
OverrideIds compile_overrides(const Policy& p, const std::vector<uint8_t>& ids, uint64_t tick_ns, lv_policy& s) {
  OverrideIds ov_ids;
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
    if (limit_tau_ok(k.pkt, tick_ns) && limit_tau_ok(k.bytes, tick_ns)) k.flags |= LV_CLASS_FAST_REJECT;
    copy_name(k.name, o.name);
    ov_ids[o.name] = static_cast<uint16_t>(i);
  }
  return ov_ids;
}

// What SYN authentication may answer ([syn_auth]): per network, and the cap shared by
// the CPUs.
void compile_answer(const SynAuthSpec& sa, lv_answer& a) {
  const uint64_t cpus = possible_cpus();
  a.per_network = compile_packet_limit(sa.per_network);
  a.cap_per_cpu = compile_packet_limit(Rate{std::max<uint64_t>(sa.cap / cpus, 1), sa.per_network.burst});
  a.prefix4 = static_cast<uint8_t>(sa.prefix4);
  a.prefix6 = static_cast<uint8_t>(sa.prefix6);
  a.mask4 = mask4_of(sa.prefix4);
  mask6_of(sa.prefix6, a.mask6);
  a.marks_per_network = sa.marks_per_network;
}

// The interface's settings, and what the slot derives from its classes.
void compile_interface(const Policy& p, lv_policy& s) {
  if (p.monitor) s.flags |= LV_POL_MONITOR;
  if (p.deny_in_monitor) s.flags |= LV_POL_MONITOR_DENY;
  if (p.iface.refuse_full) s.flags |= LV_POL_REFUSE_FULL;
  s.events = compile_packet_limit(events_rate(p.iface.events_per_second));
  // The map's size as the file asks; a controller changing a running attachment
  // recomputes it from the map it has (a reload cannot resize it).
  s.full_at = refuse_full_at(p.iface.max_sources.value_or(LV_DEFAULT_MAX_SOURCES), possible_cpus());
  compile_answer(p.syn_auth, s.answer);
  apply_interface(s);
}

}  // namespace

CompiledPolicy compile(const Policy& p, const Clocks& clk, const lv_policy* prior) {
  CompiledPolicy out;
  lv_policy& s = out.slot;
  const std::vector<uint8_t> ids = compile_classes(p.classes, clk.tick_ns, prior, out);
  const OverrideIds ov_ids = compile_overrides(p, ids, clk.tick_ns, s);
  std::snprintf(s.source, sizeof s.source, "%s", p.source.c_str());
  compile_table(p.classes, s.table, ids);
  if (std::any_of(p.classes.begin(), p.classes.end(), [](const ClassSpec& c) { return !c.match.sports.empty(); }))
    s.flags |= LV_POL_SPORT;
  compile_interface(p, s);
  compile_lists(p.lists, ov_ids, clk, out.list4, out.list6);
  s.nr_list4 = static_cast<uint32_t>(out.list4.size());
  s.nr_list6 = static_cast<uint32_t>(out.list6.size());
  return out;
}

lv_limit compile_packet_limit(const Rate& r) {
  if (!r.set()) return {};
  const uint64_t cost = (LV_NSEC_PER_SEC + r.rate - 1) / r.rate;  // round up: never looser
  return {.cost = cost, .tau_ns = (r.burst - 1) * cost, .rate = r.rate, .burst = r.burst};
}

Rate watch_rate(const ClassSpec& c) {
  if (!c.escalates()) return {};
  const AutoSpec& a = c.autop;
  Rate r = a.network_rate_set()
               ? *a.network_rate
               : Rate{std::min(a.network_sources * c.packets.rate, kMaxWatchRate), a.network_sources * c.packets.burst};
  // The datapath charges a sample 2^shift packets' cost at once: within the tolerance.
  r.burst = std::max<uint64_t>(r.burst, (uint64_t{1} << kWatchSampleShift) + 1);
  return r;
}

lv_limit compile_byte_limit(const Rate& r) {
  if (!r.set()) return {};
  // ns per byte in fixed point (LV_BYTE_SHIFT), rounded up likewise.
  const unsigned __int128 scaled = static_cast<unsigned __int128>(LV_NSEC_PER_SEC) << LV_BYTE_SHIFT;
  const auto cost = static_cast<uint64_t>((scaled + r.rate - 1) / r.rate);
  return {.cost = cost,
          .tau_ns = static_cast<uint64_t>(mul128(r.burst, cost) >> LV_BYTE_SHIFT),
          .rate = r.rate,
          .burst = r.burst};
}

void compile_table(const std::vector<ClassSpec>& classes, lv_class_table& t, const std::vector<uint8_t>& ids) {
  auto id_of = [&](size_t i) { return ids.empty() ? static_cast<uint8_t>(i) : ids[i]; };
  const uint8_t def = classes.empty() ? 0 : id_of(classes.size() - 1);
  std::memset(t.by_port, def, sizeof t.by_port);
  std::memset(t.by_kind, def, sizeof t.by_kind);
  std::memset(t.by_sport, LV_NO_SPORT_CLASS, sizeof t.by_sport);
  std::memset(t.rank, LV_MAX_CLASSES, sizeof t.rank);
  // Paint from the last class to the first, so the first match is what remains. A class
  // of source ports paints by_sport only: it never takes a packet by destination port.
  for (size_t i = classes.size(); i-- > 0;) {
    const Match& m = classes[i].match;
    const uint8_t id = id_of(i);
    t.rank[id] = static_cast<uint8_t>(i);
    for (unsigned kind = 0; kind < LV_L4_KINDS; ++kind) {
      if (!kind_matches(m, kind)) continue;
      if (kind >= LV_L4_PORTED) {
        t.by_kind[kind] = id;
        continue;
      }
      auto& row = m.sports.empty() ? t.by_port[kind] : t.by_sport[kind];
      const auto& ranges = m.sports.empty() ? m.ports : m.sports;
      if (ranges.empty()) {
        std::memset(row, id, sizeof row);
        continue;
      }
      for (const PortRange& r : ranges) std::memset(&row[r.first], id, r.last - r.first + 1u);
    }
  }
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
  const SynAuth syn = c.syn_auth_in_force();
  if (syn == SynAuth::Auto)
    k.flags |= LV_CLASS_SYN_AUTO;
  else if (syn != SynAuth::Off)
    k.flags |= LV_CLASS_SYN_AUTH;
  if (syn == SynAuth::Reset) k.flags |= LV_CLASS_SYN_RESET;
  compile_autopilot(c, k);

  // The cached clock may be a tick stale for any limit the datapath checks on it. The
  // autopilot's refusals are remembered in the hot entry too: an escalated network's
  // (watch) and the allowance of sources on probation (tolerance burst_ns).
  bool fast = true;
  for (const lv_limit* l :
       {&k.pkt, &k.bytes, &k.admit, &k.net_pkt, &k.net_bytes, &k.total_pkt, &k.total_bytes, &k.autop.watch})
    fast = fast && limit_tau_ok(*l, tick_ns);
  if (k.flags & LV_CLASS_AUTO_ADMIT) fast = fast && k.autop.burst_ns >= 2 * tick_ns;
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
  // "proxy" and "cookie" compile alike: the interface decides (lv_control.handoff).
  s.syn_auth = (c.flags & LV_CLASS_SYN_AUTH)   ? ((c.flags & LV_CLASS_SYN_RESET) ? SynAuth::Reset : SynAuth::Cookie)
               : (c.flags & LV_CLASS_SYN_AUTO) ? SynAuth::Auto
                                               : SynAuth::Off;
  autopilot_of(c, s);
  return s;
}

}  // namespace levee
