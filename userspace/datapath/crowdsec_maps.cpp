#include "datapath/crowdsec_maps.hpp"

#include <bpf/bpf.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include "policy/keys.hpp"
#include "rules.h"

namespace levee {
namespace {

// Keys of each map, from a network: the tries' as the lists' (keys.hpp), the hashes'
// the address alone.
uint32_t host4_key(const Cidr& c) { return lpm4_of(c).addr; }
lv_in6 host6_key(const Cidr& c) {
  lv_in6 k{};
  std::memcpy(k.addr, lpm6_of(c).addr, sizeof k.addr);
  return k;
}
lv_lpm4 net4_key(const Cidr& c) { return lpm4_of(c); }
lv_lpm6 net6_key(const Cidr& c) { return lpm6_of(c); }

Cidr cidr_of(const void* addr, size_t bytes, uint8_t family, unsigned len) {
  Cidr c;
  c.family = family;
  c.len = len;
  std::memcpy(c.addr.data(), addr, bytes);
  return c;
}

// Batch calls of up to this many entries: a startup pull of 100k is a few calls.
constexpr size_t kBatch = 16384;

// Writes `entries` into a hash or a trie (the kernel takes batches of either: a trie
// entry by entry, but without a system call each).
template <typename Key>
Status put_batches(int fd, std::span<const CsEntry> entries, Key (*key)(const Cidr&), const char* name) {
  std::vector<Key> keys;
  std::vector<lv_cs_value> values;
  for (size_t at = 0; at < entries.size(); at += kBatch) {
    const size_t n = std::min(kBatch, entries.size() - at);
    keys.clear();
    values.clear();
    for (size_t i = at; i < at + n; ++i) keys.push_back(key(entries[i].net)), values.push_back(entries[i].value);
    auto count = static_cast<uint32_t>(n);
    if (bpf_map_update_batch(fd, keys.data(), values.data(), &count, nullptr) != 0)
      return sys_error(fmt::format("write {} CrowdSec decisions into {}", n, name), errno,
                       fmt::format("{} holds at most {} entries", name, LV_MAX_CS_ENTRIES));
  }
  return {};
}

// Deletes `nets` from one map in batches; one already gone is passed over.
template <typename Key>
Status remove_batches(int fd, const std::vector<Cidr>& nets, Key (*key)(const Cidr&), const char* name) {
  std::vector<Key> keys;
  keys.reserve(std::min(nets.size(), kBatch));
  for (size_t from = 0; from < nets.size(); from += kBatch) {
    const size_t n = std::min(kBatch, nets.size() - from);
    keys.clear();
    for (size_t i = from; i < from + n; ++i) keys.push_back(key(nets[i]));
    for (size_t at = 0; at < n;) {
      auto count = static_cast<uint32_t>(n - at);
      const int err = bpf_map_delete_batch(fd, keys.data() + at, &count, nullptr);
      const int saved = errno;
      at += count;
      if (!err) continue;
      if (saved != ENOENT)
        return sys_error(fmt::format("remove the CrowdSec decision {} from {}", nets[from + at].to_string(), name),
                         saved);
      ++at;  // gone already: the batch stopped at it
    }
  }
  return {};
}

// Every entry of one map, by get_next_key (tries have no batch lookup; the hashes are
// read the same way for one code path: this runs once per adoption and per status).
template <typename Key, typename Fn>
Status walk(int fd, const char* name, Fn fn) {
  Key k{}, next{};
  const Key* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    lv_cs_value v{};
    if (bpf_map_lookup_elem(fd, &next, &v) == 0) fn(next, v);  // else deleted meanwhile
    k = next;
    prev = &k;
  }
  if (errno != ENOENT) return sys_error(fmt::format("read {}", name));
  return {};
}

Status read_into(const Pinned& p, const std::function<void(const Cidr&, const lv_cs_value&)>& fn) {
  LV_TRY(walk<uint32_t>(p.crowdsec[kCsHost4].get(), LV_MAP_CS_HOST4,
                        [&](const uint32_t& k, const lv_cs_value& v) { fn(cidr_of(&k, 4, 4, 32), v); }));
  LV_TRY(walk<lv_in6>(p.crowdsec[kCsHost6].get(), LV_MAP_CS_HOST6,
                      [&](const lv_in6& k, const lv_cs_value& v) { fn(cidr_of(k.addr, 16, 6, 128), v); }));
  LV_TRY(walk<lv_lpm4>(p.crowdsec[kCsNet4].get(), LV_MAP_CS_NET4,
                       [&](const lv_lpm4& k, const lv_cs_value& v) { fn(cidr_of(&k.addr, 4, 4, k.prefixlen), v); }));
  return walk<lv_lpm6>(p.crowdsec[kCsNet6].get(), LV_MAP_CS_NET6,
                       [&](const lv_lpm6& k, const lv_cs_value& v) { fn(cidr_of(k.addr, 16, 6, k.prefixlen), v); });
}

}  // namespace

