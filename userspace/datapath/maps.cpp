#include "datapath/maps.hpp"

#include "limiter.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <utility>
#include <vector>

namespace levee {

lv_counter Counters::received() const {
  lv_counter t{};
  for (const auto& c : by_reason) t.packets += c.packets, t.bytes += c.bytes;
  return t;
}

lv_counter Counters::passed() const {
  lv_counter t{};
  for (unsigned r = 0; r < LV_REASON_MAX; ++r)
    if (!lv_reason_drops(r)) t.packets += by_reason[r].packets, t.bytes += by_reason[r].bytes;
  return t;
}

lv_counter Counters::dropped() const {
  lv_counter t{};
  for (unsigned r = 0; r < LV_REASON_MAX; ++r)
    if (lv_reason_drops(r)) t.packets += by_reason[r].packets, t.bytes += by_reason[r].bytes;
  return t;
}

lv_counter Counters::would_drop() const {
  lv_counter t{};
  for (const auto& c : would) t.packets += c.packets, t.bytes += c.bytes;
  return t;
}

Result<Counters> read_counters(int percpu_fd) {
  int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0) return sys_error("count possible CPUs", -ncpus);
  const size_t stride = (sizeof(lv_percpu) + 7) / 8 * 8;
  std::vector<uint8_t> buf(stride * static_cast<size_t>(ncpus));
  uint32_t key = 0;
  if (bpf_map_lookup_elem(percpu_fd, &key, buf.data()) != 0) return sys_error("read counters");
  Counters out;
  for (int cpu = 0; cpu < ncpus; ++cpu) {
    const auto* pc = reinterpret_cast<const lv_percpu*>(buf.data() + stride * static_cast<size_t>(cpu));
    for (unsigned r = 0; r < LV_REASON_MAX; ++r) {
      out.by_reason[r].packets += pc->by_reason[r].packets;
      out.by_reason[r].bytes += pc->by_reason[r].bytes;
      out.would[r].packets += pc->would[r].packets;
      out.would[r].bytes += pc->would[r].bytes;
    }
    for (unsigned h = 0; h < LV_HO_MAX; ++h) out.handoff[h] += pc->handoff[h];
    out.marks_capped += pc->marks_capped;
    for (unsigned c = 0; c < LV_MAX_CLASSES; ++c) {
      const lv_class_counters& in = pc->by_class[c];
      lv_class_counters& o = out.by_class[c];
      o.passed.packets += in.passed.packets;
      o.passed.bytes += in.passed.bytes;
      o.dropped.packets += in.dropped.packets;
      o.dropped.bytes += in.dropped.bytes;
    }
  }
  return out;
}

namespace {

// Every entry, one call each, a batch of 8192 at a time.
template <typename Key, typename Value>
Status for_each_entry(int fd, const char* what, const std::function<void(const Key&, const Value&)>& fn) {
  constexpr uint32_t kChunk = 8192;
  return walk_batches<Key, Value>(fd, kChunk, what, [&](std::span<const Key> keys, std::span<const Value> values) {
    for (size_t i = 0; i < keys.size(); ++i) fn(keys[i], values[i]);
    return Status{};
  });
}

}  // namespace

Status for_each_state_chunk(int fd, uint32_t chunk, const StateChunkFn& fn) {
  return walk_batches<lv_key, lv_state>(fd, chunk, "per-source state", fn);
}

Result<StateWalk> walk_state(int state_fd, bool networks, size_t hint) {
  constexpr uint32_t kChunk = 4096;
  StateWalk w;
  w.keys.reserve(hint);
  w.states.reserve(hint);
  const auto t0 = w.at = std::chrono::steady_clock::now();
  LV_TRY(for_each_state_chunk(state_fd, kChunk,
                              [&](std::span<const lv_key> keys, std::span<const lv_state> states) -> Status {
                                for (size_t i = 0; i < keys.size(); ++i) {
                                  const bool net = keys[i].family & LV_KEY_NETWORK;
                                  if (keys[i].family & LV_KEY_WATCH) continue;  // not a limiter state
                                  ++(net ? w.networks : w.sources);
                                  if (net && !networks) continue;
                                  w.keys.push_back(keys[i]);
                                  w.states.push_back(states[i]);
                                }
                                return {};
                              }));
  w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return w;
}

Result<size_t> delete_keys(int fd, std::span<const lv_key> keys, const char* what) {
  size_t done = 0, at = 0;
  while (at < keys.size()) {
    auto count = static_cast<uint32_t>(keys.size() - at);
    int err = bpf_map_delete_batch(fd, keys.data() + at, &count, nullptr);
    const int saved = errno;
    done += count;
    at += count;
    if (!err) continue;
    if (saved != ENOENT) return sys_error(fmt::format("delete {} (batch delete)", what), saved);
    ++at;  // this key is gone already: the batch stopped at it
  }
  return done;
}

Status for_each_source(int state_fd, const std::function<void(const lv_key&, const lv_state&)>& fn) {
  return for_each_entry<lv_key, lv_state>(state_fd, "per-source state", fn);
}

Status for_each_ban(int bans_fd, const std::function<void(const lv_key&, const lv_ban&)>& fn) {
  return for_each_entry<lv_key, lv_ban>(bans_fd, "ban records", fn);
}

