#include "policy/lists.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <tuple>

namespace levee {

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

ListKey list_key(const Cidr& c) { return {c.family, PrefixKey{c.len, c.addr}}; }

SortKey sort_key(const Cidr& c) {
  SortKey k;
  k.family_len = uint32_t{c.family} << 8 | c.len;
  for (size_t i = 0; i < 8; ++i) k.hi = k.hi << 8 | c.addr[i];
  for (size_t i = 8; i < 16; ++i) k.lo = k.lo << 8 | c.addr[i];
  return k;
}

int list_precedence(uint8_t kind) {
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

template <typename Key>
void compute_fallbacks(std::vector<std::pair<Key, lv_list_value>>& entries) {
  // Most entries never expire: a list without an expiring one has nothing to compute
  // but the fields cleared.
  if (std::none_of(entries.begin(), entries.end(), [](const auto& e) { return e.second.expires_ns != 0; })) {
    for (auto& [k, v] : entries)
      v.after_kind = LV_LIST_NONE, v.after_override = 0, v.after_expires_ns = 0, v.then_kind = LV_LIST_NONE,
      v.then_override = 0;
    return;
  }
  // Networks only: a host covers nothing shorter than itself. Sorted, for binary search.
  std::vector<std::pair<PrefixKey, const lv_list_value*>> by_prefix;
  for (const auto& [k, v] : entries)
    if (k.prefixlen < sizeof(k.addr) * 8) by_prefix.emplace_back(prefix_of(k), &v);
  std::stable_sort(by_prefix.begin(), by_prefix.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // Of one prefix, the last given (as the map this replaces kept).
  auto find = [&](const PrefixKey& pk) -> const lv_list_value* {
    auto it = std::upper_bound(by_prefix.begin(), by_prefix.end(), pk,
                               [](const PrefixKey& a, const auto& b) { return a < b.first; });
    return it != by_prefix.begin() && std::prev(it)->first == pk ? std::prev(it)->second : nullptr;
  };
  // The nearest entry covering `pk` (strictly shorter) that is still in force after
  // `after_ns` (never expires, or expires later), or nullptr; its length in *len.
  auto covering = [&](const PrefixKey& pk, unsigned from_len, uint64_t after_ns,
                      unsigned* len) -> const lv_list_value* {
    for (unsigned l = from_len; l-- > 0;) {
      const lv_list_value* found = find({l, mask_prefix(pk.second, l)});
      if (!found) continue;
      const uint64_t e = found->expires_ns;
      if (e == 0 || e > after_ns) {
        *len = l;
        return found;
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

void merge_lists(const std::vector<std::pair<Cidr, lv_list_value>>& entries, bool later_wins, List4& v4, List6& v6) {
  const auto order = sorted_prefixes(entries, [](const auto& e) -> const Cidr& { return e.first; });
  for (size_t g = 0; g < order.size();) {
    // One prefix's entries, in the order given.
    const lv_list_value* best = &entries[order[g].second].second;
    size_t e = g + 1;
    for (; e < order.size() && order[e].first == order[g].first; ++e) {
      const lv_list_value& v = entries[order[e].second].second;
      const int p = list_precedence(v.kind), b = list_precedence(best->kind);
      if (p > b || (later_wins && p == b)) best = &v;
    }
    const Cidr& c = entries[order[g].second].first;
    if (c.family == 4) {
      lv_lpm4 key{c.len, 0};
      std::memcpy(&key.addr, c.addr.data(), 4);
      v4.emplace_back(key, *best);
    } else {
      lv_lpm6 key{c.len, {}};
      std::memcpy(key.addr, c.addr.data(), 16);
      v6.emplace_back(key, *best);
    }
    g = e;
  }
  compute_fallbacks(v4);
  compute_fallbacks(v6);
}

void compile_lists(const std::vector<ListEntry>& entries, const OverrideIds& override_ids, const Clocks& clk, List4& v4,
                   List6& v6) {
  std::vector<std::pair<Cidr, lv_list_value>> values;
  values.reserve(entries.size());
  for (const ListEntry& e : entries) {
    lv_list_value v{};
    v.kind = static_cast<uint8_t>(e.kind);
    v.origin = static_cast<uint8_t>(e.origin);
    if (e.kind == LV_LIST_OVERRIDE) v.override_id = override_ids.at(e.override_name);
    if (e.expires_unix_ns) {
      if (e.expires_unix_ns <= clk.now_unix_ns) continue;  // already over
      v.expires_ns = clk.to_mono(e.expires_unix_ns);
    }
    values.emplace_back(e.cidr, v);
  }
  merge_lists(values, false, v4, v6);
}

}  // namespace levee
