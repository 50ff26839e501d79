#include "daemon/known_good.hpp"

#include <iterator>

namespace levee::daemon {

void GoodJudge::begin(uint64_t now, const Classes& classes) {
  now_ = now;
  classes_ = classes;
  ++walk_;
}

void GoodJudge::batch(std::span<const lv_key> keys, std::span<const lv_state> states, std::vector<lv_key>& marks) {
  for (size_t i = 0; i < keys.size() && i < states.size(); ++i) {
    const lv_key& k = keys[i];
    if (!lv_key_is_source(k.family) || (k.family & LV_KEY_PROBATION) || k.class_id >= LV_MAX_CLASSES) continue;
    const ClassNow& c = classes_[k.class_id];
    if (!c.autopilot) continue;
    const uint32_t passed = LV_COUNT_PACKETS(states[i].passed), dropped = LV_COUNT_PACKETS(states[i].dropped);
    auto [it, fresh] = seen_.try_emplace(k, Seen{now_, passed, dropped, walk_});
    Seen& s = it->second;
    s.walk = walk_;
    if (fresh) continue;
    if (dropped != s.dropped) {  // refused something since: it begins again now
      s = Seen{now_, passed, dropped, walk_};
      continue;
    }
    const bool long_enough = now_ - s.first_ns >= after_ns_;
    const bool calm_throughout = c.calm && static_cast<int64_t>(c.last_over_ns - s.first_ns) < 0;
    if (long_enough && passed != s.passed && calm_throughout) marks.push_back(k);
  }
}

void GoodJudge::end() {
  std::erase_if(seen_, [&](const auto& e) { return e.second.walk != walk_; });
}

}  // namespace levee::daemon
