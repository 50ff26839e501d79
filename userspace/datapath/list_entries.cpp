#include "datapath/list_entries.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "policy/policy.hpp"
#include "rules.h"

namespace levee {

Cidr cidr_of(const lv_lpm4& k) {
  Cidr c;
  c.family = 4;
  c.len = k.prefixlen;
  std::memcpy(c.addr.data(), &k.addr, 4);
  return c;
}

Cidr cidr_of(const lv_lpm6& k) {
  Cidr c;
  c.family = 6;
  c.len = k.prefixlen;
  std::memcpy(c.addr.data(), k.addr, 16);
  return c;
}

std::vector<AnyEntry> flatten_lists(const Lists& l) {
  std::vector<AnyEntry> out;
  for (const auto& [k, v] : l.v4) out.push_back({cidr_of(k), v});
  for (const auto& [k, v] : l.v6) out.push_back({cidr_of(k), v});
  return out;
}

Lists rebuild_lists(const std::vector<AnyEntry>& entries) {
  std::vector<std::pair<Cidr, lv_list_value>> values;
  values.reserve(entries.size());
  for (const AnyEntry& e : entries) values.emplace_back(e.cidr, e.value);
  Lists out;
  merge_lists(values, true, out.v4, out.v6);
  return out;
}

namespace {

// The entries of one family covering `addr`, the most specific first.
template <typename Key>
std::vector<AnyEntry> covering(const std::vector<std::pair<Key, lv_list_value>>& entries, const Cidr& addr) {
  std::vector<AnyEntry> out;
  for (const auto& [k, v] : entries)
    if (Cidr c = cidr_of(k); c.contains(addr)) out.push_back({c, v});
  std::sort(out.begin(), out.end(), [](const AnyEntry& a, const AnyEntry& b) { return a.cidr.len > b.cidr.len; });
  return out;
}

}  // namespace

std::optional<AnyEntry> deciding_entry(const Lists& lists, const Cidr& addr, uint64_t now_mono_ns) {
  // A slot holds one entry per prefix, hosts in a hash and networks in a trie: the
  // datapath's lookup (host, else trie) finds the longest prefix covering the address.
  const std::vector<AnyEntry> cover = addr.family == 4 ? covering(lists.v4, addr) : covering(lists.v6, addr);
  if (cover.empty()) return std::nullopt;
  const AnyEntry& found = cover.front();
  const lv_list_verdict d = lv_list_decide(&found.value, now_mono_ns);
  if (d.kind == LV_LIST_NONE) return std::nullopt;
  if (d.by == LV_LIST_BY_ENTRY) return found;
  // An entry covering it decides. The expired entry records that entry's kind, override
  // and expiry, not its network: the nearest covering entry with all three is the one
  // compute_fallbacks() chose (any nearer one expires sooner, so was passed over).
  const uint64_t expires = d.by == LV_LIST_BY_AFTER ? found.value.after_expires_ns : 0;
  for (size_t i = 1; i < cover.size(); ++i) {
    const lv_list_value& v = cover[i].value;
    if (v.kind == d.kind && v.override_id == d.override_id && v.expires_ns == expires) return cover[i];
  }
  // Lists not written by compute_fallbacks(): say what decides, on the entry found.
  AnyEntry named = found;
  named.value.kind = d.kind;
  named.value.override_id = d.override_id;
  named.value.expires_ns = expires;
  return named;
}

}  // namespace levee
