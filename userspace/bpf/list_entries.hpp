// list_entries.hpp - list entries as both families share them, and the entry that
// decides for one address, found and judged as the datapath does (bpf/lists.h,
// bpf/rules.h): what `levee show` reports.
#pragma once

#include <cstdint>
#include <optional>

#include "bpf/policy_map.hpp"
#include "levee_abi.h"
#include "policy/policy.hpp"

namespace levee {

// A list entry in the form both families share, for merging and display.
struct AnyEntry {
  Cidr cidr;
  lv_list_value value;
};

Cidr cidr_of(const lv_lpm4& k);
Cidr cidr_of(const lv_lpm6& k);

// The entry whose verdict is in force for `addr` (one address) at `now_mono_ns`: the
// one the datapath's lookup finds (its host entry, else the longest prefix covering
// it) or, once that has expired, the covering entry it falls back to. nullopt: no
// entry, or none in force (the address is limited by its class).
std::optional<AnyEntry> deciding_entry(const Lists& lists, const Cidr& addr, uint64_t now_mono_ns);

}  // namespace levee
