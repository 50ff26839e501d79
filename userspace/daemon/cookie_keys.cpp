#include "daemon/cookie_keys.hpp"

#include <sys/random.h>

#include "syncookie.h"

namespace levee::daemon {

std::optional<unsigned> CookieKeys::take_due(uint64_t now_mono_ns) {
  __u64 next_epoch = 0;
  const int slot = lv_cookie_spare_slot(now_mono_ns, &next_epoch);
  if (slot < 0 || next_epoch == keyed_epoch_) return std::nullopt;
  keyed_epoch_ = next_epoch;
  return static_cast<unsigned>(slot);
}

Result<bool> CookieKeys::rotate(uint64_t now_mono_ns, PolicyMap& policy) {
  const uint64_t was = keyed_epoch_;
  const auto slot = take_due(now_mono_ns);
  if (!slot) return false;
  uint64_t key[2] = {};
  if (getrandom(key, sizeof key, 0) != sizeof key) {
    keyed_epoch_ = was;  // due again on the next turn
    return sys_error("draw a SYN cookie key");
  }
  policy.set_cookie_key(*slot, key);
  return true;
}

}  // namespace levee::daemon
