#include "daemon/known_good.hpp"

#include <iterator>

#include "datapath/filters.hpp"
#include "syn_cells.h"

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

namespace {

// The key of the source's network as SYN authentication's answers and marks count it:
// its address masked to the answer prefix, without class or flags.
lv_key answer_network(const lv_key& k, const lv_answer& a) {
  lv_key n{};
  n.family = lv_key_family(k.family);
  if (n.family == LV_AF_INET) {
    n.addr[2] = k.addr[2];  // IPv4-mapped: ::ffff:a.b.c.d
    n.addr[3] = k.addr[3] & a.mask4;
  } else {
    for (unsigned i = 0; i < 4; ++i) n.addr[i] = k.addr[i] & a.mask6[i];
  }
  return n;
}

}  // namespace

Ageing ageing_due(double false_positive, uint64_t now_ns, uint64_t last_ns, uint64_t next_ns) {
  if (now_ns >= next_ns) return Ageing::Scheduled;
  if (false_positive > kGoodMaxFalsePositive && now_ns - last_ns >= kGoodEarliestAgeingNs) return Ageing::Early;
  return Ageing::None;
}

bool NetworkMarks::take(const lv_key& k, const lv_answer& a, uint32_t epoch) {
  if (epoch != epoch_) {  // the filter aged: every count starts over
    cells_.clear();
    counted_.clear();
    epoch_ = epoch;
  }
  const lv_key source = filter_key(k);
  if (counted_.contains(source)) return true;
  uint64_t& cell = cells_[answer_network(k, a)];
  const uint64_t next = lv_syn_mark_take(cell, epoch, a.marks_per_network);
  if (!next) {
    ++capped_;
    return false;
  }
  cell = next;
  counted_.insert(source);
  return true;
}

}  // namespace levee::daemon
