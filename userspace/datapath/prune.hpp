// prune.hpp - `levee prune`: remove idle per-source state and forgotten ban records.
//
// Nothing leaves lv_state by itself while a full map refuses new sources
// (LV_POL_REFUSE_FULL): the datapath counts the states it creates and never subtracts.
// Pruning is how that room comes back, and how idle state is cleaned up otherwise.
//
// A state is idle when every limit it is judged by has been full for `idle`: its ready
// time plus that limit's tau lies more than `idle` in the past. A GCRA that far back is
// a full bucket, the same as a source that never sent: deleting it loses no limiting
// decision. A banned source is never idle (its ready time sits at the ban's end anyway).
// States of a class that is gone (an unused id, or an earlier class's epoch) are never
// read again: idle by definition.
//
// The walk deletes what is idle one batch at a time (a state read idle is deleted
// milliseconds later; a source that sends in between loses the tokens it spent in that
// moment), subtracts the deletions from the refusing count, and refreshes the
// known-source filter (lv_seen): the inactive half is cleared, refilled with the kept
// sources and made the active one, so the bits of deleted sources no longer cost a
// lookup.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/result.hpp"
#include "datapath/maps.hpp"
#include "levee_abi.h"

namespace levee {

inline constexpr uint64_t kDefaultIdleNs = 10ull * 60 * LV_NSEC_PER_SEC;  // --idle

// Is this state idle at `now`, judged by class `c` (widened by the overrides that apply
// in it, see prune_class())? A source is judged by c.pkt and c.bytes, a network
// (LV_KEY_NETWORK) by c.net_pkt and c.net_bytes, each only if the limit exists. A
// source of a class without a limit per source carries no time to judge by: it is idle
// unless the class budgets new sources (LV_CLASS_ADMIT), where its state is what lets it
// in without paying the budget again; such states are kept. Ban records are not looked
// at here.
bool state_idle(const lv_key& k, const lv_state& s, const lv_class& c, uint64_t now_ns, uint64_t idle_ns);
// A watched network (LV_KEY_WATCH, struct lv_watch) is idle when its class no longer
// watches, or when it is not escalated and its limit has been full for `idle`.
bool watch_idle(const lv_watch& w, const lv_class& c, uint64_t now_ns, uint64_t idle_ns);

// Does the key belong to a class of this policy (its id in use, with that class's epoch)?
bool key_current(const lv_key& k, const lv_policy& p);

// Class `id` with each per-source limit as long as the longest of the class's and those
// of the overrides that apply in it: the datapath stores one ready time per source
// whichever limits decided, so idleness is judged by the longest tau it may have had.
lv_class prune_class(const lv_policy& p, unsigned id);

// May a ban record be deleted at `now`? Its ban is over and so is the time its offences
// are remembered (until + forget <= now), or it belongs to no current class (a class
// record of a gone class; an every-class record when no class bans in every class any
// more and its ban is over).
bool ban_forgettable(const lv_key& k, const lv_ban& b, const lv_policy& p, uint64_t now_ns);

struct PruneResult {
  uint64_t sources_removed = 0, sources_kept = 0;
  uint64_t networks_removed = 0, networks_kept = 0;
  uint64_t bans_removed = 0, bans_kept = 0;
  uint64_t bans_active = 0;       // of those kept, banning now
  bool refuse = false;            // the policy refuses new sources when full
  std::optional<uint64_t> count;  // refuse: lv_shared's source count after the subtraction
  uint64_t full_at = 0;           // refuse: the count new sources are refused at
  uint64_t filter_sources = 0;    // sources marked in the refreshed lv_seen half
  double seconds = 0;             // wall time of the whole prune
};

// Prune one interface under its lock (as every changing command). `visit`, if given,
// sees every entry of lv_state the walk reads, a batch at a time, before the idle ones
// are deleted (`levee run` judges known-good sources on the same walk).
Result<PruneResult> prune(const std::string& iface, uint64_t idle_ns, const StateChunkFn& visit = {});

}  // namespace levee
