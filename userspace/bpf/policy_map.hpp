// policy_map.hpp - the datapath's policy, mapped into the controller.
//
// lv_policy is one mmapable array entry (struct lv_control). A change writes the
// slot packets are not reading and flips `active` with one atomic store, after a grace
// period that guarantees no packet is still reading the slot from before the previous
// flip. Controllers are serialised by IfaceLock, so there is one writer at a time.
#pragma once

#include "core/result.hpp"
#include "levee_abi.h"

namespace levee {

class PolicyMap {
 public:
  static Result<PolicyMap> map(int fd);
  PolicyMap(PolicyMap&& o) noexcept;
  PolicyMap& operator=(PolicyMap&&) = delete;
  ~PolicyMap();

  const lv_control& control() const { return *ctl_; }
  // The policy packets are using now.
  const lv_policy& active() const;

  // First write, before the program is attached: no readers, no grace period.
  void init(const lv_policy& p, unsigned ifindex, lv_attach_mode mode);
  // Replace the policy atomically with respect to packets. Bumps the generation.
  Status publish(lv_policy next);

 private:
  PolicyMap(lv_control* ctl, size_t len) : ctl_(ctl), len_(len) {}
  lv_control* ctl_;
  size_t len_;
};

// Wait until every BPF program that was running when this was called has finished.
Status wait_for_datapath_readers();

}  // namespace levee
