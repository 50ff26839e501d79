// maps.hpp - typed reads of the datapath's counters and per-source state.
#pragma once

#include <bpf/bpf.h>
#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "datapath/mapped.hpp"
#include "levee_abi.h"

namespace levee {

// Counters summed over all CPUs.
struct Counters {
  std::array<lv_counter, LV_REASON_MAX> by_reason{};
  std::array<lv_class_counters, LV_MAX_CLASSES> by_class{};
  // Monitor mode: what would have been dropped, by reason (passed as LV_R_MONITORED).
  std::array<lv_counter, LV_REASON_MAX> would{};
  // SYN authentication's proxy mode: what became of the ACKs handed to the tc program
  // (enum lv_handoff_result).
  std::array<uint64_t, LV_HO_MAX> handoff{};
  // Sources SYN authentication proved but left unmarked: their network had made its
  // known-good marks for this ageing (known_good_per_network).
  uint64_t marks_capped = 0;

  lv_counter received() const;
  lv_counter passed() const;
  lv_counter dropped() const;
  lv_counter would_drop() const;
};

Result<Counters> read_counters(int percpu_fd);

// One walk of a hash map with batch lookups (BPF_MAP_LOOKUP_BATCH of up to `chunk`
// entries), handing each batch to `fn`; its error ends the walk.
template <typename Key, typename Value, typename Fn>
Status walk_batches(int fd, uint32_t chunk, const char* what, const Fn& fn) {
  std::vector<Key> keys(chunk);
  std::vector<Value> values(chunk);
  uint64_t token_in = 0, token_out = 0;  // hash maps use a bucket index as the token
  bool first = true;
  for (;;) {
    uint32_t count = chunk;
    int err =
        bpf_map_lookup_batch(fd, first ? nullptr : &token_in, &token_out, keys.data(), values.data(), &count, nullptr);
    const int saved = errno;
    if (err && saved != ENOENT) return sys_error(fmt::format("walk {} (batch lookup)", what), saved);
    if (count) LV_TRY(fn(std::span<const Key>(keys.data(), count), std::span<const Value>(values.data(), count)));
    if (err) return {};  // ENOENT: no more buckets
    token_in = token_out;
    first = false;
  }
}

// Visit every tracked source with batch lookups (thousands of entries per syscall).
// The map keeps changing underneath: entries inserted or evicted during the walk may
// be seen or not, never twice.
Status for_each_source(int state_fd, const std::function<void(const lv_key&, const lv_state&)>& fn);

// A key's address masked as stored: "198.18.0.7", or "198.18.0.0/24" when the prefix is
// shorter than a host; IPv4-mapped keys print as IPv4.
std::string key_address(const uint32_t (&addr)[4], uint8_t family, unsigned prefix);

// Number of entries in lv_state (a batch walk: ~100 ms per million entries).
Result<uint64_t> count_sources(int state_fd);

// lv_state's entries: sources, and networks (the state of a class's network limit,
// LV_KEY_NETWORK in the key's family). Both take room in the map.
struct StateCounts {
  uint64_t sources = 0;    // on probation or not
  uint64_t networks = 0;   // a class's network level (LV_KEY_NETWORK)
  uint64_t probation = 0;  // of the sources, on probation (LV_KEY_PROBATION)
  uint64_t watched = 0;    // networks the autopilot watches (LV_KEY_WATCH)
  uint64_t escalated = 0;  // of those, marked escalated (some may be calm, not yet released)
  uint64_t total() const { return sources + networks + watched; }
};
// Count one entry of lv_state where it belongs.
void count_key(StateCounts& n, const lv_key& k, const lv_state& s);
Result<StateCounts> count_state(int state_fd);

// Visit lv_state a batch at a time (BPF_MAP_LOOKUP_BATCH of up to `chunk` entries): for
// walks that act on what they read (delete it, rank it) without a call per entry. The
// callback may delete entries of the batch it was given. Its error ends the walk.
using StateChunkFn = std::function<Status(std::span<const lv_key>, std::span<const lv_state>)>;
Status for_each_state_chunk(int state_fd, uint32_t chunk, const StateChunkFn& fn);

// One walk of lv_state kept whole: every source's key and state, and networks' with
// `networks`; both counted either way. `hint`: the entries expected (the last walk's),
// to reserve once. `top` ranks a walk, `suggest` compares walks an interval apart.
struct StateWalk {
  std::vector<lv_key> keys;
  std::vector<lv_state> states;
  uint64_t sources = 0, networks = 0;
  double seconds = 0;  // how long the walk took
  // When it began. Each entry is read at some point of the walk; two walks of about the
  // same length read an entry about their starts' distance apart.
  std::chrono::steady_clock::time_point at;
};
Result<StateWalk> walk_state(int state_fd, bool networks, size_t hint);

// Delete these keys (BPF_MAP_DELETE_BATCH). A key already gone (evicted, deleted by
// someone else) is skipped, not an error. Returns how many this call deleted.
Result<size_t> delete_keys(int fd, std::span<const lv_key> keys, const char* what);

// Visit every ban record (lv_bans) with batch lookups, as for_each_source.
Status for_each_ban(int bans_fd, const std::function<void(const lv_key&, const lv_ban&)>& fn);

// lv_shared, mapped: the per-class budgets every CPU shares and the interface-wide
// source count (entry LV_MAX_CLASSES). The datapath updates them with compare-and-swap
// and atomic adds; the controller writes whole words with atomic stores.
class SharedMap {
 public:
  static Result<SharedMap> map(int shared_fd);

  // A class id given to a new class: its budgets start full, its counts at zero.
  void reset_class(unsigned id);
  // The count LV_POL_REFUSE_FULL compares with lv_policy.full_at.
  void set_sources(uint64_t n);
  uint64_t sources() const;
  // New sources the class admitted (LV_CLASS_ADMIT), since the id was given to it.
  uint64_t admitted(unsigned id) const;
  // The class's autopilot (struct lv_guard), word by word as the datapath leaves it.
  lv_guard guard(unsigned id) const;
  // Release a class the datapath has not released for want of an arrival: clears
  // engaged_ns if it still holds `since` (a CAS, so only one of the controller and the
  // datapath says it released). True if this call released it.
  bool release_guard(unsigned id, uint64_t since);
  // States removed by the controller: taken off the count with an atomic read-modify-
  // write (the datapath adds to it meanwhile), never below 0. Returns the new count.
  uint64_t subtract_sources(uint64_t n);
  // One event through the interface's event rate (lv_policy.events), the GCRA the
  // datapath's events take from: events the controller writes (ban ends) share the one
  // budget, so the stream as a whole keeps to events_per_second. False: over the rate
  // (or events are off, cost 0).
  bool take_event(const lv_limit& rate, uint64_t now_ns);

 private:
  explicit SharedMap(MappedArray m) : m_(std::move(m)), p_(m_.as<lv_shared>()) {}
  MappedArray m_;
  lv_shared* p_;
};

}  // namespace levee