std::string key_address(const uint32_t (&addr)[4], uint8_t family, unsigned prefix) {
  char buf[INET6_ADDRSTRLEN] = {};
  const bool v4 = lv_key_family(family) == LV_AF_INET;
  if (v4)
    inet_ntop(AF_INET, &addr[3], buf, sizeof buf);
  else
    inet_ntop(AF_INET6, addr, buf, sizeof buf);
  const unsigned host = v4 ? 32 : 128;
  if (prefix >= host || prefix == 0) return buf;
  return fmt::format("{}/{}", buf, prefix);
}

void count_key(StateCounts& n, const lv_key& k, const lv_state& s) {
  if (k.family & LV_KEY_WATCH) {
    ++n.watched;
    n.escalated += std::bit_cast<lv_watch>(s).escalated_ns != 0;
    return;
  }
  ++((k.family & LV_KEY_NETWORK) ? n.networks : n.sources);
  n.probation += (k.family & LV_KEY_PROBATION) != 0;
}

Result<StateCounts> count_state(int state_fd) {
  StateCounts n;
  LV_TRY(for_each_source(state_fd, [&](const lv_key& k, const lv_state& s) { count_key(n, k, s); }));
  return n;
}

Result<SharedMap> SharedMap::map(int fd) {
  LV_TRY_ASSIGN(auto m, MappedArray::map(fd, sizeof(lv_shared) * (LV_MAX_CLASSES + 1), LV_MAP_SHARED));
  return SharedMap(std::move(m));
}

void SharedMap::reset_class(unsigned id) {
  lv_shared& e = p_[id % LV_MAX_CLASSES];
  // Word by word: the datapath may be updating the entry with CAS right now (packets
  // of the class that had the id a moment ago, still in flight). A ready time of 0 is
  // long past: the budgets are full; the autopilot starts over, nothing learnt, not
  // engaged. (A class's entry holds nothing interface-wide: that is entry LV_MAX_CLASSES.)
  auto* w = reinterpret_cast<__u64*>(&e);
  for (size_t i = 0; i < sizeof e / sizeof(__u64); ++i) std::atomic_ref(w[i]).store(0, std::memory_order_relaxed);
}

lv_guard SharedMap::guard(unsigned id) const {
  lv_shared& e = p_[id % LV_MAX_CLASSES];
  auto load = [](__u64& w) { return std::atomic_ref(w).load(std::memory_order_relaxed); };
  return lv_guard{.engaged_ns = load(e.engaged_ns),
                  .last_over_ns = load(e.last_over_ns),
                  .over_since_ns = load(e.over_since_ns),
                  .cost = load(e.threshold_cost),
                  .newcomer_ready = load(e.newcomer_ready),
                  .escalated_until_ns = load(e.escalated_until_ns),
                  .period_ns = load(e.period_ns),
                  .arrivals = load(e.arrivals),
                  .period_arrivals = load(e.period_arrivals),
                  .baseline = load(e.baseline),
                  .engagements = load(e.engagements),
                  .escalations = load(e.escalations),
                  .good_admitted = load(e.good_admitted),
                  .probation = load(e.probation),
                  .promoted = load(e.promoted)};
}

bool SharedMap::release_guard(unsigned id, uint64_t since) {
  __u64 expected = since;
  return since && std::atomic_ref(p_[id % LV_MAX_CLASSES].engaged_ns)
                      .compare_exchange_strong(expected, 0, std::memory_order_relaxed);
}

void SharedMap::set_sources(uint64_t n) {
  std::atomic_ref(p_[LV_MAX_CLASSES].sources).store(n, std::memory_order_relaxed);
}

uint64_t SharedMap::sources() const {
  return std::atomic_ref(p_[LV_MAX_CLASSES].sources).load(std::memory_order_relaxed);
}

uint64_t SharedMap::admitted(unsigned id) const {
  return std::atomic_ref(p_[id % LV_MAX_CLASSES].admitted).load(std::memory_order_relaxed);
}

uint64_t SharedMap::subtract_sources(uint64_t n) {
  std::atomic_ref count(p_[LV_MAX_CLASSES].sources);
  __u64 old = count.load(std::memory_order_relaxed), next;
  do next = old > n ? old - n : 0;
  while (!count.compare_exchange_weak(old, next, std::memory_order_relaxed));
  return next;
}

bool SharedMap::take_event(const lv_limit& rate, uint64_t now) {
  if (!rate.cost) return false;
  std::atomic_ref ready(p_[LV_MAX_CLASSES].events_ready);
  __u64 seen = ready.load(std::memory_order_relaxed);
  do {
    if (!lv_gcra_conforms(seen, now)) return false;
  } while (
      !ready.compare_exchange_weak(seen, lv_gcra_after(seen, now, rate.cost, rate.tau_ns), std::memory_order_relaxed));
  return true;
}

Result<uint64_t> count_sources(int state_fd) {
  uint64_t n = 0;
  LV_TRY(for_each_source(state_fd, [&](const lv_key&, const lv_state&) { ++n; }));
  return n;
}

}  // namespace levee
