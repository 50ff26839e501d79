#include "policy/keys.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace levee {
namespace {

lv_key masked_key(const Cidr& addr, uint32_t mask4, const uint32_t (&mask6)[4]) {
  lv_key k{};
  if (addr.family == 4) {
    uint32_t a;
    std::memcpy(&a, addr.addr.data(), 4);
    k.addr[2] = htonl(0xffff);
    k.addr[3] = a & mask4;
    k.family = LV_AF_INET;
  } else {
    std::memcpy(k.addr, addr.addr.data(), 16);
    for (unsigned w = 0; w < 4; ++w) k.addr[w] &= mask6[w];
    k.family = LV_AF_INET6;
  }
  return k;
}

}  // namespace

lv_key source_key(const Cidr& addr, const lv_class& c, unsigned id) {
  lv_key k = masked_key(addr, c.mask4, c.mask6);
  k.class_id = static_cast<uint16_t>(id);
  k.epoch = c.epoch;
  return k;
}

lv_key network_key(const Cidr& addr, const lv_class& c, unsigned id) {
  lv_key k = masked_key(addr, c.net_mask4, c.net_mask6);
  k.family |= LV_KEY_NETWORK;
  k.class_id = static_cast<uint16_t>(id);
  k.epoch = c.epoch;
  return k;
}

lv_key ban_all_key(const Cidr& addr, const lv_policy& p) {
  lv_key k = masked_key(addr, p.ban_mask4, p.ban_mask6);
  k.class_id = LV_ALL_CLASSES;
  return k;
}

}  // namespace levee
