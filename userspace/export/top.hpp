// top.hpp - `levee top`: the sources doing the most, ranked and rendered.
//
// The reading (a batch walk of lv_state, ban and list lookups for the rows shown) is in
// cli/top.cpp; this is the arithmetic and the output, without the kernel: scores, the
// partial sort, rates between two walks, the limiter's view of a row (bpf/shared/limiter.h),
// text and JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "datapath/maps.hpp"
#include "levee_abi.h"

namespace levee {

enum class TopBy { Drops, Packets, Bytes };
std::optional<TopBy> parse_top_by(const std::string& s);  // drops, packets, bytes
const char* top_by_name(TopBy by);

// A source's (or network's) counters as the datapath packs them: 32 bits, wrapping.
struct TopCounts {
  uint32_t passed_packets = 0, passed_bytes = 0, dropped_packets = 0, dropped_bytes = 0;
  static TopCounts of(const lv_state& s);
};

// What ranks a row: drops (dropped packets), packets (passed + dropped packets) or
// bytes (passed + dropped bytes).
uint64_t top_score(const TopCounts& c, TopBy by);

// Was the state made again between readings a and b (evicted or pruned, then new)? A
// packet count went back, by serial-number arithmetic (RFC 1982): a count that wrapped
// at 2^32 did not go back.
bool remade(const TopCounts& a, const TopCounts& b);

// What a source did between two walks: the difference modulo 2^32, or all of b when the
// state was remade.
TopCounts counts_since(const TopCounts& a, const TopCounts& b);

// Each key's counters from one walk, to compare the next walk with (--watch): an
// open-addressing table sized once per walk, so a million sources cost tens of
// milliseconds, not the allocations of a node per key.
class KeyedCounts {
 public:
  void assign(std::span<const lv_key> keys, std::span<const lv_state> states);
  const TopCounts* find(const lv_key& k) const;
  size_t size() const { return size_; }

 private:
  struct Slot {
    lv_key key;  // family 0: empty (a real key's family is 4 or 6)
    TopCounts counts;
  };
  size_t slot_of(const lv_key& k) const;
  std::vector<Slot> slots_;
  size_t mask_ = 0, size_ = 0;
};

// The indices of the `n` highest scores, highest first (ties: lower index first),
// with a partial sort: O(size) to select, O(n log n) to order.
std::vector<size_t> top_indices(std::span<const uint64_t> scores, size_t n);

// One ranked row, everything it shows.
struct TopRow {
  lv_key key{};
  std::string address;  // key_address() with the class's (or network's) prefix
  unsigned prefix = 0;  // that prefix
  std::string class_name;
  bool network = false;                 // a network's state (LV_KEY_NETWORK), not a source's
  std::string override_name;            // the override whose limits apply, if any
  TopCounts counts;                     // since the state was created (wrapping)
  std::optional<TopCounts> delta;       // --watch: since the previous walk
  std::optional<uint64_t> tokens;       // packets it could send at once (packet limit only)
  std::optional<uint64_t> byte_tokens;  // bytes likewise (byte limit only)
  uint64_t wait_ns = 0;                 // until its next packet would pass
  bool banned = false;
  uint64_t ban_remaining_ns = 0;
};

// The limiter's view of a state under limits (pkt, bytes) at `now`: tokens, byte
// tokens, wait (the later of the two limits), as `levee show` computes them.
void top_limiter(TopRow& row, const lv_state& s, const lv_limit& pkt, const lv_limit& bytes, uint64_t now_ns);

struct TopView {
  std::string iface;
  TopBy by = TopBy::Drops;
  uint64_t sources = 0, networks = 0;  // entries walked (networks only with --networks)
  bool with_networks = false;
  double walk_seconds = 0;         // how long the walk took
  std::optional<double> interval;  // --watch: seconds between the two walks compared
  std::vector<TopRow> rows;
};

// JSON: as docs/JSON.md describes `levee top` (a test holds it to that).
nlohmann::json top_json(const TopView& v);
std::string top_text(const TopView& v);

}  // namespace levee