CsMap cs_map_of(const Cidr& net) {
  if (net.family == 4) return net.len == 32 ? kCsHost4 : kCsNet4;
  return net.len == 128 ? kCsHost6 : kCsNet6;
}

uint32_t cs_present_bit(CsMap m) {
  constexpr uint32_t bits[kCsMaps] = {LV_CS_HOST4, LV_CS_HOST6, LV_CS_NET4, LV_CS_NET6};
  return bits[m];
}

Result<CrowdsecMaps> CrowdsecMaps::open(const std::string& iface) {
  LV_TRY_ASSIGN(auto p, open_pinned(iface));
  return of(std::move(p));
}

Result<CrowdsecMaps> CrowdsecMaps::of(Pinned p) {
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  return CrowdsecMaps(std::move(p), std::move(pm));
}

Result<std::vector<CsEntry>> CrowdsecMaps::read() const {
  std::vector<CsEntry> out;
  LV_TRY(read_into(pins_, [&](const Cidr& c, const lv_cs_value& v) { out.push_back(CsEntry{c, v}); }));
  return out;
}

Status CrowdsecMaps::put(std::span<const CsEntry> entries) {
  std::vector<CsEntry> by_map[kCsMaps];
  for (const CsEntry& e : entries) by_map[cs_map_of(e.net)].push_back(e);
  LV_TRY(put_batches<uint32_t>(fd(kCsHost4), by_map[kCsHost4], host4_key, LV_MAP_CS_HOST4));
  LV_TRY(put_batches<lv_in6>(fd(kCsHost6), by_map[kCsHost6], host6_key, LV_MAP_CS_HOST6));
  LV_TRY(put_batches<lv_lpm4>(fd(kCsNet4), by_map[kCsNet4], net4_key, LV_MAP_CS_NET4));
  return put_batches<lv_lpm6>(fd(kCsNet6), by_map[kCsNet6], net6_key, LV_MAP_CS_NET6);
}

Status CrowdsecMaps::remove(std::span<const Cidr> nets) {
  std::vector<Cidr> by_map[kCsMaps];
  for (const Cidr& c : nets) by_map[cs_map_of(c)].push_back(c);
  LV_TRY(remove_batches<uint32_t>(fd(kCsHost4), by_map[kCsHost4], host4_key, LV_MAP_CS_HOST4));
  LV_TRY(remove_batches<lv_in6>(fd(kCsHost6), by_map[kCsHost6], host6_key, LV_MAP_CS_HOST6));
  LV_TRY(remove_batches<lv_lpm4>(fd(kCsNet4), by_map[kCsNet4], net4_key, LV_MAP_CS_NET4));
  return remove_batches<lv_lpm6>(fd(kCsNet6), by_map[kCsNet6], net6_key, LV_MAP_CS_NET6);
}

Result<CsCount> count_crowdsec(const Pinned& p, uint64_t now_mono_ns) {
  CsCount h;
  LV_TRY(read_into(p, [&](const Cidr&, const lv_cs_value& v) {
    ++h.entries;
    if (lv_cs_in_force(&v, now_mono_ns)) ++h.in_force;
  }));
  return h;
}

}  // namespace levee
