#include "bpf/list_entries.hpp"

#include <array>
#include <cstring>
#include <map>
#include <utility>

#include "policy/policy.hpp"

namespace levee {
namespace {

template <typename Key>
Cidr cidr_of(const Key& k);
template <>
Cidr cidr_of(const lv_lpm4& k) {
  Cidr c;
  c.family = 4;
  c.len = k.prefixlen;
  std::memcpy(c.addr.data(), &k.addr, 4);
  return c;
}
template <>
Cidr cidr_of(const lv_lpm6& k) {
  Cidr c;
  c.family = 6;
  c.len = k.prefixlen;
  std::memcpy(c.addr.data(), k.addr, 16);
  return c;
}

}  // namespace

std::vector<AnyEntry> flatten_lists(const Lists& l) {
  std::vector<AnyEntry> out;
  for (const auto& [k, v] : l.v4) out.push_back({cidr_of(k), v});
  for (const auto& [k, v] : l.v6) out.push_back({cidr_of(k), v});
  return out;
}

int list_precedence(uint8_t kind) {
  return kind == LV_LIST_ALLOW ? 3 : kind == LV_LIST_DENY ? 2 : kind == LV_LIST_OVERRIDE ? 1 : 0;
}

Lists rebuild_lists(const std::vector<AnyEntry>& entries) {
  std::map<std::pair<uint8_t, std::pair<unsigned, std::array<uint8_t, 16>>>, lv_list_value> merged;
  for (const AnyEntry& e : entries) {
    auto key = std::make_pair(e.cidr.family, std::make_pair(e.cidr.len, e.cidr.addr));
    auto [it, fresh] = merged.emplace(key, e.value);
    if (!fresh && list_precedence(e.value.kind) >= list_precedence(it->second.kind)) it->second = e.value;
  }
  Lists out;
  for (const auto& [k, v] : merged) {
    const auto& [family, pk] = k;
    if (family == 4) {
      lv_lpm4 key{pk.first, 0};
      std::memcpy(&key.addr, pk.second.data(), 4);
      out.v4.emplace_back(key, v);
    } else {
      lv_lpm6 key{pk.first, {}};
      std::memcpy(key.addr, pk.second.data(), 16);
      out.v6.emplace_back(key, v);
    }
  }
  compute_fallbacks(out.v4);
  compute_fallbacks(out.v6);
  return out;
}

}  // namespace levee
