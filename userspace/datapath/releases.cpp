#include "datapath/releases.hpp"

#include <bpf/bpf.h>

#include <bit>
#include <cstring>

#include "guard.h"
#include "policy/class_ids.hpp"

namespace levee {

bool AutopilotReleases::Less::operator()(const lv_key& a, const lv_key& b) const {
  return std::memcmp(&a, &b, sizeof a) < 0;
}

void AutopilotReleases::track(const lv_key& watch_key) { networks_.emplace(watch_key, true); }

Result<std::vector<Released>> AutopilotReleases::poll(const Pinned& pins, SharedMap& shared, const lv_policy& p,
                                                      uint64_t now) {
  std::vector<Released> out;
  for (uint8_t id : class_order(p)) {
    const lv_class& c = p.classes[id];
    if (!(c.flags & LV_CLASS_AUTO_ADMIT)) continue;
    const lv_guard g = shared.guard(id);
    if (g.engaged_ns && lv_guard_calm(g.last_over_ns, now, c.autop.release_ns) &&
        shared.release_guard(id, g.engaged_ns))
      out.push_back({LV_EV_RELEASED, id, {}, g.engaged_ns});
  }
  for (auto it = networks_.begin(); it != networks_.end();) {
    const lv_key& k = it->first;
    lv_state st{};
    const bool gone = bpf_map_lookup_elem(pins.state.get(), &k, &st) != 0;
    auto w = std::bit_cast<lv_watch>(st);
    const bool known = !gone && k.class_id < LV_MAX_CLASSES && (p.classes[k.class_id].flags & LV_CLASS_ESCALATE) &&
                       p.classes[k.class_id].epoch == k.epoch;
    if (!known || !w.escalated_ns) {
      it = networks_.erase(it);
      continue;
    }
    if (lv_watch_escalated(&w, now, p.classes[k.class_id].autop.release_ns)) {
      ++it;
      continue;
    }
    const uint64_t since = w.escalated_ns;
    w.escalated_ns = 0;
    if (bpf_map_update_elem(pins.state.get(), &k, &w, BPF_EXIST) == 0)
      out.push_back({LV_EV_DEESCALATED, k.class_id, k, since});
    it = networks_.erase(it);
  }
  return out;
}

}  // namespace levee
