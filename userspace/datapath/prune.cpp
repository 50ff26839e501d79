#include "datapath/prune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/clock.hpp"
#include "datapath/filters.hpp"
#include "datapath/maps.hpp"
#include "datapath/policy_map.hpp"
#include "datapath/session.hpp"
#include "guard.h"
#include "policy/class_ids.hpp"
#include "policy/keys.hpp"
#include "policy/policy.hpp"
#include "rules.h"

namespace levee {
namespace {

// Batch size of the walk: large enough that syscalls do not dominate, small enough that
// a state read idle is deleted a moment later.
constexpr uint32_t kChunk = 4096;

using KeySet = std::unordered_set<lv_key, KeyHash, KeyEq>;

// Signed difference: the datapath's times are compared this way (limiter.h).
bool before(uint64_t a, uint64_t b) { return static_cast<int64_t>(b - a) > 0; }

// A limit that has been full since before `horizon`.
bool full_since(uint64_t ready, const lv_limit& l, uint64_t horizon) { return before(ready + l.tau_ns, horizon); }

void widen(lv_limit& into, const lv_limit& l) {
  if (!l.cost) return;
  into.cost = std::max<uint64_t>(into.cost, l.cost);
  into.tau_ns = std::max<uint64_t>(into.tau_ns, l.tau_ns);
}

// The address of a key masked to (mask4, mask6), family without LV_KEY_NETWORK, the
// rest zero: what two keys of different prefixes are compared on.
lv_key masked(const lv_key& k, uint32_t mask4, const uint32_t (&mask6)[4]) {
  lv_key out{};
  lv_key_mask(&out, k.addr, lv_key_family(k.family), mask4, mask6, 0, 0, 0);
  return out;
}

// Active bans in every class, by class: the records masked to the shorter of the ban
// prefix and the class's prefix, so a source of the class is looked up by its own key
// masked the same way (the two prefixes overlap exactly when those agree).
class BanAllIndex {
 public:
  BanAllIndex(const lv_policy& p, std::vector<lv_key> records) : p_(p), records_(std::move(records)) {}
  bool covers(const lv_key& k) {
    if (records_.empty()) return false;
    const unsigned id = k.class_id % LV_MAX_CLASSES;
    auto [it, fresh] = by_class_.try_emplace(id);
    uint32_t m4;
    uint32_t m6[4];
    mask_of(id, m4, m6);
    if (fresh)
      for (const lv_key& r : records_) it->second.insert(masked(r, m4, m6));
    return it->second.contains(masked(k, m4, m6));
  }

