// crowdsec_maps.hpp - the CrowdSec decisions in the kernel (lv_cs_host{4,6}, lv_cs_net{4,6}):
// written by levee run's bouncer, read by `levee status`.
//
// An address decision (a /32 or /128) goes into its family's hash, a range into its
// family's trie; lv_control.cs_present says which maps the datapath looks up. A bit is
// set before the first entry goes into its map and cleared after the last has left, so
// the datapath never skips a map that holds an entry in force.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "datapath/pins.hpp"
#include "datapath/policy_map.hpp"
#include "levee_abi.h"
#include "policy/cidr.hpp"

namespace levee {

// A decision as the filter's maps hold it: its network and its expiry (the program's
// clock) and id.
struct CsEntry {
  Cidr net;
  lv_cs_value value{};
};

// Which CsMap a network goes into: a host's hash or its family's trie.
CsMap cs_map_of(const Cidr& net);

class CrowdsecMaps {
 public:
  // The pinned maps of an attached interface, and its policy mapped (for cs_present).
  static Result<CrowdsecMaps> open(const std::string& iface);
  // The same from pins already open (tests: a loaded program's maps).
  static Result<CrowdsecMaps> of(Pinned p);

  // Every entry the maps hold (a daemon adopting a filter starts from them).
  Result<std::vector<CsEntry>> read() const;
  // Writes the entries (new or replacing one of the same network): the hashes in
  // batches of update calls, the tries one entry a call (tries take no batches).
  Status put(std::span<const CsEntry> entries);
  // Removes the networks; one not there is no error.
  Status remove(std::span<const Cidr> nets);
  // Which maps hold entries: CsMap bits, from the caller's count of what it wrote.
  void set_present(uint32_t bits) { policy_->set_cs_present(bits); }

 private:
  CrowdsecMaps(Pinned p, PolicyMap pm) : pins_(std::move(p)), policy_(std::move(pm)) {}
  int fd(CsMap m) const { return pins_.crowdsec[m].get(); }
  Pinned pins_;
  std::optional<PolicyMap> policy_;
};

// The lv_cs_present bit of a map.
uint32_t cs_present_bit(CsMap m);

// The decisions a pinned filter holds, and of those the ones in force at `now_mono_ns`:
// for `levee status`, which cannot ask the daemon.
struct CsCount {
  uint64_t entries = 0, in_force = 0;
};
Result<CsCount> count_crowdsec(const Pinned& p, uint64_t now_mono_ns);

}  // namespace levee
