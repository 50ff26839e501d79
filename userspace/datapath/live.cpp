#include "datapath/live.hpp"

#include <bpf/bpf.h>
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/clock.hpp"
#include "core/quote.hpp"
#include "datapath/handoff.hpp"
#include "datapath/list_entries.hpp"
#include "datapath/maps.hpp"
#include "datapath/prune.hpp"
#include "datapath/same_filter.hpp"
#include "datapath/session.hpp"
#include "limiter.h"
#include "policy/cidr.hpp"
#include "policy/class_ids.hpp"
#include "policy/compile.hpp"
#include "policy/keys.hpp"
#include "policy/validate.hpp"

namespace levee {
namespace {

std::string class_names(const lv_policy& p, const std::vector<uint8_t>& ids) {
  std::string names;
  for (uint8_t i : ids) names += (names.empty() ? "" : ", ") + name_of(p.classes[i].name);
  return names;
}

// The class of `ids` that has this name.
Result<uint8_t> class_named(const lv_policy& p, const std::vector<uint8_t>& ids, const std::string& iface,
                            const std::string& name) {
  auto it = std::find_if(ids.begin(), ids.end(), [&](uint8_t i) { return name_of(p.classes[i].name) == name; });
  if (it == ids.end())
    return usage_error(fmt::format("{} has no class {}", iface, quote_value(name)),
                       fmt::format("its classes: {}", class_names(p, ids)));
  return *it;
}

// The class `levee set` changes: the one named, or the only one.
Result<unsigned> class_to_set(const lv_policy& p, const std::vector<uint8_t>& order, const std::string& iface,
                              const LimitChange& ch) {
  if (ch.class_name) {
    LV_TRY_ASSIGN(const uint8_t id, class_named(p, order, iface, *ch.class_name));
    return id;
  }
  if (order.size() > 1 && ch.class_changes())
    return usage_error(fmt::format("{} has {} classes: say which with --class NAME", iface, order.size()),
                       fmt::format("its classes: {}", class_names(p, order)));
  return order.empty() ? 0u : order[0];
}

}  // namespace

namespace {

// Class `id` of `next` replaced by `c`, checked first as a policy of its own (its match
// is kept as compiled), then for what concerns every class.
Status replace_class(lv_policy& next, const std::vector<uint8_t>& order, unsigned id, const ClassSpec& c) {
  Policy check;
  check.classes.push_back(c);
  LV_TRY(validate(check, Clocks::read().now_unix_ns));
  std::vector<ClassSpec> all;
  all.reserve(order.size());
  for (uint8_t i : order) all.push_back(i == id ? c : class_of(next.classes[i]));
  LV_TRY(check_ban_scopes(all));
  const uint8_t epoch = next.classes[id].epoch;  // the same class: its sources keep their state
  next.classes[id] = compile_class(c, clock_tick_ns());
  next.classes[id].epoch = epoch;
  return {};
}

// The entries added at run time, carried into the config's next lists. An override
// entry follows its override by name, and is dropped (reported) when the file no
// longer defines it.
template <typename Key>
void keep_runtime_entries(const std::vector<std::pair<Key, lv_list_value>>& cur_list, const lv_policy& cur,
                          const Policy& p, uint64_t now_mono_ns, std::vector<AnyEntry>& entries, ReloadResult& r) {
  for (const auto& [key, value] : cur_list) {
    if (value.origin == LV_ORIGIN_CONFIG) continue;  // most of them: never made into an AnyEntry
    const AnyEntry e{cidr_of(key), value};
    AnyEntry kept = e;
    if (e.value.kind == LV_LIST_OVERRIDE) {
      const std::string name =
          e.value.override_id < LV_MAX_OVERRIDES ? name_of(cur.overrides[e.value.override_id].name) : "";
      auto it =
          std::find_if(p.overrides.begin(), p.overrides.end(), [&](const OverrideSpec& o) { return o.name == name; });
      if (it == p.overrides.end()) {
        r.dropped.push_back(fmt::format("{} (override '{}' is no longer defined)", e.cidr.to_string(), name));
        continue;
      }
      kept.value.override_id = static_cast<uint16_t>(it - p.overrides.begin());
    }
    if (e.value.expires_ns && e.value.expires_ns <= now_mono_ns) continue;  // over
    entries.push_back(kept);
    ++r.kept_runtime;
  }
}

// The per-CPU hot entries remember a rejected source's ready time for the current
// generation: after lowering one (an unban), publish the same policy to forget them.
Status republish(Session& sess) {
  LV_TRY_ASSIGN(auto lists, sess.policy.active_lists());
  return sess.policy.publish(sess.policy.active(), lists, &lists);
}

// The most a limit can push a source's ready time past now by itself: one packet's cost
// (a byte limit: the cost of the largest frame). Further ahead, a ban pushed it.
uint64_t limit_reach(const lv_limit& l, bool bytes) {
  constexpr uint64_t kMaxFrame = 65536;
  return bytes ? static_cast<uint64_t>((static_cast<unsigned __int128>(l.cost) * kMaxFrame) >> LV_BYTE_SHIFT) : l.cost;
}

// A ban holds the source back through its state's ready times. A record the LRU
// evicted leaves no trace but those: ready times beyond what the limits can push.
// Brings them back to now; false when nothing held the source back.
Result<bool> release_state(const Session& sess, const lv_key& key, unsigned id, bool banned, uint64_t now,
                           const std::string& address) {
  const lv_policy& pol = sess.policy.active();
  lv_state st{};
  if (bpf_map_lookup_elem(sess.pins.state.get(), &key, &st) != 0) return false;
  // Whichever of the class's and its overrides' limits set the ready times: the longest.
  const lv_class widest = prune_class(pol, id);
  const uint64_t pkt_reach = limit_reach(widest.pkt, false), byte_reach = limit_reach(widest.bytes, true);
  bool released = false;
  for (auto [ready, reach] : {std::pair{&st.ready_ns, pkt_reach}, std::pair{&st.ready_bytes_ns, byte_reach}})
    if (*ready > now && (banned || *ready - now > reach)) *ready = now, released = true;
  if (!released) return false;
  // The datapath may update the state meanwhile (a CAS on the replaced element is
  // lost): at worst a packet's charge or a count, never a ban kept.
  if (bpf_map_update_elem(sess.pins.state.get(), &key, &st, BPF_EXIST) != 0 && errno != ENOENT)
    return sys_error(fmt::format("release the state of {} in class {}", address, name_of(pol.classes[id].name)));
  return true;
}

}  // namespace

Result<SetResult> set_limits(const std::string& iface, const LimitChange& ch) {
  LV_TRY_ASSIGN(auto sess, Session::open(iface, "set"));
  lv_policy next = sess.policy.active();
  const std::vector<uint8_t> order = class_order(next);
  LV_TRY_ASSIGN(const unsigned id, class_to_set(next, order, iface, ch));
  SetResult r;
  if (ch.class_changes()) {
    LV_TRY_ASSIGN(auto c, changed_class(class_of(next.classes[id]), ch));
    LV_TRY(replace_class(next, order, id, c));
    r.changed = c;
  }
  if (ch.monitor) {
    next.flags &= ~uint32_t{LV_POL_MONITOR};
    if (*ch.monitor) next.flags |= LV_POL_MONITOR;
  }
  apply_interface(next);
  LV_TRY_ASSIGN(auto lists, sess.policy.active_lists());
  LV_TRY(sess.policy.publish(next, lists, &lists));
  r.monitor = next.flags & LV_POL_MONITOR;
  r.classes = order.size();
  for (uint8_t i : order)
    if (next.classes[i].flags & LV_CLASS_MONITOR) r.monitoring.push_back(name_of(next.classes[i].name));
  return r;
}

Result<ReloadResult> reload(const std::string& iface, const Policy& p) {
  const Clocks clocks = Clocks::read();
  LV_TRY(validate(p, clocks.now_unix_ns));
  LV_TRY_ASSIGN(auto sess, Session::open(iface, "reload"));
  if (!sess.policy.control().handoff)
    LV_TRY(
        require_handoff(p, fmt::format("the filter on {} runs without its tc program (levee attach said why)", iface)));
  const lv_policy& cur = sess.policy.active();
  const uint32_t prior_flags = cur.flags;
  CompiledPolicy next = compile(p, clocks, &cur);  // classes keep their ids and state
  // The interface's monitor switch is `levee set --mode`'s, not the file's: it stays.
  next.slot.flags = (next.slot.flags & ~uint32_t{LV_POL_MONITOR}) | (prior_flags & LV_POL_MONITOR);
  apply_interface(next.slot);
  next.slot.full_at = refuse_full_at(sess.max_sources(), possible_cpus());  // the map as it is
  if (!next.new_ids.empty()) {
    // A new class starts counting from what its id counted before it.
    LV_TRY_ASSIGN(auto counters, read_counters(sess.pins.percpu.get()));
    for (uint8_t id : next.new_ids) next.slot.class_base[id] = counters.by_class[id];
  }
  LV_TRY_ASSIGN(auto cur_lists, sess.policy.active_lists());

  ReloadResult r;
  std::vector<AnyEntry> runtime;
  keep_runtime_entries(cur_lists.v4, cur, p, clocks.now_mono_ns, runtime, r);
  keep_runtime_entries(cur_lists.v6, cur, p, clocks.now_mono_ns, runtime, r);
  // The file's lists as compiled, unless entries added at run time join them.
  Lists lists{std::move(next.list4), std::move(next.list6)};
  if (!runtime.empty()) {
    std::vector<AnyEntry> entries = flatten_lists(lists);
    entries.insert(entries.end(), runtime.begin(), runtime.end());
    lists = rebuild_lists(entries);
  }
  // Said only where the file asks for something else than the filter has.
  const auto kept = attach_setting_differences({p.iface.mode, p.iface.max_sources, p.iface.max_bans}, sess.pins,
                                               sess.policy.control());
  if (!kept.empty()) {
    std::string list;
    for (const std::string& k : kept) list += (list.empty() ? "" : ", ") + k;
    r.notes.push_back(fmt::format(
        "the file's {} apply at attach: a reload keeps the filter's (levee detach, then attach, to change them)",
        list));
  }
  if ((next.slot.flags & LV_POL_REFUSE_FULL) && !(prior_flags & LV_POL_REFUSE_FULL)) {
    // The datapath counts the states it creates only while it refuses: start it from
    // what the map holds, before the first packet compares it with full_at.
    LV_TRY_ASSIGN(auto n, count_sources(sess.pins.state.get()));
    sess.shared.set_sources(n);
  }
  LV_TRY(sess.policy.publish(next.slot, lists, &cur_lists));
  // A class given an id another class held: its shared budgets start full. Packets
  // still in flight under the old policy may touch the entry a moment longer.
  for (uint8_t id : next.new_ids) sess.shared.reset_class(id);
  r.generation = sess.policy.active().generation;
  r.classes = p.classes.size();
  r.list_entries = lists.v4.size() + lists.v6.size();
  return r;
}

Result<UnbanResult> unban(const std::string& iface, const std::string& address,
                          const std::optional<std::string>& class_name) {
  LV_TRY_ASSIGN(auto addr, Cidr::parse(address));
  if ((addr.family == 4 && addr.len != 32) || (addr.family == 6 && addr.len != 128))
    return usage_error(fmt::format("{} is a network; levee unban takes one address", quote_value(address)),
                       "give the address of a banned source, e.g. 198.18.0.7");
  LV_TRY_ASSIGN(auto sess, Session::open(iface, "unban"));
  const lv_policy& pol = sess.policy.active();
  std::vector<uint8_t> ids = class_order(pol);
  if (class_name) {
    LV_TRY_ASSIGN(const uint8_t id, class_named(pol, ids, iface, *class_name));
    ids = {id};
  }
  const uint64_t now = Clocks::read().now_mono_ns;
  const int bans = sess.pins.bans.get();
  UnbanResult r;
  // Take a record out; what it held is reported.
  auto take = [&](const lv_key& k, std::string scope) -> Result<std::optional<lv_ban>> {
    lv_ban b{};
    if (bpf_map_lookup_elem(bans, &k, &b) != 0) return std::optional<lv_ban>{};
    if (bpf_map_delete_elem(bans, &k) != 0 && errno != ENOENT)
      return sys_error(fmt::format("delete the ban record of {}", address));
    r.lifted.push_back({std::move(scope), b.until_ns > now, b.until_ns > now ? b.until_ns - now : 0, b.offences});
    return std::optional<lv_ban>{b};
  };
  // The every-class record bans the address in each class: lifted whichever class is
  // named. The class that imposed it holds the source back through its state too.
  std::optional<uint16_t> imposed_by;
  if (pol.flags & LV_POL_BAN_ALL) {
    LV_TRY_ASSIGN(auto b, take(ban_all_key(addr, pol), ""));
    if (b && (b)->until_ns > now) imposed_by = (b)->class_id;
  }
  if (imposed_by && *imposed_by < LV_MAX_CLASSES && std::find(ids.begin(), ids.end(), *imposed_by) == ids.end())
    ids.push_back(static_cast<uint8_t>(*imposed_by));
  for (uint8_t id : ids) {
    const lv_class& c = pol.classes[id];
    const lv_key key = source_key(addr, c, id);
    LV_TRY_ASSIGN(auto b, take(key, name_of(c.name)));
    const bool banned = imposed_by == id || (b && (b)->until_ns > now);
    LV_TRY_ASSIGN(const bool released, release_state(sess, key, id, banned, now, address));
    if (released) ++r.states_released;
  }
  if (!r.lifted.empty() || r.states_released) LV_TRY(republish(sess));
  return r;
}

}  // namespace levee
