// known_good.hpp - the known-good filter (lv_good) as the controller keeps it: marking a
// source, asking about one, and ageing the filter.
//
// A known-good source is let past an engaged admission budget without spending it
// (bpf/arrival.h), so that a flood of new sources cannot lock out a client whose state
// the LRU evicted. The filter is a blocked Bloom filter (bpf/shared/filters.h, lv_good_bits())
// in two halves: a mark goes to both; ageing makes packets read the other half and then
// clears the one they left, so a mark lasts between one and two ageing periods unless it
// is made again. lv_seen must cover lv_good (the datapath refuses on lv_seen alone), so
// a mark also sets the source's known bit in both halves of lv_seen, and `levee prune`
// ORs lv_good into the half of lv_seen it refills.
//
// The filter is pinned: marks survive a restart of `levee run`, and kill -9.
#pragma once

#include "core/result.hpp"
#include "datapath/filters.hpp"
#include "datapath/pins.hpp"
#include "datapath/policy_map.hpp"
#include "levee_abi.h"

namespace levee {

class KnownGood {
 public:
  // The filters of an attachment, mapped; `policy` is its mapped lv_policy (the seed and
  // the halves packets read) and must outlive this object.
  static Result<KnownGood> open(const Pinned& p, PolicyMap& policy);

  // Mark a source known-good (a key as the datapath keys the source: its class, its
  // prefix). The API for anything that proves a source real; the daemon marks sources
  // that behaved (daemon/known_good_marker.hpp).
  void mark(const lv_key& k);
  // Is it known-good in the half packets read? (A Bloom filter: may say yes wrongly.)
  bool test(const lv_key& k) const;
  // Forget marks older than one or two calls ago: packets move to the other half (whose
  // marks are those since the previous call), then, after a grace period, the half they
  // left is cleared and starts collecting marks again. Each network's count of marks
  // starts over (lv_control.good_epoch).
  Status age();
  // How full the half packets read is, and its false positives (filters.hpp).
  GoodFill fill() const;
  // lv_control.good_epoch: which ageing the networks' counts of marks belong to.
  uint32_t epoch() const { return policy_.control().good_epoch; }

 private:
  KnownGood(SeenMap seen, GoodMap good, PolicyMap& policy)
      : seen_(std::move(seen)), good_(std::move(good)), policy_(policy) {}
  SeenMap seen_;
  GoodMap good_;
  PolicyMap& policy_;
};

}  // namespace levee
