// Merging list entries into what a slot holds, and finding a prefix the file gives twice,
// done by sorting (policy/lists.cpp, policy/validate.cpp), against the rules written out
// with ordered maps, as the controller once computed them: random entries of nested,
// repeated prefixes of both families, every kind, origin and some expiries.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "policy/lists.hpp"
#include "policy/validate.hpp"

namespace levee {
namespace {

using Values = std::vector<std::pair<Cidr, lv_list_value>>;

// The fallbacks by their definition (lists.hpp), over a map of every prefix.
template <typename Key>
void reference_fallbacks(std::vector<std::pair<Key, lv_list_value>>& entries) {
  std::map<PrefixKey, lv_list_value> by_prefix;
  for (const auto& [k, v] : entries) by_prefix[prefix_of(k)] = v;
  auto covering = [&](const PrefixKey& pk, unsigned from_len, uint64_t after_ns,
                      unsigned* len) -> const lv_list_value* {
    for (unsigned l = from_len; l-- > 0;) {
      auto it = by_prefix.find({l, mask_prefix(pk.second, l)});
      if (it != by_prefix.end() && (it->second.expires_ns == 0 || it->second.expires_ns > after_ns)) {
        *len = l;
        return &it->second;
      }
    }
    return nullptr;
  };
  for (auto& [k, v] : entries) {
    v.after_kind = v.then_kind = LV_LIST_NONE;
    v.after_override = v.then_override = 0;
    v.after_expires_ns = 0;
    if (!v.expires_ns) continue;
    unsigned alen = 0, tlen = 0;
    const lv_list_value* a = covering(prefix_of(k), k.prefixlen, v.expires_ns, &alen);
    if (!a) continue;
    v.after_kind = a->kind, v.after_override = a->override_id, v.after_expires_ns = a->expires_ns;
    if (!a->expires_ns) continue;
    if (const lv_list_value* t = covering(prefix_of(k), alen, UINT64_MAX, &tlen))
      v.then_kind = t->kind, v.then_override = t->override_id;
  }
}

// One value per prefix in a map: the higher precedence replaces, of equals the first
// stays (or the later replaces).
void reference_merge(const Values& in, bool later_wins, List4& v4, List6& v6) {
  std::map<ListKey, lv_list_value> merged;
  for (const auto& [c, v] : in) {
    auto [it, fresh] = merged.emplace(list_key(c), v);
    const int p = list_precedence(v.kind), b = list_precedence(it->second.kind);
    if (!fresh && (p > b || (later_wins && p == b))) it->second = v;
  }
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
  reference_fallbacks(v4);
  reference_fallbacks(v6);
}

// A prefix from a small space, so that prefixes repeat and nest: 198.18.0.0/15 at
// /15 to /32, 2001:db8::/32 at /32 to /128.
Cidr random_cidr(std::mt19937_64& rng) {
  Cidr c;
  c.family = rng() % 2 ? 4 : 6;
  if (c.family == 4) {
    static constexpr unsigned kLens[] = {15, 16, 24, 28, 31, 32};
    c.len = kLens[rng() % std::size(kLens)];
    const uint32_t host = 0xc6120000u | static_cast<uint32_t>(rng() % 8) << 16 | static_cast<uint32_t>(rng() % 4) << 8 |
                          static_cast<uint32_t>(rng() % 8);
    for (int i = 0; i < 4; ++i) c.addr[i] = static_cast<uint8_t>(host >> (24 - 8 * i));
  } else {
    static constexpr unsigned kLens[] = {32, 48, 64, 120, 127, 128};
    c.len = kLens[rng() % std::size(kLens)];
    const uint8_t bytes[] = {0x20, 0x01, 0x0d, 0xb8};
    std::memcpy(c.addr.data(), bytes, 4);
    c.addr[5] = static_cast<uint8_t>(rng() % 4);
    c.addr[7] = static_cast<uint8_t>(rng() % 4);
    c.addr[15] = static_cast<uint8_t>(rng() % 8);
  }
  c.addr = mask_prefix(c.addr, c.len);
  return c;
}

Values random_values(std::mt19937_64& rng, size_t n) {
  Values out;
  for (size_t i = 0; i < n; ++i) {
    lv_list_value v{};
    v.kind = static_cast<uint8_t>(LV_LIST_ALLOW + rng() % 3);
    v.origin = static_cast<uint8_t>(rng() % 2 ? LV_ORIGIN_CONFIG : LV_ORIGIN_CLI);
    v.override_id = static_cast<uint16_t>(rng() % 3);
    if (rng() % 3 == 0) v.expires_ns = 1000 + rng() % 5 * 1000;  // few distinct times: ties too
    out.emplace_back(random_cidr(rng), v);
  }
  return out;
}

template <typename Key>
void expect_same(const std::vector<std::pair<Key, lv_list_value>>& got,
                 const std::vector<std::pair<Key, lv_list_value>>& want, uint64_t seed) {
  ASSERT_EQ(got.size(), want.size()) << "seed " << seed;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i].first, &want[i].first, sizeof(Key)), 0) << "seed " << seed << ", entry " << i;
    ASSERT_EQ(std::memcmp(&got[i].second, &want[i].second, sizeof(lv_list_value)), 0)
        << "seed " << seed << ", entry " << i;
  }
}

