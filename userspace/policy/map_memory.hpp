// map_memory.hpp - the kernel memory an attachment's maps pin, against the machine's.
//
// lv_state and lv_bans are LRU hashes: the kernel allocates every element when the
// map is made, so --max-sources and max_bans are memory taken at attach and held
// until detach, whatever the traffic. `--max-sources 100M` pins about 13.4 GB. An
// attach whose maps would pin more than kMapMemoryShare of MemTotal is refused unless
// the operator says --exceed-memory-cap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/result.hpp"

namespace levee {

// The share of MemTotal the maps sized at attach may pin, in percent. The memory is the
// kernel's, unswappable and out of the OOM killer's reach for as long as the filter is
// attached: a quarter leaves the machine its work; the default 1M sources (about 130 MB
// with the ban records) fits any machine of 520 MB or more.
inline constexpr unsigned kMapMemorySharePercent = 25;

// What the kernel allocates for a preallocated hash map of `entries` elements: per
// element its header (struct htab_elem with its LRU node, 48 bytes on 64-bit) and the
// key and value, each rounded up to 8 bytes; and a bucket (16 bytes) per power of two
// at or above `entries`.
uint64_t hash_map_bytes(uint64_t entries, size_t key_size, size_t value_size);

// lv_state with max_sources entries plus lv_bans with max_bans.
uint64_t attach_map_bytes(uint64_t max_sources, uint64_t max_bans);

// MemTotal of a /proc/meminfo text, in bytes; nullopt when it has none.
std::optional<uint64_t> mem_total_of(std::string_view meminfo);
// This machine's, from /proc/meminfo.
std::optional<uint64_t> read_mem_total();

// Refuses (a usage error naming the figures, the largest --max-sources that fits, and
// the flag) maps over kMapMemorySharePercent of mem_total, unless exceed is set.
// Without a MemTotal to compare with there is no cap.
Status check_map_memory(uint64_t max_sources, uint64_t max_bans, std::optional<uint64_t> mem_total, bool exceed);

}  // namespace levee
