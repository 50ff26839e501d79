#include "datapath/same_filter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "core/iface.hpp"
#include "datapath/kernel.hpp"
#include "datapath/list_entries.hpp"
#include "datapath/policy_map.hpp"
#include "policy/class_ids.hpp"
#include "policy/compile.hpp"

namespace levee {
namespace {

// Expiry times of the file's entries are read against the clock at each attach: two
// reads of one file agree within this.
constexpr uint64_t kExpiryToleranceNs = 1'000'000'000;

// Byte for byte, padding included: both sides come from zeroed structs (compile()'s
// value-initialized slot; the map the kernel zeroes, which the controller writes whole),
// and a difference in padding alone could only make an attach refuse, never take two
// filters for one.
template <typename T>
bool same_bytes(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;  // NOLINT(bugprone-suspicious-memory-comparison)
}

bool in_use(const lv_policy& p, unsigned id) {
  const std::vector<uint8_t> order = class_order(p);
  return std::find(order.begin(), order.end(), id) != order.end();
}

// The classes, their order and matches, and the overrides.
void class_differences(const lv_policy& want, const lv_policy& cur, std::vector<std::string>& out) {
  for (unsigned id = 0; id < LV_MAX_CLASSES; ++id) {
    if (!in_use(want, id) && !in_use(cur, id)) continue;
    if (in_use(want, id) == in_use(cur, id) && same_bytes(want.classes[id], cur.classes[id])) continue;
    out.push_back(fmt::format("class {}", name_of((in_use(want, id) ? want : cur).classes[id].name)));
  }
  if (class_order(want) != class_order(cur) || !same_bytes(want.table, cur.table))
    out.emplace_back("the classes' order or matches");
  if (want.nr_overrides != cur.nr_overrides || !same_bytes(want.overrides, cur.overrides))
    out.emplace_back("the overrides");
}

// The policy as compiled: what the datapath reads. Its generation, the per-class
// counter baselines and the list sizes are state, not settings.
void policy_differences(lv_policy want, const lv_policy& cur, std::vector<std::string>& out) {
  const size_t before = out.size();
  class_differences(want, cur, out);
  if ((want.flags ^ cur.flags) & LV_POL_MONITOR)
    out.push_back(fmt::format("the monitor switch ({}, attached {})", want.flags & LV_POL_MONITOR ? "on" : "off",
                              cur.flags & LV_POL_MONITOR ? "on" : "off"));
  if (std::strncmp(want.source, cur.source, sizeof want.source) != 0)
    out.push_back(fmt::format("the policy's source ({}, attached from {})", name_of(want.source), name_of(cur.source)));
  want.generation = cur.generation;
  std::memcpy(want.class_base, cur.class_base, sizeof want.class_base);
  want.nr_list4 = cur.nr_list4;
  want.nr_list6 = cur.nr_list6;
  want.nr_host4 = cur.nr_host4;
  want.nr_host6 = cur.nr_host6;
  // Whatever else the slot holds (when_full, events, bans in every class, SYN answers).
  if (out.size() == before && !same_bytes(want, cur)) out.emplace_back("the interface's settings");
}

// The file's entries, as the tries hold them: network, kind, override and expiry. The
// fallbacks of expiring entries depend on the entries added at run time too: not compared.
using EntryKey = std::tuple<int, std::string, uint8_t, uint16_t>;
std::vector<std::pair<EntryKey, uint64_t>> config_entries(const std::vector<AnyEntry>& all) {
  std::vector<std::pair<EntryKey, uint64_t>> out;
  for (const AnyEntry& e : all)
    if (e.value.origin == LV_ORIGIN_CONFIG)
      out.push_back({{e.cidr.family, e.cidr.to_string(), e.value.kind, e.value.override_id}, e.value.expires_ns});
  std::sort(out.begin(), out.end());
  return out;
}

bool same_entries(const Lists& want, const Lists& cur) {
  const auto a = config_entries(flatten_lists(want));
  const auto b = config_entries(flatten_lists(cur));
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const uint64_t x = a[i].second, y = b[i].second;
    if (a[i].first != b[i].first || (x == 0) != (y == 0) || (x > y ? x - y : y - x) > kExpiryToleranceNs) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> attach_setting_differences(const AttachSettings& want, const Pinned& p,
                                                    const lv_control& ctl) {
  std::vector<std::string> out;
  const auto mode = static_cast<lv_attach_mode>(ctl.attach_mode);
  if (want.mode && *want.mode != mode)
    out.push_back(fmt::format("XDP mode {} (attached with {})", mode_name(*want.mode), mode_name(mode)));
  const uint32_t sources = map_max_entries(p.state.get()), bans = map_max_entries(p.bans.get());
  if (want.max_sources && *want.max_sources != sources)
    out.push_back(fmt::format("max_sources {} (attached with {})", *want.max_sources, sources));
  if (want.max_bans && *want.max_bans != bans)
    out.push_back(fmt::format("max_bans {} (attached with {})", *want.max_bans, bans));
  return out;
}

Result<std::vector<std::string>> attach_differences(const Pinned& p, const AttachOptions& o, const Clocks& clk) {
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  std::vector<std::string> out = attach_setting_differences({o.mode, o.max_sources, o.max_bans}, p, pm.control());
  const lv_policy& cur = pm.active();
  CompiledPolicy next = compile(o.policy, clk, &cur);  // classes keep their ids: compared id by id
  next.slot.full_at = refuse_full_at(o.max_sources, possible_cpus());
  policy_differences(next.slot, cur, out);
  LV_TRY_ASSIGN(auto lists, pm.active_lists());
  if (!same_entries(Lists{std::move(next.list4), std::move(next.list6)}, lists))
    out.emplace_back("the file's list entries");
  return out;
}

}  // namespace levee
