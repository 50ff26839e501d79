// list_entries.hpp - list entries of both families in one form (internal to the bpf layer).
//
// The tries hold IPv4 and IPv6 entries apart, keyed by lv_lpm4 and lv_lpm6. A change
// to the lists (an edit, a reload keeping the entries added at run time) and what reads
// them (list_rows, status, show) work on one sequence of CIDRs instead, and go back to
// tries once, with one value per prefix and the fallbacks of expiring entries computed.
#pragma once

#include <cstdint>
#include <vector>

#include "bpf/policy_map.hpp"
#include "levee_abi.h"
#include "policy/cidr.hpp"

namespace levee {

struct AnyEntry {
  Cidr cidr;
  lv_list_value value;
};

std::vector<AnyEntry> flatten_lists(const Lists& l);

// At one prefix allow beats deny beats override (as compile() merges the file's lists).
int list_precedence(uint8_t kind);

// Back to tries: one value per prefix (the higher precedence wins; at equal precedence
// the later entry), fallbacks computed.
Lists rebuild_lists(const std::vector<AnyEntry>& entries);

}  // namespace levee
