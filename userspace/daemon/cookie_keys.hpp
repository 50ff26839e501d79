// cookie_keys.hpp - `levee run` rotates the SYN cookies' key (bpf/shared/syncookie.h): once per
// key epoch (68.7 s) it draws a fresh key into the slot of the epoch to come, inside the
// window in which no live cookie uses that slot. A filter without a daemon keeps the two
// keys drawn at attach.
#pragma once

#include <cstdint>
#include <optional>

#include "core/result.hpp"
#include "datapath/policy_map.hpp"

namespace levee::daemon {

class CookieKeys {
 public:
  // At `now_mono_ns` (CLOCK_MONOTONIC, the datapath's clock): the slot a new key is due
  // in, once per epoch and only inside lv_cookie_spare_slot()'s window; taken as done.
  std::optional<unsigned> take_due(uint64_t now_mono_ns);
  // take_due(), and a fresh key drawn into that slot. True if it wrote one.
  Result<bool> rotate(uint64_t now_mono_ns, PolicyMap& policy);

 private:
  uint64_t keyed_epoch_ = 0;  // the epoch this daemon last drew a key for; 0: none yet
};

}  // namespace levee::daemon
