// unit.hpp - what several unit tests share: clock constants, the smallest config file
// and a parse of config text that must succeed, the bytes of a compiled field, and the
// keys, classes and policies the tests of prune, top and events read state with.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "policy/compile.hpp"
#include "policy/config.hpp"
#include "policy/policy.hpp"

namespace levee {

inline constexpr uint64_t kSec = 1'000'000'000;
inline constexpr uint64_t kMs = 1'000'000;
inline constexpr uint64_t kTick = 4'000'000;  // a kernel tick at HZ=250

// "Now" for config files: 2026-01-01T00:00:00Z, so that expiries are reproducible.
inline constexpr uint64_t kConfigNow = 1'767'225'600 * kSec;

// The smallest config file: the default class alone.
inline const std::string kDefault = "[default]\nrate = 100\nburst = 10\n";

// Config text (as "t.toml", at kConfigNow) that must parse; on failure the message and
// the text are reported and an empty Policy returned.
inline Policy parse_ok(const std::string& text) {
  auto r = parse_config(text, "t.toml", kConfigNow);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message()) << "\n--- in:\n" << text;
  return r.ok() ? r.value() : Policy{};
}

// The first N bytes at p, for comparing masks in network byte order.
template <size_t N>
std::array<uint8_t, N> bytes_of(const void* p) {
  std::array<uint8_t, N> b{};
  std::memcpy(b.data(), p, N);
  return b;
}

// ---- state as the datapath keys it ---------------------------------------------------

// A source's key as the datapath builds it: IPv4-mapped, or IPv6.
inline lv_key v4_key(const char* addr, unsigned class_id = 0, uint8_t epoch = 0, bool network = false) {
  lv_key k{};
  k.addr[2] = htonl(0xffff);
  inet_pton(AF_INET, addr, &k.addr[3]);
  k.class_id = static_cast<uint16_t>(class_id);
  k.family = LV_AF_INET | (network ? LV_KEY_NETWORK : 0);
  k.epoch = epoch;
  return k;
}

inline lv_key v6_key(const char* addr, unsigned class_id = 0) {
  lv_key k{};
  inet_pton(AF_INET6, addr, k.addr);
  k.class_id = static_cast<uint16_t>(class_id);
  k.family = LV_AF_INET6;
  return k;
}

// A class of 10 pps, burst 5 (tau 400 ms), as compile() makes it.
inline lv_class pps_class() {
  ClassSpec c;
  c.name = "c";
  c.packets = {10, 5};
  return compile_class(c, kTick, 2);
}

// Two classes compiled: "dns" (UDP port 53, 10 pps, burst 5, bans of 2 s forgotten after
// 60 s) and "default" (100 pps, burst 10).
inline lv_policy two_class_policy() {
  Policy p;
  ClassSpec dns;
  dns.name = "dns";
  dns.match.protos = {Proto::Udp};
  dns.match.ports = {{53, 53}};
  dns.packets = {10, 5};
  dns.ban.ban_ns = 2 * kSec;
  dns.ban.forget_ns = 60 * kSec;
  ClassSpec def;
  def.name = "default";
  def.packets = {100, 10};
  p.classes = {dns, def};
  return compile(p, Clocks::read()).slot;
}

}  // namespace levee
