// crowdsec_held.hpp - the CrowdSec decisions the filter holds, as the bouncer keeps track
// of them, and what each pull changes: entries to write and networks to remove. Pure
// (the bouncer writes the plan into the maps), so the stream's rules are unit-tested:
//
//   - a startup pull holds every decision the Local API has: whatever is held and not in
//     it is removed (the reconciliation after an outage or a restart);
//   - an incremental pull adds what is new and removes what was deleted, a delete only
//     when it names the decision held for its network (by id): the stream repeats
//     deletes, and one of an older decision of the same address must not lift a newer;
//   - the Local API shows one decision per value, the longest; two for one network in
//     one reply (a ban and another type both supported) keep the later expiry;
//   - a decision the spec's filter does not take, or with no time left, is not held.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "levee_abi.h"
#include "policy/crowdsec.hpp"

namespace levee {

struct CsPlan {
  std::vector<CsEntry> put;
  std::vector<Cidr> remove;
  bool empty() const { return put.empty() && remove.empty(); }
};

// Which of the filter's maps an entry is in: [IPv4, IPv6][address, range].
struct CsCounts {
  uint64_t n[2][2] = {};
  uint64_t total() const { return n[0][0] + n[0][1] + n[1][0] + n[1][1]; }
};

class CsHeldSet {
 public:
  // What the maps hold already (a daemon adopting a running filter).
  void adopt(std::span<const CsEntry> entries);
  void clear() { held_.clear(); }
  // The changes of one pull, made to the set as they are planned.
  CsPlan plan(const CrowdsecSpec& spec, const CsStream& s, bool startup, uint64_t now_mono_ns);
  // Entries whose expiry `now` has reached: out of the set, to remove from the maps.
  std::vector<Cidr> expire(uint64_t now_mono_ns);
  CsCounts counts() const;
  size_t size() const { return held_.size(); }

 private:
  void startup(const CrowdsecSpec& spec, const CsStream& s, uint64_t now, CsPlan& plan);
  void incremental(const CrowdsecSpec& spec, const CsStream& s, uint64_t now, CsPlan& plan);
  std::map<Cidr, lv_cs_value, CidrLess> held_;
  uint64_t next_expiry_ = 0;  // the earliest expiry held (0: none known): expire() skips the walk until then
};

// An entry's place in CsCounts: [family][range].
inline unsigned cs_family_index(const Cidr& c) { return c.family == 6 ? 1 : 0; }
inline unsigned cs_range_index(const Cidr& c) { return c.len != (c.family == 6 ? 128u : 32u) ? 1 : 0; }

}  // namespace levee
