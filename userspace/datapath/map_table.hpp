// map_table.hpp - the maps of the embedded program as its object declares them (type,
// entries, key and value sizes, flags), read from the skeleton without loading it: the
// facts ARCHITECTURE.md's map table is generated from (export/reference.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace levee {

struct MapFacts {
  std::string name, type;  // type as libbpf names it: "lru_hash", "array", ...
  uint32_t entries = 0, key_size = 0, value_size = 0;
  bool mmapable = false, no_prealloc = false;
};

// The program's own maps (not its .rodata, .bss and .data), in the object's order. An
// entry count attach sets (lv_state, lv_bans) is the object's default.
Result<std::vector<MapFacts>> program_maps();

}  // namespace levee
