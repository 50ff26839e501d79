#include "bpf/maps.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

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

Status for_each_source(int state_fd, const std::function<void(const lv_key&, const lv_state&)>& fn) {
  constexpr uint32_t kChunk = 8192;
  std::vector<lv_key> keys(kChunk);
  std::vector<lv_state> values(kChunk);
  uint64_t token_in = 0, token_out = 0;  // hash maps use a bucket index as the token
  bool first = true;
  for (;;) {
    uint32_t count = kChunk;
    int err = bpf_map_lookup_batch(state_fd, first ? nullptr : &token_in, &token_out, keys.data(),
                                   values.data(), &count, nullptr);
    if (err && errno != ENOENT) return sys_error("walk per-source state (batch lookup)");
    for (uint32_t i = 0; i < count; ++i) fn(keys[i], values[i]);
    if (err) return {};  // ENOENT: no more buckets
    token_in = token_out;
    first = false;
  }
}

Result<uint64_t> count_sources(int state_fd) {
  uint64_t n = 0;
  LV_TRY(for_each_source(state_fd, [&](const lv_key&, const lv_state&) { ++n; }));
  return n;
}

}  // namespace levee
