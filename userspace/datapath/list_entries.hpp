// list_entries.hpp - list entries of both families in one form, and the entry that
// decides for one address (internal to the datapath layer).
//
// The tries hold IPv4 and IPv6 entries apart, keyed by lv_lpm4 and lv_lpm6. A change
// to the lists (an edit, a reload keeping the entries added at run time) and what reads
// them (list_rows, status, show) work on one sequence of CIDRs instead, and go back to
// tries once, with one value per prefix and the fallbacks of expiring entries computed.
// The deciding entry is found and judged as the datapath does (bpf/lists.h,
// bpf/shared/rules.h): what `levee show` reports.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "datapath/lists.hpp"
#include "datapath/policy_map.hpp"
#include "levee_abi.h"
#include "policy/cidr.hpp"
#include "policy/lists.hpp"

namespace levee {

// A list entry in the form both families share, for merging and display.
struct AnyEntry {
  Cidr cidr;
  lv_list_value value;
};

Cidr cidr_of(const lv_lpm4& k);
Cidr cidr_of(const lv_lpm6& k);

std::vector<AnyEntry> flatten_lists(const Lists& l);

// An entry as `levee allow|deny|override list` and `levee show` report it: expiry on the
// wall clock, the override by name.
ListRow list_row(const AnyEntry& e, const lv_policy& pol, const Clocks& clocks);

// Back to tries: one value per prefix (the higher precedence wins; at equal precedence
// the later entry), fallbacks computed.
Lists rebuild_lists(const std::vector<AnyEntry>& entries);

// The entry whose verdict is in force for `addr` (one address) at `now_mono_ns`: the
// one the datapath's lookup finds (its host entry, else the longest prefix covering
// it) or, once that has expired, the covering entry it falls back to. nullopt: no
// entry, or none in force (the address is limited by its class).
std::optional<AnyEntry> deciding_entry(const Lists& lists, const Cidr& addr, uint64_t now_mono_ns);

}  // namespace levee
