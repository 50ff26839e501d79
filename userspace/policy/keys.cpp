#include "policy/keys.hpp"

#include <arpa/inet.h>

#include <cstring>

#include "rules.h"

namespace levee {
namespace {

// The address in a packet's layout (struct lv_packet), masked into a key by the rule
// the datapath uses (rules.h).
lv_key masked_key(const Cidr& addr, uint32_t mask4, const uint32_t* mask6, uint16_t class_id, uint8_t flags,
                  uint8_t epoch) {
  uint32_t words[4] = {0, 0, htonl(0xffff), 0};  // IPv4-mapped
  uint8_t family = LV_AF_INET;
  if (addr.family == 4) {
    std::memcpy(&words[3], addr.addr.data(), 4);
  } else {
    std::memcpy(words, addr.addr.data(), 16);
    family = LV_AF_INET6;
  }
  lv_key k{};
  lv_key_mask(&k, words, family, mask4, mask6, class_id, flags, epoch);
  return k;
}

}  // namespace

lv_key source_key(const Cidr& addr, const lv_class& c, unsigned id) {
  return masked_key(addr, c.mask4, c.mask6, static_cast<uint16_t>(id), 0, c.epoch);
}

lv_key network_key(const Cidr& addr, const lv_class& c, unsigned id) {
  return masked_key(addr, c.net_mask4, c.net_mask6, static_cast<uint16_t>(id), LV_KEY_NETWORK, c.epoch);
}

lv_key ban_all_key(const Cidr& addr, const lv_policy& p) {
  return masked_key(addr, p.ban_mask4, p.ban_mask6, LV_ALL_CLASSES, 0, 0);
}

}  // namespace levee
