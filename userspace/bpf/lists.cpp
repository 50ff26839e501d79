#include "bpf/lists.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "bpf/kernel.hpp"
#include "bpf/list_entries.hpp"
#include "bpf/session.hpp"
#include "core/clock.hpp"
#include "core/quote.hpp"
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

Result<ListEditResult> edit_lists(const std::string& iface, const ListEdit& ed) {
  LV_TRY_ASSIGN(auto sess, Session::open(iface, "change the lists of"));
  const Clocks clocks = Clocks::read();
  const lv_policy& pol = sess.policy.active();
  uint16_t override_id = 0;
  if (ed.kind == LV_LIST_OVERRIDE && !ed.add.empty()) {
    LV_TRY_ASSIGN(override_id, override_id_of(pol, iface, ed.override_name));
  }
  if (ed.expires_unix_ns && ed.expires_unix_ns <= clocks.now_unix_ns)
    return usage_error("the expiry time is in the past");
  LV_TRY_ASSIGN(auto cur, sess.policy.active_lists());
  // One value per prefix, as in the tries; indexed, so a file of 100k entries is not
  // quadratic.
  using PrefixKey = std::tuple<uint8_t, unsigned, std::array<uint8_t, 16>>;
  std::map<PrefixKey, AnyEntry> entries;
  for (AnyEntry& e : flatten_lists(cur)) entries.emplace(PrefixKey{e.cidr.family, e.cidr.len, e.cidr.addr}, e);
  auto expired = [&](const lv_list_value& v) { return v.expires_ns && v.expires_ns <= clocks.now_mono_ns; };

  ListEditResult r;
  for (const Cidr& c : ed.del) {
    auto it = entries.find({c.family, c.len, c.addr});
    if (it == entries.end() || it->second.value.kind != ed.kind) {
      ++r.missing;
      continue;
    }
    entries.erase(it);
    ++r.deleted;
  }
  for (const Cidr& c : ed.add) {
    lv_list_value v{};
    v.kind = static_cast<uint8_t>(ed.kind);
    v.origin = static_cast<uint8_t>(ed.origin);
    v.override_id = override_id;
    if (ed.expires_unix_ns) v.expires_ns = clocks.to_mono(ed.expires_unix_ns);
    auto [it, fresh] = entries.emplace(PrefixKey{c.family, c.len, c.addr}, AnyEntry{c, v});
    if (fresh) {
      ++r.added;
      continue;
    }
    // A prefix holds one entry: taking it from another list would lose that entry.
    const lv_list_value& old = it->second.value;
    if (old.kind != ed.kind && !expired(old)) {
      const char* on = old.kind == LV_LIST_ALLOW ? "allow" : old.kind == LV_LIST_DENY ? "deny" : "override";
      return Error{fmt::format("{} is on the {} list of {}", c.to_string(), on, iface), 0,
                   fmt::format("delete it there first: levee {} del {} {}", on, iface, c.to_string())};
    }
    it->second.value = v;
    ++r.replaced;
  }
  if (r.added + r.replaced + r.deleted == 0) return r;  // nothing to publish
  std::vector<AnyEntry> next;
  for (const auto& [k, e] : entries)
    if (!expired(e.value)) next.push_back(e);  // over: matches nothing any more (as reload)
  Lists lists = rebuild_lists(next);
  if (lists.v4.size() > LV_MAX_LIST_ENTRIES || lists.v6.size() > LV_MAX_LIST_ENTRIES)
    return usage_error(fmt::format("more than {} list entries for one family", LV_MAX_LIST_ENTRIES));
  LV_TRY(sess.policy.publish(pol, lists));
  return r;
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
