#include "bpf/prune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bpf/kernel.hpp"
#include "bpf/maps.hpp"
#include "bpf/pins.hpp"
#include "bpf/policy_map.hpp"
#include "core/lock.hpp"
#include "policy/class_ids.hpp"
#include "policy/policy.hpp"

namespace levee {
namespace {

// Batch size of the walk: large enough that syscalls do not dominate, small enough that
// a state read idle is deleted a moment later.
constexpr uint32_t kChunk = 4096;

struct KeyHash {
  size_t operator()(const lv_key& k) const {
    return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(&k), sizeof k));
  }
};
struct KeyEq {
  bool operator()(const lv_key& a, const lv_key& b) const { return std::memcmp(&a, &b, sizeof a) == 0; }
};
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
  out.family = k.family & ~LV_KEY_NETWORK;
  if (out.family == LV_AF_INET) {
    out.addr[2] = k.addr[2];  // the IPv4-mapped marker
    out.addr[3] = k.addr[3] & mask4;
  } else {
    for (unsigned w = 0; w < 4; ++w) out.addr[w] = k.addr[w] & mask6[w];
  }
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
    return it->second.count(masked(k, m4, m6)) > 0;
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

Result<PruneResult> prune(const std::string& iface, uint64_t idle_ns) {
  const auto t0 = std::chrono::steady_clock::now();
  LV_TRY(check_privileges("prune"));
  LV_TRY(check_bpffs());
  LV_TRY_ASSIGN(auto lock, IfaceLock::acquire(iface));
  LV_TRY_ASSIGN(auto pins, open_pinned(iface));
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(pins));
  LV_TRY_ASSIGN(auto shared, SharedMap::map(pins.shared.get()));
  LV_TRY_ASSIGN(auto seen, SeenMap::map(pins.seen.get()));

  // Policies change only under the lock we hold: this one stays active throughout.
  const lv_policy& pol = pm.active();
  const uint64_t now = Clocks::read().now_mono_ns;
  PruneResult r;
  r.refuse = pol.flags & LV_POL_REFUSE_FULL;
  r.full_at = pol.full_at;

  // Ban records first: the forgotten go, the active ones keep their sources.
  KeySet banned;
  std::vector<lv_key> banned_all, forgettable;
  LV_TRY(for_each_ban(pins.bans.get(), [&](const lv_key& k, const lv_ban& b) {
    if (ban_forgettable(k, b, pol, now)) {
      forgettable.push_back(k);
      return;
    }
    ++r.bans_kept;
    if (before(now, b.until_ns)) {
      ++r.bans_active;
      if (k.class_id == LV_ALL_CLASSES)
        banned_all.push_back(k);
      else
        banned.insert(k);
    }
  }));
  LV_TRY_ASSIGN(auto gone, delete_keys(pins.bans.get(), forgettable, "ban records"));
  r.bans_removed = gone;
  BanAllIndex banned_everywhere(pol, std::move(banned_all));

  std::array<lv_class, LV_MAX_CLASSES> judged{};
  for (unsigned id = 0; id < LV_MAX_CLASSES; ++id) judged[id] = prune_class(pol, id);

  // The inactive half of the filter: packets that read it before the last flip (an
  // earlier prune, perhaps a moment ago) have left the program after a grace period.
  const uint32_t seed = pm.control().seen_seed;
  uint64_t* refill = seen.half((pm.control().seen_active & 1) ^ 1);
  LV_TRY(wait_for_datapath_readers());
  seen_clear(refill);

  std::vector<lv_key> sources, networks;
  sources.reserve(kChunk);
  networks.reserve(kChunk);
  LV_TRY(for_each_state_chunk(pins.state.get(), kChunk,
                              [&](std::span<const lv_key> keys, std::span<const lv_state> states) -> Status {
                                sources.clear();
                                networks.clear();
                                for (size_t i = 0; i < keys.size(); ++i) {
                                  const lv_key& k = keys[i];
                                  const bool network = k.family & LV_KEY_NETWORK;
                                  bool idle = true;
                                  if (key_current(k, pol)) {
                                    idle = state_idle(k, states[i], judged[k.class_id], now, idle_ns);
                                    if (idle && !network) idle = !banned.count(k) && !banned_everywhere.covers(k);
                                  }
                                  if (idle) {
                                    (network ? networks : sources).push_back(k);
                                    continue;
                                  }
                                  ++(network ? r.networks_kept : r.sources_kept);
                                  if (!network) {
                                    // The datapath ORs into this half too, for sources it creates meanwhile.
                                    seen_mark(refill, k, seed);
                                    ++r.filter_sources;
                                  }
                                }
                                LV_TRY_ASSIGN(auto s, delete_keys(pins.state.get(), sources, "idle sources"));
                                LV_TRY_ASSIGN(auto n, delete_keys(pins.state.get(), networks, "idle networks"));
                                r.sources_removed += s;
                                r.networks_removed += n;
                                // The datapath counts every state it creates while refusing, networks included; the
                                // room is given back batch by batch, so new sources are admitted during a long walk.
                                if (r.refuse) r.count = shared.subtract_sources(s + n);
                                return {};
                              }));
  if (r.refuse && !r.count) r.count = shared.sources();  // an empty map
  pm.flip_seen();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace levee