TEST(ListMerge, SortedMergeIsTheOrderedMapsRule) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const Values in = random_values(rng, 1 + rng() % 400);
    for (bool later_wins : {false, true}) {
      List4 g4, w4;
      List6 g6, w6;
      merge_lists(in, later_wins, g4, g6);
      reference_merge(in, later_wins, w4, w6);
      expect_same(g4, w4, seed);
      expect_same(g6, w6, seed);
    }
  }
}

TEST(ListMerge, ListsWithoutExpiriesHaveTheirFallbacksCleared) {
  List4 v4{{lv_lpm4{24, 0x0012c6u}, lv_list_value{LV_LIST_DENY, 0, 0, 0, 0, 0, 0}}};
  v4[0].second.after_kind = LV_LIST_ALLOW;
  v4[0].second.after_expires_ns = 7;
  compute_fallbacks(v4);
  EXPECT_EQ(v4[0].second.after_kind, LV_LIST_NONE);
  EXPECT_EQ(v4[0].second.after_expires_ns, 0u);
}

// The first entry of the file given again: the one validate() names, by the map it used.
std::string reference_repeat(const std::vector<ListEntry>& lists) {
  std::map<ListKey, const ListEntry*> seen;
  for (const ListEntry& e : lists) {
    auto [it, fresh] = seen.emplace(list_key(e.cidr), &e);
    if (!fresh && it->second->origin == LV_ORIGIN_CONFIG && e.origin == LV_ORIGIN_CONFIG)
      return fmt::format("{}: {} is listed twice (also at {})", e.where.describe(), e.cidr.to_string(),
                         it->second->where.describe());
  }
  return "";
}

TEST(ListMerge, TheRepeatNamedIsTheFirstInTheFileAfterItsFirstPlace) {
  Policy p;
  p.classes.push_back(ClassSpec{});
  p.classes[0].name = "default";
  p.classes[0].packets = {10, 10};
  ASSERT_TRUE(validate(p, 0)) << "the class alone is valid";
  size_t repeats = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    p.lists.clear();
    const size_t n = 1 + rng() % 60;
    for (size_t i = 0; i < n; ++i) {
      ListEntry e;
      e.cidr = random_cidr(rng);
      e.kind = rng() % 2 ? LV_LIST_DENY : LV_LIST_ALLOW;
      e.origin = rng() % 3 ? LV_ORIGIN_CONFIG : LV_ORIGIN_CLI;
      e.where = Where{"t.toml", static_cast<unsigned>(i + 1), fmt::format("lists.x[{}]", i)};
      p.lists.push_back(e);
    }
    const std::string want = reference_repeat(p.lists);
    const Status got = validate(p, 0);
    if (want.empty()) {
      EXPECT_TRUE(got) << "seed " << seed << ": " << got.error().message();
      continue;
    }
    ++repeats;
    ASSERT_FALSE(got) << "seed " << seed;
    EXPECT_EQ(got.error().what, want) << "seed " << seed;
  }
  EXPECT_GT(repeats, 100u) << "the prefixes repeat often enough to test it";
}

}  // namespace
}  // namespace levee
