#include "daemon/maintenance.hpp"

#include <bit>
#include <chrono>

#include "core/clock.hpp"
#include "daemon/log.hpp"
#include "datapath/maps.hpp"
#include "datapath/prune.hpp"
#include "export/render_units.hpp"
#include "guard.h"
#include "policy/class_ids.hpp"

namespace levee::daemon {
namespace {

// What the walk does with each batch it reads, besides pruning: the autopilot's counts,
// the known-good judge, the escalated networks.
class Visitor {
 public:
  Visitor(const WalkUse& use, const lv_policy& pol, const SharedMap& shared, uint64_t now)
      : use_(use), pol_(pol), now_(now) {
    GoodJudge::Classes classes{};
    for (uint8_t id : class_order(pol)) {
      const lv_class& c = pol.classes[id];
      const lv_guard g = shared.guard(id);
      classes[id] = {(c.flags & LV_CLASS_AUTO_ADMIT) != 0, lv_guard_calm(g.last_over_ns, now, c.autop.release_ns) != 0,
                     g.last_over_ns};
    }
    if (use_.judge) use_.judge->begin(now, classes);
  }

  Status operator()(std::span<const lv_key> keys, std::span<const lv_state> states) {
    for (size_t i = 0; i < keys.size(); ++i) count(keys[i], states[i]);
    if (use_.judge) use_.judge->batch(keys, states, marks_);
    return {};
  }

  // The walk is over: the judge forgets who it did not see, its marks are made.
  void finish(WalkCounts& w) {
    if (use_.judge) use_.judge->end();
    if (use_.good) {
      const uint32_t epoch = use_.good->epoch();
      for (const lv_key& k : marks_) {
        if (use_.bound && !use_.bound->take(k, pol_.answer, epoch)) {
          ++w.capped;
          continue;
        }
        use_.good->mark(k);
        ++w.marked;
      }
    }
    w.probation = n_.probation;
    w.watched = n_.watched;
    w.escalated = escalated_;
  }
  const StateCounts& counts() const { return n_; }

 private:
  void count(const lv_key& k, const lv_state& s) {
    count_key(n_, k, s);
    if (!(k.family & LV_KEY_WATCH) || k.class_id >= LV_MAX_CLASSES) return;
    const auto w = std::bit_cast<lv_watch>(s);
    if (!lv_watch_escalated(&w, now_, pol_.classes[k.class_id].autop.release_ns)) return;
    ++escalated_;
    if (use_.escalated) use_.escalated(k);
  }

  const WalkUse& use_;
  const lv_policy& pol_;
  uint64_t now_;
  StateCounts n_;
  uint64_t escalated_ = 0;
  std::vector<lv_key> marks_;
};

// What the walk kept: a prune's counts (and its deletions said), or with idle off a
// status walk's.
Result<WalkCounts> walk(const DaemonOptions& o, const Pinned& pins, const WalkUse& use) {
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(pins));
  LV_TRY_ASSIGN(auto shared, SharedMap::map(pins.shared.get()));
  const uint64_t now = Clocks::read().now_mono_ns;
  Visitor visit(use, pm.active(), shared, now);
  WalkCounts w;
  if (o.idle_ns) {
    LV_TRY_ASSIGN(auto r, prune(o.iface, o.idle_ns, std::ref(visit)));
    if (r.sources_removed || r.networks_removed || r.bans_removed)
      say(o.iface, "pruned {} idle sources, {} networks, {} ban records", group_digits(r.sources_removed),
          group_digits(r.networks_removed), group_digits(r.bans_removed));
    w = WalkCounts{.sources = r.sources_kept,
                   .networks = r.networks_kept,
                   .bans_active = r.bans_active,
                   .ban_records = r.bans_kept};
  } else {
    LV_TRY(for_each_state_chunk(pins.state.get(), 4096, std::ref(visit)));
    w.sources = visit.counts().sources;
    w.networks = visit.counts().networks;
    LV_TRY(for_each_ban(pins.bans.get(), [&](const lv_key&, const lv_ban& b) {
      ++w.ban_records;
      w.bans_active += static_cast<int64_t>(b.until_ns - now) > 0;
    }));
  }
  visit.finish(w);
  return w;
}

}  // namespace

std::optional<WalkCounts> maintenance_walk(const DaemonOptions& o, const Pinned& pins, const WalkUse& use) {
  const auto t0 = std::chrono::steady_clock::now();
  auto w = walk(o, pins, use);
  if (!w) {
    say(o.iface, "maintenance walk failed: {}", w.error().message());
    return std::nullopt;
  }
  w->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  w->at_unix_ns = unix_now_ns();
  return *w;
}

}  // namespace levee::daemon
