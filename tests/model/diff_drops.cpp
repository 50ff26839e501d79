// diff_drops.cpp - the differential test's model (diff_model.hpp): what a refusal
// leaves behind: this CPU's hot sources, events, and bans (their records, lengths and
// shadows), written from docs/ARCHITECTURE.md and docs/CONFIG.md.
#include <algorithm>

#include "diff_model.hpp"

namespace levee::progtest::diff {
namespace {

// A ban's record is written at most once per grain while it is extended, so a ban
// ends at most a grain early (docs/ARCHITECTURE.md; bpf/bans.h's LV_BAN_GRAIN_NS).
constexpr uint64_t kBanGrainNs = 1'000'000;

// The length of the n-th ban in a row (docs/CONFIG.md, "Bans"): `ban` doubled for each
// earlier one, never over `max`.
uint64_t ban_length(uint64_t ban, uint64_t max, uint32_t offences) {
  uint64_t d = ban;
  for (uint32_t i = 1; i < offences && d < max; ++i) d = d > max / 2 ? max : d * 2;
  return std::min(d, max);
}

}  // namespace

// A source this CPU rejected, in the hot slot `slot`, whose limits allow rejecting on
// the clock alone: rejected again under the same reason while the time it looked at
// is ahead, up to LV_HOT_MAX_HITS times; with list entries for the family, only for
// the very address (lists judge addresses, keys are prefixes). 0: not rejected.
uint32_t Model::hot_rejects(const Packet& k, uint32_t slot) {
  auto it = hot_.find(slot);
  if (it == hot_.end()) return 0;
  Hot& h = it->second;
  if (!h.set || !h.fast || h.hits >= LV_HOT_MAX_HITS || h.key != k.kb) return 0;
  if (listed(k.p) && h.addr != k.p.addr) return 0;
  if (conforms(h.ready, k.t)) return 0;
  ++h.hits;
  return h.reason;
}

// An event about the packet's source as keyed (docs/CONFIG.md, events_per_second):
// sent within one rate all CPUs share (a GCRA on the packet's time), else counted as
// suppressed by this CPU, and the next one it sends says how many.
// `addr`: what it is about (a network's), else the source as keyed; a class's events
// (engaged, released) carry none: see event_of().
void Model::event(const Packet& k, uint8_t type, uint32_t reason, uint32_t count, uint64_t value, const uint8_t* addr) {
  const lv_limit& l = pol_.events;
  if (!l.cost) return;
  if (!conforms(events_ready_, k.t)) {
    ++suppressed_;
    ++feats_.suppressed;
    return;
  }
  events_ready_ = after(events_ready_, k.t, l.cost, l.tau_ns);
  lv_event e{};
  e.time_ns = k.t;
  std::memcpy(e.addr, addr ? addr : reinterpret_cast<const uint8_t*>(k.key.addr), sizeof e.addr);
  e.type = type;
  e.family = static_cast<uint8_t>(k.p.family);
  e.class_id = static_cast<uint16_t>(k.cid);
  e.reason = static_cast<uint8_t>(reason);
  e.count = count;
  e.suppressed = static_cast<uint32_t>(suppressed_);
  e.value = value;
  suppressed_ = 0;
  events_.push_back(e);
  ++feats_.events;
}

// One a second at most (`last`: when the class last sent it).
void Model::event_every(const Packet& k, uint64_t& last, uint8_t type, uint32_t reason) {
  if (last && static_cast<int64_t>(k.t - last) < static_cast<int64_t>(LV_NSEC_PER_SEC)) return;
  last = k.t;
  event(k, type, reason, 0, 0);
}

// A rejection on the full path: the source takes (or keeps) its hot slot, with the
// time the refusing level looks at and the reason its repeats get.
// Its drops are counted in its state (`st`, if it has one) once per LV_HOT_MAX_HITS,
// or when another source takes the slot (the drops still pending there are lost).
uint32_t Model::reject(const Packet& k, uint64_t ready, uint32_t reason, uint32_t hot_reason, LimState* st) {
  const uint32_t slot = lv_hot_slot(&k.key);
  hot_last_ = slot;
  Hot& h = hot_[slot];
  const bool fast = k.flags & LV_CLASS_FAST_REJECT;
  uint64_t n = 1;
  if (h.set && h.key == k.kb) {
    if (h.hits < LV_HOT_MAX_HITS) {
      ++h.hits;
      h.reason = hot_reason;
      h.fast = fast;
      h.addr = k.p.addr;
      h.ready = ready;
      return reason;
    }
    n += h.hits;
  }
  if (st) {
    // A source's first drop is an event (but for what a class or a network decided
    // as a whole: newcomer, escalated).
    if (st->dropped == 0 && reason != LV_R_NEWCOMER && reason != LV_R_ESCALATED) event(k, LV_EV_LIMITED, reason, 0, 0);
    st->dropped += n | (n * k.len) << 32;
  }
  h.set = true;
  h.key = k.kb;
  h.hits = 0;
  h.reason = hot_reason;
  h.fast = fast;
  h.addr = k.p.addr;
  h.ready = ready;
  return reason;
}

// The record of a ban in every class: the source masked to the prefix those classes
// share, in no class.
KeyBytes Model::ban_all_key(const Packet& k) const {
  return bytes_of(key_of(k.p, ban_all_->prefix4, ban_all_->prefix6, LV_ALL_CLASSES, 0, 0));
}

KeyBytes Model::ban_key(const Packet& k) const {
  return (k.cls.flags & LV_CLASS_BAN_ALL) && ban_all_ ? ban_all_key(k) : k.kb;
}

// Banned in every class by another class (its own class finds its ban through the
// source's limits).
uint32_t Model::banned_elsewhere(const Packet& k) {
  if (!ban_all_) return 0;
  auto it = bans_.find(ban_all_key(k));
  if (it == bans_.end()) return 0;
  const Ban& b = it->second;
  if (b.class_id == k.cid && b.epoch == k.cls.epoch) return 0;
  if (conforms(b.until, k.t)) return 0;
  ++feats_.elsewhere;
  return reject(k, b.until, LV_R_BAN, LV_R_BAN, nullptr);
}

// Keep a banned source failing its own limit (the packet limit, else the byte limit)
// until `until`: its ready time pushed there, never pulled back.
void Model::push(const Packet& k, LimState& st, uint64_t until) {
  uint64_t& ready = k.pkt->cost ? st.ready : st.ready_b;
  if (later(until, ready)) ready = until;
}

// A packet of a class with bans its source's limits refused (docs/CONFIG.md, "Bans"):
// while a ban runs, it is measured against the limits the source would have had
// (over them: the ban ends its length from now); else it is an offence that starts a
// ban, twice the last one's length if that ended within forget_after. The offending
// packet counts under its own reason, the banned ones under ban.
uint32_t Model::ban(const Packet& k, LimState& st, uint32_t r) {
  const lv_class& cls = k.cls;
  const KeyBytes bk = ban_key(k);
  auto it = bans_.find(bk);
  if (it != bans_.end() && !conforms(it->second.until, k.t)) return measure(k, st, it->second);
  uint32_t offences = 1;
  if (it != bans_.end()) {
    if (!it->second.ended) ++feats_.expiries;
    if (static_cast<int64_t>(k.t - it->second.until) < static_cast<int64_t>(cls.forget_ns))
      offences = it->second.offences + 1;
    else
      ++feats_.forgotten;
  }
  if (offences > 1) ++feats_.doubled;
  ++feats_.bans;
  const uint64_t d = ban_length(cls.ban_ns, cls.ban_max_ns, offences);
  if (offences > 1 && d == cls.ban_max_ns && d < ban_length(cls.ban_ns, UINT64_MAX, offences)) ++feats_.capped;
  Ban b;
  b.until = k.t + d;
  b.duration = d;
  b.shadow = st.ready;
  b.shadow_b = st.ready_b;
  b.offences = offences;
  b.class_id = k.cid;
  b.epoch = cls.epoch;
  bans_[bk] = b;
  push(k, st, b.until);
  event(k, LV_EV_BANNED, r, offences, d);
  return reject(k, k.t + kBanGrainNs, r, LV_R_BAN, &st);
}

uint32_t Model::measure(const Packet& k, LimState& st, Ban& b) {
  const lv_limit& p = *k.pkt;
  const lv_limit& bb = *k.bytes;
  if ((p.cost && !conforms(b.shadow, k.t)) || (bb.cost && !conforms(b.shadow_b, k.t))) {
    if (static_cast<int64_t>(k.t + b.duration - b.until) >= static_cast<int64_t>(kBanGrainNs)) {
      b.until = k.t + b.duration;
      push(k, st, b.until);
      ++feats_.extended;
    }
  } else {
    if (p.cost) b.shadow = after(b.shadow, k.t, p.cost, p.tau_ns);
    if (bb.cost) b.shadow_b = after(b.shadow_b, k.t, byte_cost(k.len, bb), bb.tau_ns);
  }
  return reject(k, b.until - b.duration + kBanGrainNs, LV_R_BAN, LV_R_BAN, &st);
}

}  // namespace levee::progtest::diff
