#include "datapath/lists.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

#include "core/clock.hpp"
#include "core/quote.hpp"
#include "datapath/kernel.hpp"
#include "datapath/list_entries.hpp"
#include "datapath/session.hpp"
#include "policy/keys.hpp"
#include "policy/lists.hpp"
#include "policy/policy.hpp"

namespace levee {
namespace {

uint64_t mono_to_unix(uint64_t mono, const Clocks& c) { return mono ? c.to_unix(mono) : 0; }

// The id of the override an override entry names.
Result<uint16_t> override_id_of(const lv_policy& pol, const std::string& iface, const std::string& name) {
  const uint32_t n = std::min<uint32_t>(pol.nr_overrides, LV_MAX_OVERRIDES);
  auto it =
      std::find_if(pol.overrides, pol.overrides + n, [&](const lv_override& o) { return name_of(o.name) == name; });
  if (it == pol.overrides + n)
    return usage_error(fmt::format("{} has no override named {}", iface, quote_value(name)),
                       "overrides are defined in the config file ([[override]])");
  return static_cast<uint16_t>(it - pol.overrides);
}

}  // namespace

namespace {

bool is_host(const Cidr& c) { return c.len == (c.family == 4 ? 32u : 128u); }

bool expired(const lv_list_value& v, const Clocks& clocks) {
  return v.expires_ns && v.expires_ns <= clocks.now_mono_ns;
}

// A prefix holds one entry: taking it from another list would lose that entry.
Error on_another_list(const Cidr& c, const lv_list_value& old, const std::string& iface) {
  const char* on = old.kind == LV_LIST_ALLOW ? "allow" : old.kind == LV_LIST_DENY ? "deny" : "override";
  return Error{fmt::format("{} is on the {} list of {}", c.to_string(), on, iface), 0,
               fmt::format("delete it there first: levee {} del {} {}", on, iface, c.to_string())};
}

// The fallbacks of host entries about to be written: computed against the networks of
// their family (a host is never strictly shorter than another entry, so hosts do not
// change each other's or a network's fallbacks).
template <typename Key>
void host_fallbacks(std::vector<std::pair<Key, lv_list_value>>& hosts,
                    const std::vector<std::pair<Key, lv_list_value>>& nets) {
  const bool expiring = std::any_of(hosts.begin(), hosts.end(), [](const auto& e) { return e.second.expires_ns; });
  if (!expiring || nets.empty()) return;
  std::vector<std::pair<Key, lv_list_value>> all = nets;
  all.insert(all.end(), hosts.begin(), hosts.end());
  compute_fallbacks(all);
  std::copy(all.begin() + static_cast<std::ptrdiff_t>(nets.size()), all.end(), hosts.begin());
}

// An edit of host entries on slots holding the same lists: each entry looked up and
// written alone, the networks read for the fallbacks of expiring entries.
Result<ListEditResult> edit_hosts(PolicyMap& pm, const ListEdit& ed, const lv_list_value& v, const Clocks& clocks,
                                  const std::string& iface) {
  // Each prefix's entry after the edit so far (nullopt: deleted), over the kernel's.
  std::map<ListKey, std::optional<lv_list_value>> pending;
  auto current = [&](const Cidr& c) -> Result<std::optional<lv_list_value>> {
    if (auto it = pending.find(list_key(c)); it != pending.end()) return it->second;
    return c.family == 4 ? pm.active_host(lpm4_of(c)) : pm.active_host(lpm6_of(c));
  };
  ListEditResult r;
  std::array<int64_t, 2> grows{};  // entries added less deleted, IPv4 and IPv6
  for (const Cidr& c : ed.del) {
    LV_TRY_ASSIGN(auto cur, current(c));
    if (!cur || cur->kind != ed.kind) {
      ++r.missing;
      r.entries.push_back({c, EditOutcome::Missing});
      continue;
    }
    pending[list_key(c)] = std::nullopt;
    --grows[c.family == 6];
    ++r.deleted;
    r.entries.push_back({c, EditOutcome::Deleted, static_cast<lv_list_origin>(cur->origin)});
  }
  for (const Cidr& c : ed.add) {
    LV_TRY_ASSIGN(auto cur, current(c));
    if (cur && cur->kind != ed.kind && !expired(*cur, clocks)) return on_another_list(c, *cur, iface);
    pending[list_key(c)] = v;
    if (!cur) ++grows[c.family == 6];
    ++(cur ? r.replaced : r.added);
    r.entries.push_back({c, cur ? EditOutcome::Replaced : EditOutcome::Added});
  }
  if (r.added + r.replaced + r.deleted == 0) return r;  // nothing to publish
  const lv_policy& pol = pm.active();
  const std::array<int64_t, 2> had{int64_t{pol.nr_list4} + pol.nr_host4, int64_t{pol.nr_list6} + pol.nr_host6};
  if (had[0] + grows[0] > LV_MAX_LIST_ENTRIES || had[1] + grows[1] > LV_MAX_LIST_ENTRIES)
    return usage_error(fmt::format("more than {} list entries for one family", LV_MAX_LIST_ENTRIES));

  ListDelta d;
  for (const auto& [k, val] : pending) {
    Cidr c;
    std::tie(c.family, c.len, c.addr) = std::tie(k.first, k.second.first, k.second.second);
    if (c.family == 4 && val)
      d.put.v4.emplace_back(lpm4_of(c), *val);
    else if (c.family == 4)
      d.del4.push_back(lpm4_of(c));
    else if (val)
      d.put.v6.emplace_back(lpm6_of(c), *val);
    else
      d.del6.push_back(lpm6_of(c));
  }
  if (v.expires_ns) {
    LV_TRY_ASSIGN(const Lists nets, pm.active_networks());
    host_fallbacks(d.put.v4, nets.v4);
    host_fallbacks(d.put.v6, nets.v6);
  }
  LV_TRY_ASSIGN(bool published, pm.publish_delta(pol, d));
  if (!published) return Error{fmt::format("the lists of {} changed during the edit", iface), 0, "try again"};
  return r;
}

// Any other edit: the lists read whole, changed, and published (PolicyMap::publish
// writes the difference).
Result<ListEditResult> edit_all(PolicyMap& pm, const ListEdit& ed, const lv_list_value& v, const Clocks& clocks,
                                const std::string& iface) {
  LV_TRY_ASSIGN(auto cur, pm.active_lists());
  // One value per prefix, as in the tries; indexed, so a file of 100k entries is not
  // quadratic.
  using PrefixKey = std::tuple<uint8_t, unsigned, std::array<uint8_t, 16>>;
  std::map<PrefixKey, AnyEntry> entries;
  for (AnyEntry& e : flatten_lists(cur)) entries.emplace(PrefixKey{e.cidr.family, e.cidr.len, e.cidr.addr}, e);

  ListEditResult r;
  for (const Cidr& c : ed.del) {
    auto it = entries.find({c.family, c.len, c.addr});
    if (it == entries.end() || it->second.value.kind != ed.kind) {
      ++r.missing;
      r.entries.push_back({c, EditOutcome::Missing});
      continue;
    }
    r.entries.push_back({c, EditOutcome::Deleted, static_cast<lv_list_origin>(it->second.value.origin)});
    entries.erase(it);
    ++r.deleted;
  }
  for (const Cidr& c : ed.add) {
    auto [it, fresh] = entries.emplace(PrefixKey{c.family, c.len, c.addr}, AnyEntry{c, v});
    r.entries.push_back({c, fresh ? EditOutcome::Added : EditOutcome::Replaced});
    if (fresh) {
      ++r.added;
      continue;
    }
    const lv_list_value& old = it->second.value;
    if (old.kind != ed.kind && !expired(old, clocks)) return on_another_list(c, old, iface);
    it->second.value = v;
    ++r.replaced;
  }
  if (r.added + r.replaced + r.deleted == 0) return r;  // nothing to publish
  std::vector<AnyEntry> next;
  for (const auto& [k, e] : entries)
    if (!expired(e.value, clocks)) next.push_back(e);  // over: matches nothing any more (as reload)
  Lists lists = rebuild_lists(next);
  if (lists.v4.size() > LV_MAX_LIST_ENTRIES || lists.v6.size() > LV_MAX_LIST_ENTRIES)
    return usage_error(fmt::format("more than {} list entries for one family", LV_MAX_LIST_ENTRIES));
  LV_TRY(pm.publish(pm.active(), lists, &cur));
  return r;
}

}  // namespace

Result<ListEditResult> edit_lists(PolicyMap& pm, const ListEdit& ed, const Clocks& clocks, const std::string& iface) {
  const lv_policy& pol = pm.active();
  uint16_t override_id = 0;
  if (ed.kind == LV_LIST_OVERRIDE && !ed.add.empty()) {
    LV_TRY_ASSIGN(override_id, override_id_of(pol, iface, ed.override_name));
  }
  if (ed.expires_unix_ns && ed.expires_unix_ns <= clocks.now_unix_ns)
    return usage_error("the expiry time is in the past");
  lv_list_value v{};
  v.kind = static_cast<uint8_t>(ed.kind);
  v.origin = static_cast<uint8_t>(ed.origin);
  v.override_id = override_id;
  if (ed.expires_unix_ns) v.expires_ns = clocks.to_mono(ed.expires_unix_ns);
  // Host entries change nothing else (no other entry falls back to a host): written
  // alone, when both slots hold the same lists for the delta to apply to.
  const bool hosts =
      std::all_of(ed.add.begin(), ed.add.end(), is_host) && std::all_of(ed.del.begin(), ed.del.end(), is_host);
  if (hosts && pm.lists_synced()) return edit_hosts(pm, ed, v, clocks, iface);
  return edit_all(pm, ed, v, clocks, iface);
}

Result<ListEditResult> edit_lists(const std::string& iface, const ListEdit& ed) {
  LV_TRY_ASSIGN(auto sess, Session::open(iface, "change the lists of"));
  return edit_lists(sess.policy, ed, Clocks::read(), iface);
}

Result<std::vector<ListRow>> list_rows(const std::string& iface) {
  LV_TRY(preflight("list"));
  LV_TRY_ASSIGN(auto p, open_pinned(iface));
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  LV_TRY_ASSIGN(auto lists, pm.active_lists());
  const lv_policy& pol = pm.active();
  const Clocks clocks = Clocks::read();
  std::vector<ListRow> rows;
  for (const AnyEntry& e : flatten_lists(lists)) rows.push_back(list_row(e, pol, clocks));
  return rows;
}

ListRow list_row(const AnyEntry& e, const lv_policy& pol, const Clocks& clocks) {
  ListRow r{e.cidr, static_cast<lv_list_kind>(e.value.kind), "", mono_to_unix(e.value.expires_ns, clocks),
            static_cast<lv_list_origin>(e.value.origin)};
  if (r.kind == LV_LIST_OVERRIDE && e.value.override_id < LV_MAX_OVERRIDES)
    r.override_name = name_of(pol.overrides[e.value.override_id].name);
  return r;
}

}  // namespace levee