 private:
  void mask_of(unsigned id, uint32_t& m4, uint32_t (&m6)[4]) const {
    const lv_class& c = p_.classes[id];
    m4 = c.mask4 & p_.ban_mask4;
    for (unsigned w = 0; w < 4; ++w) m6[w] = c.mask6[w] & p_.ban_mask6[w];
  }
  const lv_policy& p_;
  std::vector<lv_key> records_;
  std::unordered_map<unsigned, KeySet> by_class_;
};

}  // namespace

bool state_idle(const lv_key& k, const lv_state& s, const lv_class& c, uint64_t now_ns, uint64_t idle_ns) {
  if (k.family & LV_KEY_WATCH) return watch_idle(std::bit_cast<lv_watch>(s), c, now_ns, idle_ns);
  const bool network = k.family & LV_KEY_NETWORK;
  const lv_limit& pkt = network ? c.net_pkt : c.pkt;
  const lv_limit& bytes = network ? c.net_bytes : c.bytes;
  if (!pkt.cost && !bytes.cost) return network || !(c.flags & LV_CLASS_ADMIT);
  if (idle_ns > now_ns) return false;  // nothing has been full that long since boot
  const uint64_t horizon = now_ns - idle_ns;
  if (pkt.cost && !full_since(s.ready_ns, pkt, horizon)) return false;
  if (bytes.cost && !full_since(s.ready_bytes_ns, bytes, horizon)) return false;
  return true;
}

bool watch_idle(const lv_watch& w, const lv_class& c, uint64_t now_ns, uint64_t idle_ns) {
  if (!(c.flags & LV_CLASS_ESCALATE)) return true;  // nothing watches it any more
  if (lv_watch_escalated(&w, now_ns, c.autop.release_ns)) return false;
  if (idle_ns > now_ns) return false;
  return full_since(w.ready_ns, c.autop.watch, now_ns - idle_ns);
}

bool key_current(const lv_key& k, const lv_policy& p) {
  if (k.class_id >= LV_MAX_CLASSES) return false;
  const std::vector<uint8_t> ids = class_order(p);
  return std::find(ids.begin(), ids.end(), k.class_id) != ids.end() && p.classes[k.class_id].epoch == k.epoch;
}

lv_class prune_class(const lv_policy& p, unsigned id) {
  lv_class c = p.classes[id % LV_MAX_CLASSES];
  for (uint32_t o = 0; o < std::min<uint32_t>(p.nr_overrides, LV_MAX_OVERRIDES); ++o) {
    if (!((p.overrides[o].classes >> (id % LV_MAX_CLASSES)) & 1)) continue;
    widen(c.pkt, p.overrides[o].pkt);
    widen(c.bytes, p.overrides[o].bytes);
  }
  return c;
}

bool ban_forgettable(const lv_key& k, const lv_ban& b, const lv_policy& p, uint64_t now_ns) {
  const bool over = !before(now_ns, b.until_ns);  // now >= until: the ban ended
  uint64_t forget = 0;
  if (k.class_id == LV_ALL_CLASSES) {
    // Every class banning in every class judges a repeat by its own forget_after.
    for (uint8_t id : class_order(p)) {
      const lv_class& c = p.classes[id];
      if ((c.flags & LV_CLASS_BAN) && (c.flags & LV_CLASS_BAN_ALL)) forget = std::max<uint64_t>(forget, c.forget_ns);
    }
  } else if (!key_current(k, p)) {
    return true;  // its class is gone: no packet finds it again
  } else if (p.classes[k.class_id].flags & LV_CLASS_BAN) {
    forget = p.classes[k.class_id].forget_ns;
  }
  return over && !before(now_ns, b.until_ns + forget);
}

namespace {

// The sources banned now, as the ban walk leaves them for the state walk.
struct BannedNow {
  KeySet in_class;             // records of one class: the source's own key
  std::vector<lv_key> in_all;  // every-class records
};

// Ban records first: the forgotten go, the active ones keep their sources.
Result<BannedNow> prune_bans(int bans_fd, const lv_policy& pol, uint64_t now, PruneResult& r) {
  BannedNow banned;
  std::vector<lv_key> forgettable;
  LV_TRY(for_each_ban(bans_fd, [&](const lv_key& k, const lv_ban& b) {
    if (ban_forgettable(k, b, pol, now)) {
      forgettable.push_back(k);
      return;
    }
    ++r.bans_kept;
    if (before(now, b.until_ns)) {
      ++r.bans_active;
      if (k.class_id == LV_ALL_CLASSES)
        banned.in_all.push_back(k);
      else
        banned.in_class.insert(k);
    }
  }));
  LV_TRY_ASSIGN(auto gone, delete_keys(bans_fd, forgettable, "ban records"));
  r.bans_removed = gone;
  return banned;
}

// The walk of lv_state, one batch at a time: the idle states are deleted, the kept
// sources marked in the half of the known-source filter being refilled.
class StateSweep {
 public:
  StateSweep(Session& sess, const lv_policy& pol, BannedNow banned, lv_seen_pair* refill, uint64_t now,
             uint64_t idle_ns, PruneResult& r)
      : sess_(sess),
        pol_(pol),
        banned_(std::move(banned.in_class)),
        banned_everywhere_(pol, std::move(banned.in_all)),
        refill_(refill),
        seed_(sess.policy.control().seen_seed),
        now_(now),
        idle_ns_(idle_ns),
        r_(r) {
    for (unsigned id = 0; id < LV_MAX_CLASSES; ++id) judged_[id] = prune_class(pol, id);
    sources_.reserve(kChunk);
    networks_.reserve(kChunk);
  }

