#include "datapath/inspect.hpp"

#include <bpf/bpf.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/clock.hpp"
#include "core/quote.hpp"
#include "datapath/crowdsec_maps.hpp"
#include "datapath/kernel.hpp"
#include "datapath/known_good.hpp"
#include "datapath/list_entries.hpp"
#include "datapath/policy_map.hpp"
#include "guard.h"
#include "policy/class_ids.hpp"
#include "policy/keys.hpp"
#include "policy/policy.hpp"

namespace levee {
namespace {

// The link: which program, on which interface, in which mode.
Status read_link(const Pinned& p, IfaceStatus& s) {
  bpf_link_info li{};
  uint32_t len = sizeof li;
  if (bpf_obj_get_info_by_fd(p.link.get(), &li, &len) != 0) return sys_error(fmt::format("inspect {} link", p.iface));
  s.link_id = li.id;
  s.prog_id = li.prog_id;
  s.ifindex = li.xdp.ifindex;
  s.defunct = s.ifindex == 0;
  // Pins are shared by every network namespace, interface indexes are not: the index
  // means our interface only if it carries the pinned name here.
  s.other_netns = !s.defunct && iface_name(s.ifindex) != p.iface;
  s.mode = s.defunct || s.other_netns ? "" : attached_mode(s.ifindex);
  return {};
}

// The active policy: its classes, overrides and list entries by kind.
Status read_policy(const Pinned& p, IfaceStatus& s) {
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  const lv_policy& pol = pm.active();
  s.source = name_of(pol.source);
  s.class_ids = class_order(pol);
  for (uint8_t id : s.class_ids) s.classes.push_back(pol.classes[id]);
  s.overrides.assign(pol.overrides, pol.overrides + std::min<uint32_t>(pol.nr_overrides, LV_MAX_OVERRIDES));
  s.generation = pol.generation;
  LV_TRY_ASSIGN(auto lists, pm.active_lists());
  for (const AnyEntry& e : flatten_lists(lists)) {
    if (e.value.kind == LV_LIST_ALLOW)
      ++s.allow;
    else if (e.value.kind == LV_LIST_DENY)
      ++s.deny;
    else if (e.value.kind == LV_LIST_OVERRIDE)
      ++s.override_entries;
  }
  s.policy_flags = pol.flags;
  s.full_at = pol.full_at;
  return {};
}

// SYN authentication's proxy as lv_control says it and the interface has it now.
void read_syn(const Pinned& p, const PolicyMap& pm, IfaceStatus& s) {
  s.good_epoch = pm.control().good_epoch;
  const lv_policy& pol = pm.active();
  bool any = false;
  for (const lv_class& k : s.classes) any |= (k.flags & LV_CLASS_SYN_ANY) != 0;
  if (!any) return;
  const lv_control& ctl = pm.control();
  IfaceStatus::SynAuth syn;
  syn.proxying = ctl.handoff != 0;
  syn.tcp_off = ctl.tcp_off;
  syn.tc = {ctl.tc_handle, ctl.tc_priority};
  syn.own_hook = (ctl.tc_flags & LV_TC_OWN_HOOK) != 0;
  syn.marks_per_network = pol.answer.marks_per_network;
  syn.prefix4 = pol.answer.prefix4;
  syn.prefix6 = pol.answer.prefix6;
  // Another namespace's interface index is not ours to look at (other_netns).
  if (syn.tc.handle && !s.defunct && !s.other_netns)
    syn.tc_present = handoff_at(s.ifindex, syn.tc, prog_identity(p.handoff.get()));
  syn.sysctls = read_tcp_sysctls();
  s.syn = syn;
}

// What only a walk of lv_state and lv_bans tells.
Status walk_maps(const Pinned& p, IfaceStatus& s) {
  const uint64_t now = Clocks::read().now_mono_ns;
  StateCounts n;
  LV_TRY(for_each_source(p.state.get(), [&](const lv_key& k, const lv_state& st) {
    count_key(n, k, st);
    if (!(k.family & LV_KEY_WATCH) || k.class_id >= LV_MAX_CLASSES) return;
    const auto w = std::bit_cast<lv_watch>(st);
    for (size_t i = 0; i < s.class_ids.size(); ++i)
      if (s.class_ids[i] == k.class_id && lv_watch_escalated(&w, now, s.classes[i].autop.release_ns))
        s.escalated.push_back({k, w});
  }));
  s.sources = n.sources;
  s.networks = n.networks;
  s.probation = n.probation;
  s.watched = n.watched;
  LV_TRY_ASSIGN(auto cs, count_crowdsec(p, now));
  s.crowdsec = cs.entries;
  s.crowdsec_in_force = cs.in_force;
  return for_each_ban(p.bans.get(), [&](const lv_key&, const lv_ban& b) {
    ++s.ban_records;
    if (b.until_ns > now) ++s.bans_active;
  });
}

}  // namespace

Result<IfaceStatus> query_status(const Pinned& p, bool walk) {
  IfaceStatus s;
  s.iface = p.iface;
  LV_TRY(read_link(p, s));
  LV_TRY(read_policy(p, s));
  {
    LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
    read_syn(p, pm, s);
    if (walk)
      if (auto g = KnownGood::open(p, pm)) s.known_good = g->fill();
  }
  s.max_sources = map_max_entries(p.state.get());
  s.max_bans = map_max_entries(p.bans.get());
  if (walk) LV_TRY(walk_maps(p, s));
  LV_TRY_ASSIGN(auto shared, SharedMap::map(p.shared.get()));
  s.now_ns = Clocks::read().now_mono_ns;
  for (uint8_t id : s.class_ids) {
    s.admitted.push_back(shared.admitted(id));
    s.guards.push_back(shared.guard(id));
  }
  return s;
}

namespace {

// The known-good filter, opened when a class with the admission autopilot first asks:
// nullopt when it cannot be read (show says what it knows without it).
class GoodLookup {
 public:
  GoodLookup(const Pinned& p, PolicyMap& pm) : p_(p), pm_(pm) {}
  std::optional<bool> test(const lv_key& k) {
    if (!tried_) {
      tried_ = true;
      if (auto g = KnownGood::open(p_, pm_)) good_.emplace(std::move(g.value()));
    }
    return good_ ? std::optional<bool>(good_->test(k)) : std::nullopt;
  }

