// keys.hpp - the datapath's lv_state and lv_bans keys for one address, built as the
// datapath builds them, for the controller to look an address up (show, unban) and for
// the tests to find the state a packet left.
#pragma once

#include <cstdint>
#include <cstring>

#include "levee_abi.h"
#include "policy/cidr.hpp"

namespace levee {

// The datapath's keys for one address (a /32 or /128), as it builds them: IPv4
// IPv4-mapped, masked to a prefix, with the class's id and epoch. Its state in class
// `id`; its network's state there (LV_KEY_NETWORK, masked to the network prefix); its
// ban record in every class (class LV_ALL_CLASSES, masked to lv_policy.ban_mask*).
lv_key source_key(const Cidr& addr, const lv_class& c, unsigned id);
lv_key network_key(const Cidr& addr, const lv_class& c, unsigned id);
lv_key ban_all_key(const Cidr& addr, const lv_policy& p);

// The trie key of a network, for the list tries and the CrowdSec tries; its address
// alone keys their host hashes.
inline lv_lpm4 lpm4_of(const Cidr& c) {
  lv_lpm4 k{c.len, 0};
  std::memcpy(&k.addr, c.addr.data(), 4);
  return k;
}
inline lv_lpm6 lpm6_of(const Cidr& c) {
  lv_lpm6 k{c.len, {}};
  std::memcpy(k.addr, c.addr.data(), 16);
  return k;
}

// A 64-bit hash of a key's five words (multiplied through), for the controller's tables
// of keys; take its high bits.
inline uint64_t key_hash(const lv_key& k) {
  uint32_t w[5];
  std::memcpy(w, &k, sizeof w);
  uint64_t h = 0;
  for (uint32_t x : w) h = (h ^ x) * 0x9E3779B97F4A7C15ULL;
  return h;
}
inline bool same_key(const lv_key& a, const lv_key& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// For std::unordered_map and std::unordered_set of keys.
struct KeyHash {
  size_t operator()(const lv_key& k) const { return static_cast<size_t>(key_hash(k) >> 16); }
};
struct KeyEq {
  bool operator()(const lv_key& a, const lv_key& b) const { return same_key(a, b); }
};

}  // namespace levee