  Status batch(std::span<const lv_key> keys, std::span<const lv_state> states) {
    sources_.clear();
    networks_.clear();
    for (size_t i = 0; i < keys.size(); ++i) {
      const lv_key& k = keys[i];
      const bool network = k.family & (LV_KEY_NETWORK | LV_KEY_WATCH);
      if (idle(k, states[i])) {
        (network ? networks_ : sources_).push_back(k);
        continue;
      }
      ++(network ? r_.networks_kept : r_.sources_kept);
      if (!network) {
        // The datapath ORs into this half too, for sources it creates meanwhile.
        seen_mark(refill_, k, seed_);
        ++r_.filter_sources;
      }
    }
    const int fd = sess_.pins.state.get();
    LV_TRY_ASSIGN(auto s, delete_keys(fd, sources_, "idle sources"));
    LV_TRY_ASSIGN(auto n, delete_keys(fd, networks_, "idle networks"));
    r_.sources_removed += s;
    r_.networks_removed += n;
    // The datapath counts every state it creates while refusing, networks included; the
    // room is given back batch by batch, so new sources are admitted during a long walk.
    if (r_.refuse) r_.count = sess_.shared.subtract_sources(s + n);
    return {};
  }

 private:
  bool idle(const lv_key& k, const lv_state& s) {
    if (!key_current(k, pol_)) return true;
    const bool idle = state_idle(k, s, judged_[k.class_id], now_, idle_ns_);
    if (!idle || (k.family & (LV_KEY_NETWORK | LV_KEY_WATCH))) return idle;
    return !banned_.contains(k) && !banned_everywhere_.covers(k);
  }

  Session& sess_;
  const lv_policy& pol_;
  KeySet banned_;
  BanAllIndex banned_everywhere_;
  std::array<lv_class, LV_MAX_CLASSES> judged_{};
  lv_seen_pair* refill_;
  uint32_t seed_;
  uint64_t now_, idle_ns_;
  PruneResult& r_;
  std::vector<lv_key> sources_, networks_;
};

}  // namespace

Result<PruneResult> prune(const std::string& iface, uint64_t idle_ns, const StateChunkFn& visit) {
  const auto t0 = std::chrono::steady_clock::now();
  LV_TRY_ASSIGN(auto sess, Session::open(iface, "prune"));
  LV_TRY_ASSIGN(auto seen, SeenMap::map(sess.pins.seen.get()));
  LV_TRY_ASSIGN(auto good, GoodMap::map(sess.pins.good.get()));

  // Policies change only under the lock we hold: this one stays active throughout.
  const lv_policy& pol = sess.policy.active();
  const uint64_t now = Clocks::read().now_mono_ns;
  PruneResult r;
  r.refuse = pol.flags & LV_POL_REFUSE_FULL;
  r.full_at = pol.full_at;
  LV_TRY_ASSIGN(auto banned, prune_bans(sess.pins.bans.get(), pol, now, r));

  // The inactive half of the filter: packets that read it before the last flip (an
  // earlier prune, perhaps a moment ago) have left the program after a grace period.
  lv_seen_pair* refill = seen.half((sess.policy.control().seen_active & 1) ^ 1);
  LV_TRY(wait_for_datapath_readers());
  seen_clear(refill);
  // Known-good sources read as "may have state" whatever the map holds (struct
  // lv_seen_pair): both halves, the one packets read and the one marks go to first.
  seen_cover(refill, good.half(0).words);
  seen_cover(refill, good.half(1).words);

  StateSweep sweep(sess, pol, std::move(banned), refill, now, idle_ns, r);
  LV_TRY(for_each_state_chunk(sess.pins.state.get(), kChunk,
                              [&](std::span<const lv_key> keys, std::span<const lv_state> states) -> Status {
                                if (visit) LV_TRY(visit(keys, states));
                                return sweep.batch(keys, states);
                              }));
  if (r.refuse && !r.count) r.count = sess.shared.sources();  // an empty map
  sess.policy.flip_seen();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace levee