 private:
  const Pinned& p_;
  PolicyMap& pm_;
  bool tried_ = false;
  std::optional<KnownGood> good_;
};

template <typename V>
std::optional<V> lookup(int fd, const lv_key& k) {
  V v{};
  if (bpf_map_lookup_elem(fd, &k, &v) != 0) return std::nullopt;
  return v;
}

// The key of the address's network as the class's autopilot watches it (watch.h,
// lv_watch_key()): masked to the watch prefix, flagged LV_KEY_WATCH.
lv_key watch_key(const Cidr& addr, const lv_class& c, unsigned id) {
  lv_class w = c;  // source_key() masks with the class's source masks: the watch's instead
  w.mask4 = c.autop.watch_mask4;
  std::memcpy(w.mask6, c.autop.watch_mask6, sizeof w.mask6);
  lv_key k = source_key(addr, w, id);
  k.family |= LV_KEY_WATCH;
  return k;
}

// What class `id` holds of the address: its state (as a source, on probation), its
// network's, its ban, its known-good mark, its escalated network; nullopt if none.
std::optional<ShowClass> show_class(const Pinned& p, const lv_class& c, uint8_t id, const Cidr& addr,
                                    GoodLookup& good) {
  ShowClass sc;
  const lv_key key = source_key(addr, c, id);
  const std::optional<lv_state> st = lookup<lv_state>(p.state.get(), key);
  sc.has_state = st.has_value();
  if (st) sc.state = *st;
  if (c.flags & LV_CLASS_NETWORK) sc.network = lookup<lv_state>(p.state.get(), network_key(addr, c, id));
  sc.ban = lookup<lv_ban>(p.bans.get(), key);
  if (c.flags & LV_CLASS_AUTO_ADMIT) {
    lv_key pk = key;
    pk.family |= LV_KEY_PROBATION;
    sc.probation = lookup<lv_state>(p.state.get(), pk);
    sc.known_good = good.test(key);
  }
  if (c.flags & LV_CLASS_ESCALATE) sc.watch = lookup<lv_watch>(p.state.get(), watch_key(addr, c, id));
  // A watched network is worth showing once it was escalated; any /16 with a known
  // source is watched.
  const bool escalated = sc.watch && sc.watch->escalated_ns;
  if (!sc.has_state && !sc.probation && !sc.network && !sc.ban && !escalated && sc.known_good != true)
    return std::nullopt;
  sc.name = name_of(c.name);
  sc.class_id = id;
  sc.cls = c;
  sc.pkt = c.pkt;
  sc.bytes = c.bytes;
  return sc;
}

}  // namespace

Result<ShowResult> show(const std::string& iface, const std::string& address) {
  LV_TRY_ASSIGN(auto addr, Cidr::parse(address));
  if ((addr.family == 4 && addr.len != 32) || (addr.family == 6 && addr.len != 128))
    return usage_error(fmt::format("{} is a network; levee show takes one address", quote_value(address)));
  LV_TRY(preflight("show"));
  LV_TRY_ASSIGN(auto p, open_pinned(iface));
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  const lv_policy& pol = pm.active();
  const Clocks clocks = Clocks::read();

  ShowResult out;
  out.address = address;
  LV_TRY_ASSIGN(auto lists, pm.active_lists());
  // The list entry deciding for the address now (deciding_entry()).
  const lv_override* ov = nullptr;
  if (auto e = deciding_entry(lists, addr, clocks.now_mono_ns)) {
    out.list = list_row(*e, pol, clocks);
    if (e->value.kind == LV_LIST_OVERRIDE &&
        e->value.override_id < std::min<uint32_t>(pol.nr_overrides, LV_MAX_OVERRIDES))
      ov = &pol.overrides[e->value.override_id];
  }

  out.now_ns = clocks.now_mono_ns;
  if (pol.flags & LV_POL_BAN_ALL) out.ban_all = lookup<lv_ban>(p.bans.get(), ban_all_key(addr, pol));
  GoodLookup good(p, pm);
  for (uint8_t id : class_order(pol)) {
    std::optional<ShowClass> sc = show_class(p, pol.classes[id], id, addr, good);
    if (!sc) continue;
    sc->ban_all = out.ban_all;
    if (ov && ((ov->classes >> id) & 1)) {
      sc->override_name = name_of(ov->name);
      sc->pkt = ov->pkt;
      sc->bytes = ov->bytes;
    }
    sc->now_ns = Clocks::read().now_mono_ns;
    out.classes.push_back(*sc);
  }
  return out;
}

Result<Counters> interface_counters(const Pinned& p) {
  LV_TRY_ASSIGN(auto c, read_counters(p.percpu.get()));
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  const lv_policy& pol = pm.active();
  for (uint8_t id : class_order(pol)) {
    // What this class counted: the id's counters less what they held when it got the id.
    lv_class_counters& k = c.by_class[id];
    const lv_class_counters& b = pol.class_base[id];
    k.passed.packets -= b.passed.packets;
    k.passed.bytes -= b.passed.bytes;
    k.dropped.packets -= b.dropped.packets;
    k.dropped.bytes -= b.dropped.bytes;
  }
  return c;
}

Result<std::vector<ClassCounters>> class_counters(const Pinned& p) {
  LV_TRY_ASSIGN(auto c, interface_counters(p));
  LV_TRY_ASSIGN(auto s, query_status(p, false));
  return class_counters(s, c);
}

std::vector<ClassCounters> class_counters(const IfaceStatus& s, const Counters& c) {
  std::vector<ClassCounters> out;
  for (size_t i = 0; i < s.classes.size() && i < s.class_ids.size(); ++i) {
    const lv_class& k = s.classes[i];
    const uint8_t id = s.class_ids[i];
    out.push_back({name_of(k.name), id, c.by_class[id], (k.flags & LV_CLASS_MONITOR) != 0});
  }
  return out;
}

}  // namespace levee
