// lists.hpp - the allow, deny and override lists as the datapath holds them: one entry
// per prefix and family (at one prefix allow beats deny beats override), each expiring
// deny entry carrying the entries it falls back to when it expires.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/clock.hpp"
#include "levee_abi.h"
#include "policy/cidr.hpp"
#include "policy/policy.hpp"

namespace levee {

// A prefix of either family as a map key: (length, address), and with its family.
using PrefixKey = std::pair<unsigned, std::array<uint8_t, 16>>;
using ListKey = std::pair<uint8_t, PrefixKey>;
ListKey list_key(const Cidr& c);
// A trie key's prefix as a PrefixKey.
PrefixKey prefix_of(const lv_lpm4& k);
PrefixKey prefix_of(const lv_lpm6& k);

// The same prefix as one flat value in ListKey's order (family, length, address bytes):
// a million of these sort in a fraction of what a std::map of ListKey costs to fill.
struct SortKey {
  uint32_t family_len = 0;  // family << 8 | length
  uint64_t hi = 0, lo = 0;  // the address's bytes, big-endian
  bool operator==(const SortKey&) const = default;
  bool operator<(const SortKey& o) const { return std::tie(family_len, hi, lo) < std::tie(o.family_len, o.hi, o.lo); }
};
SortKey sort_key(const Cidr& c);

// The indexes of `entries` in ListKey order of their prefixes (`cidr_of(entry)`), ties
// in the given order: a prefix's entries in one run, for merging and finding duplicates.
template <typename T, typename CidrOf>
std::vector<std::pair<SortKey, uint32_t>> sorted_prefixes(const std::vector<T>& entries, const CidrOf& cidr_of) {
  std::vector<std::pair<SortKey, uint32_t>> keys;
  keys.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i)
    keys.emplace_back(sort_key(cidr_of(entries[i])), static_cast<uint32_t>(i));
  std::sort(keys.begin(), keys.end());
  return keys;
}

// At one prefix: allow beats deny beats override (the higher number wins).
int list_precedence(uint8_t kind);

// A slot's entries per family, sorted by prefix: what its tries hold.
using List4 = std::vector<std::pair<lv_lpm4, lv_list_value>>;
using List6 = std::vector<std::pair<lv_lpm6, lv_list_value>>;

// One value per prefix as the slot's tries hold them: per family, sorted by prefix (ListKey
// order), with the fallbacks of expiring entries computed. `entries` in any order, a
// prefix given more than once: the highest precedence wins, of equals the first given
// (`later_wins`: the last).
void merge_lists(const std::vector<std::pair<Cidr, lv_list_value>>& entries, bool later_wins, List4& v4, List6& v6);

// Override ids by name, as the slot numbers its overrides.
using OverrideIds = std::map<std::string, uint16_t>;

// A policy's entries as the slot holds them: one value per prefix, the higher precedence
// winning (of equals, the first); an entry already expired at `clk` left out, the others'
// expiries on the datapath's clock; the fallbacks computed.
void compile_lists(const std::vector<ListEntry>& entries, const OverrideIds& override_ids, const Clocks& clk, List4& v4,
                   List6& v6);

// Recompute the fallbacks of every expiring entry: after_* is the most specific entry
// covering it that is still in force when it expires (never expires, or later), with
// that entry's expiry; then_* the most specific entry covering both that never expires.
template <typename Key>
void compute_fallbacks(std::vector<std::pair<Key, lv_list_value>>& entries);

}  // namespace levee
