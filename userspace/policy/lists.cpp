#include "policy/lists.hpp"

#include <cstring>
#include <tuple>

namespace levee {
namespace {

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

}  // namespace

ListKey list_key(const Cidr& c) { return {c.family, PrefixKey{c.len, c.addr}}; }

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

void to_tries(const std::map<ListKey, lv_list_value>& merged, List4& v4, List6& v6) {
  for (const auto& [k, v] : merged) {
    const auto& [family, pk] = k;
    if (family == 4) {
      lv_lpm4 key{pk.first, 0};
      std::memcpy(&key.addr, pk.second.data(), 4);
      v4.emplace_back(key, v);
    } else {
      lv_lpm6 key{pk.first, {}};
      std::memcpy(key.addr, pk.second.data(), 16);
      v6.emplace_back(key, v);
    }
  }
  compute_fallbacks(v4);
  compute_fallbacks(v6);
}

void compile_lists(const std::vector<ListEntry>& entries, const OverrideIds& override_ids, const Clocks& clk, List4& v4,
                   List6& v6) {
  std::map<ListKey, lv_list_value> merged;
  for (const ListEntry& e : entries) {
    lv_list_value v{};
    v.kind = static_cast<uint8_t>(e.kind);
    v.origin = static_cast<uint8_t>(e.origin);
    if (e.kind == LV_LIST_OVERRIDE) v.override_id = override_ids.at(e.override_name);
    if (e.expires_unix_ns) {
      if (e.expires_unix_ns <= clk.now_unix_ns) continue;  // already over
      v.expires_ns = clk.to_mono(e.expires_unix_ns);
    }
    auto [it, fresh] = merged.emplace(list_key(e.cidr), v);
    if (!fresh && list_precedence(v.kind) > list_precedence(it->second.kind)) it->second = v;
  }
  to_tries(merged, v4, v6);
}

}  // namespace levee
