#include "bpf/list_entries.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

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
  const std::vector<AnyEntry> cover = addr.family == 4 ? covering(lists.v4, addr) : covering(lists.v6, addr);
  if (cover.empty()) return std::nullopt;
  const AnyEntry& best = cover.front();
  if (!best.value.expires_ns || best.value.expires_ns > now_mono_ns) return best;
  // An expired deny entry stays in the trie until the lists next change; the datapath
  // then uses the most specific entry without an expiry that covers it.
  for (size_t i = 1; i < cover.size(); ++i)
    if (!cover[i].value.expires_ns) return cover[i];
  return std::nullopt;
}

}  // namespace levee
