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
//   - a decision the spec's filter does not take, or with no time left, is not held;
//   - each map holds at most `cap` entries (LV_MAX_CS_ENTRIES): a decision for a new
//     network of a full map is not held, only counted (CsPlan::over), so that a Local
//     API holding more than levee can enforce costs the excess, not every pull.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "daemon/crowdsec_stream.hpp"
#include "datapath/crowdsec_maps.hpp"
#include "levee_abi.h"

namespace levee {

struct CsPlan {
  std::vector<CsEntry> put;
  std::vector<Cidr> remove;
  uint64_t over = 0;  // decisions not held: their map was full
  bool empty() const { return put.empty() && remove.empty(); }
};

// Which of the filter's maps an entry is in: [IPv4, IPv6][address, range].
struct CsCounts {
  uint64_t n[2][2] = {};
  uint64_t total() const { return n[0][0] + n[0][1] + n[1][0] + n[1][1]; }
};

class CsHeldSet {
 public:
  explicit CsHeldSet(uint64_t cap = LV_MAX_CS_ENTRIES) : cap_(cap) {}
  // What the maps hold already (a daemon adopting a running filter).
  void adopt(std::span<const CsEntry> entries);
  void clear() {
    held_.clear();
    counts_ = CsCounts{};
  }
  // The changes of one pull, made to the set as they are planned.
  CsPlan plan(const CrowdsecSpec& spec, const CsStream& s, bool startup, uint64_t now_mono_ns);
  // Entries whose expiry `now` has reached: out of the set, to remove from the maps.
  std::vector<Cidr> expire(uint64_t now_mono_ns);
  CsCounts counts() const { return counts_; }
  size_t size() const { return held_.size(); }

 private:
  void startup(const CrowdsecSpec& spec, const CsStream& s, uint64_t now, CsPlan& plan);
  void incremental(const CrowdsecSpec& spec, const CsStream& s, uint64_t now, CsPlan& plan);
  // Room in the map of `net` for one more entry, taken if there is.
  bool take_room(const Cidr& net);
  void recount();
  uint64_t cap_;
  std::map<Cidr, lv_cs_value, CidrLess> held_;
  CsCounts counts_;           // of held_
  uint64_t next_expiry_ = 0;  // the earliest expiry held (0: none known): expire() skips the walk until then
};

// An entry's place in CsCounts: [family][range].
inline unsigned cs_family_index(const Cidr& c) { return c.family == 6 ? 1 : 0; }
inline unsigned cs_range_index(const Cidr& c) { return c.len != (c.family == 6 ? 128u : 32u) ? 1 : 0; }

}  // namespace levee
