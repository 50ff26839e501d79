#include "policy/map_memory.hpp"

#include <fmt/format.h>

#include <bit>
#include <charconv>
#include <sstream>
#include <string>

#include "core/input_file.hpp"
#include "core/units.hpp"
#include "levee_abi.h"

namespace levee {
namespace {

constexpr uint64_t kElemHeader = 48;  // struct htab_elem: hash node, LRU node, hash
constexpr uint64_t kBucket = 16;      // struct bucket: list head and lock

uint64_t round8(size_t n) { return (n + 7) / 8 * 8; }

// "13.4 GB": figures an operator compares with free(1)'s, in GiB.
std::string gib(uint64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1ull << 30)); }

}  // namespace

uint64_t hash_map_bytes(uint64_t entries, size_t key_size, size_t value_size) {
  if (entries == 0) return 0;
  return entries * (kElemHeader + round8(key_size) + round8(value_size)) + kBucket * std::bit_ceil(entries);
}

uint64_t attach_map_bytes(uint64_t max_sources, uint64_t max_bans) {
  return hash_map_bytes(max_sources, sizeof(lv_key), sizeof(lv_state)) +
         hash_map_bytes(max_bans, sizeof(lv_key), sizeof(lv_ban));
}

std::optional<uint64_t> mem_total_of(std::string_view meminfo) {
  std::istringstream in{std::string(meminfo)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemTotal:", 0) != 0) continue;
    const size_t start = line.find_first_of("0123456789");
    if (start == std::string::npos) return std::nullopt;
    uint64_t kb = 0;
    auto [end, ec] = std::from_chars(line.data() + start, line.data() + line.size(), kb);
    if (ec != std::errc() || kb == 0) return std::nullopt;
    return kb * 1024;  // the kernel's "kB" are KiB
  }
  return std::nullopt;
}

std::optional<uint64_t> read_mem_total() {
  auto f = read_input("/proc/meminfo", {.what = "the kernel's memory figures", .max_bytes = kMaxKernelFileBytes});
  if (!f) return std::nullopt;
  return mem_total_of(f->text);
}

Status check_map_memory(uint64_t max_sources, uint64_t max_bans, std::optional<uint64_t> mem_total, bool exceed) {
  if (!mem_total || exceed) return {};
  const uint64_t cap = *mem_total / 100 * kMapMemorySharePercent;
  const uint64_t need = attach_map_bytes(max_sources, max_bans);
  if (need <= cap) return {};
  // The largest max_sources that fits beside these bans (0 if the bans alone do not).
  uint64_t lo = 0, hi = max_sources;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (attach_map_bytes(mid, max_bans) <= cap)
      lo = mid;
    else
      hi = mid - 1;
  }
  return usage_error(
      fmt::format("max_sources {} and max_bans {} would pin {} of kernel memory, over {}% of this machine's {} "
                  "(MemTotal)",
                  format_count(max_sources), format_count(max_bans), gib(need), kMapMemorySharePercent,
                  gib(*mem_total)),
      lo ? fmt::format("lower --max-sources to at most {}, or attach anyway with --exceed-memory-cap", lo)
         : "lower max_bans, or attach anyway with --exceed-memory-cap");
}

}  // namespace levee
