// diff_autopilot.cpp - the differential test's model of the autopilot (diff_model.hpp):
// admission of new sources (the threshold, probation, engaging, releasing, the
// newcomers' allowance, promotion) and the network watch (samples, escalation,
// enforcement, new sources of an escalated network, de-escalation), written from
// docs/CONFIG.md ("Autopilot: [auto], new_sources and escalate", "Escalation:
// networks") and docs/ARCHITECTURE.md (the autopilot's bullets). Where the docs are
// silent, bpf/arrival.h, watch.h, limit.h and shared/guard.h decided, and a comment
// says so ("docs silent:"); nothing here calls them.
#include <cstddef>

#include "diff_model.hpp"

namespace levee::progtest::diff {
namespace {

// docs/ARCHITECTURE.md: last_over_ns is written at most once a ms; abnormal arrivals
// more than 50 ms apart start a new run (docs/CONFIG.md); the baseline learns from
// periods of one second, ×16 fixed point, 1/64 of the way.
constexpr uint64_t kNoteNs = 1'000'000;
constexpr uint64_t kGapNs = 50'000'000;
constexpr uint64_t kPeriodNs = 1'000'000'000;
constexpr unsigned kFixedPoint = 4, kEwmaShift = 6;

bool calm_at(uint64_t last_over, uint64_t t, uint64_t release) {
  return !last_over || static_cast<int64_t>(t - last_over) >= static_cast<int64_t>(release);
}

}  // namespace

// ---- admission ----------------------------------------------------------------------

// The autopilot admits the class's new sources unless an operator's budget wins.
bool Model::auto_admits(const Packet& k) const {
  return (k.cls.flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ADMIT)) == LV_CLASS_AUTO_ADMIT;
}

// Escalation refuses an escalated network's new sources before admission, and samples
// the arrivals refused as new, only with the autopilot's admission (docs/CONFIG.md: an
// operator's budget admits exactly what it says).
bool Model::guards_admission(const Packet& k) const { return (k.cls.flags & LV_CLASS_ESCALATE) && auto_admits(k); }

// What lv_seen says of the packet's source: 1 known (state as a source, or known-good),
// 2 on probation.
uint32_t Model::seen_bits(const Packet& k) const {
  const uint32_t h = lv_seen_hash(&k.key, seed_);
  return (seen_.contains(h) ? 1u : 0u) | (seen_prob_.contains(h) ? 2u : 0u);
}

// The threshold, ns per arrival: max(floor, margin × baseline) as a rate, so the
// smaller cost of the floor's and the learnt one (none learnt yet: the floor's).
uint64_t Model::threshold_cost(const Packet& k) const {
  const uint64_t learnt = shared_[k.cid].threshold_cost, floor = k.cls.autop.floor_cost;
  return learnt && learnt < floor ? learnt : floor;
}

// Calm: `release` without an abnormal arrival (or none ever).
bool Model::calm(const Packet& k) const { return calm_at(shared_[k.cid].last_over, k.t, k.cls.autop.release_ns); }

// An abnormal moment (an arrival over the threshold, a refusal of the engaged class, a
// source on probation over the allowance): noted at most once a ms; a run of them,
// each within 50 ms of the last, lasting `sustain` engages the class (an event: the
// count of engagements so far, the threshold's rate).
void Model::note(const Packet& k) {
  Shared& g = shared_[k.cid];
  if (g.last_over && static_cast<int64_t>(k.t - g.last_over) < static_cast<int64_t>(kNoteNs)) return;
  const uint64_t since =
      g.last_over && static_cast<int64_t>(k.t - g.last_over) < static_cast<int64_t>(kGapNs) ? g.over_since : k.t;
  if (since == k.t) g.over_since = k.t;
  g.last_over = k.t;
  if (g.engaged || static_cast<int64_t>(k.t - since) < static_cast<int64_t>(k.cls.autop.sustain_ns)) return;
  g.engaged = k.t;
  ++g.engagements;
  ++feats_.engaged;
  const uint64_t cost = threshold_cost(k);
  // docs silent: the event's value is the threshold in arrivals per second, rounded
  // to nearest (guard.h lv_guard_rate()); its address is none.
  static const uint8_t none[16] = {};
  event(k, LV_EV_ENGAGED, LV_R_ADMISSION, static_cast<uint32_t>(g.engagements),
        cost ? (LV_NSEC_PER_SEC + cost / 2) / cost : 0, none);
}

// A normal arrival in a calm class releases it if it was engaged (an event: how long).
void Model::guard_release(const Packet& k) {
  Shared& g = shared_[k.cid];
  if (!g.engaged) return;
  static const uint8_t none[16] = {};
  event(k, LV_EV_RELEASED, LV_R_ADMISSION, 0, k.t - g.engaged, none);
  g.engaged = 0;
  ++feats_.released;
}

// ...and is counted. The first of each one-second period closes the last; one calm
// throughout (no abnormal arrival within `release` of its start: docs silent, guard.h
// judges calm at the period's start) moves the baseline 1/64 of the way to its rate.
// (A policy runs 100-250 ms: a period closes only when a slow machine stretches one.)
void Model::guard_count(const Packet& k) {
  Shared& g = shared_[k.cid];
  if (!g.period || static_cast<int64_t>(k.t - g.period) >= static_cast<int64_t>(kPeriodNs)) {
    const uint64_t p = g.period;
    g.period = k.t;
    if (p && calm_at(g.last_over, p, k.cls.autop.release_ns)) {
      const uint64_t elapsed = k.t - p;
      uint64_t n = g.arrivals - g.period_arrivals;
      if (n > (1ull << 30)) n = 1ull << 30;
      const uint64_t rate = (n << kFixedPoint) * LV_NSEC_PER_SEC / elapsed;
      g.baseline = g.baseline - (g.baseline >> kEwmaShift) + (rate >> kEwmaShift);
      const uint64_t r = (g.baseline * k.cls.autop.margin) >> kFixedPoint;
      g.threshold_cost = !r ? 0 : r >= LV_NSEC_PER_SEC ? 1 : LV_NSEC_PER_SEC / r;
      ++feats_.learnt;
    }
    g.period_arrivals = g.arrivals;
  }
  ++g.arrivals;
}

// An arrival in a class with the autopilot (docs/CONFIG.md's table): within the
// threshold (charged to it), its state, on probation unless the class is calm; over
// it, abnormal: refused if the class is engaged, else on probation. A known-good
// source is never on probation nor refused (over the threshold it is not charged).
uint32_t Model::guard_admit(const Packet& k, bool& charged, bool& probation) {
  Shared& g = shared_[k.cid];
  const bool was_calm = calm(k), good = good_.contains(k.kb);
  const uint64_t cost = threshold_cost(k);
  if (conforms(g.admit, k.t)) {
    g.admit = after(g.admit, k.t, cost, k.cls.autop.burst_ns);
    charged = true;
    if (was_calm) {
      guard_release(k);
      guard_count(k);
    } else {
      probation = !good;
    }
    return LV_R_CONFORMING;
  }
  charged = false;
  note(k);
  if (good) {
    if (g.engaged) {
      ++g.good_admitted;
      ++feats_.good_arrivals;
    }
    return LV_R_CONFORMING;
  }
  if (g.engaged) {
    ++feats_.refused_new;
    return LV_R_ADMISSION;
  }
  probation = true;
  return LV_R_CONFORMING;
}

// An engaged class whose threshold is spent refuses on lv_seen alone: a source never
// seen (admission), one that may be on probation while the allowance is spent
// (newcomer). This CPU learns the class engaged at an arrival (and forgets it here).
uint32_t Model::refuse_unseen(const Packet& k) {
  if (!auto_admits(k) || !pilot_[k.cid].engaged) return 0;
  Shared& g = shared_[k.cid];
  if (!g.engaged) {
    pilot_[k.cid].engaged = false;
    return 0;
  }
  if (conforms(g.admit, k.t)) return 0;
  const uint32_t seen = seen_bits(k);
  if (seen & 1) return 0;
  if (!seen) {
    note(k);
    ++feats_.refused_new;
    return LV_R_ADMISSION;
  }
  if (conforms(g.newcomer, k.t)) return 0;
  note(k);
  ++feats_.newcomers;
  return LV_R_NEWCOMER;
}

// While the class is engaged, sources on probation share one allowance: the threshold's
// rate in packets, its tolerance `burst`.
uint32_t Model::newcomer_take(const Packet& k) {
  Shared& g = shared_[k.cid];
  if (!g.engaged) return LV_R_CONFORMING;
  if (!conforms(g.newcomer, k.t)) {
    note(k);
    ++feats_.newcomers;
    return LV_R_NEWCOMER;
  }
  g.newcomer = after(g.newcomer, k.t, threshold_cost(k), k.cls.autop.burst_ns);
  return LV_R_CONFORMING;
}

// The source's state on probation, if it has one (nonzero): still on probation while
// the class is not calm; calm, promoted at this packet (its state as a source's).
uint32_t Model::probation_find(const Packet& k, LimState*& st, bool& probation) {
  KeyBytes pk = k.kb;
  pk[offsetof(lv_key, family)] |= LV_KEY_PROBATION;
  auto it = state_.find(pk);
  if (it == state_.end()) return 0;
  if (!calm(k)) {
    st = &it->second;
    probation = true;
    return 1;
  }
  LimState copy = it->second;
  state_.erase(it);
  st = &(state_[k.kb] = copy);
  seen_.insert(lv_seen_hash(&k.key, seed_));
  ++shared_[k.cid].promoted;
  ++feats_.promoted;
  probation = false;
  return 1;
}

// ---- the network watch ------------------------------------------------------------

// Is this packet the sample of the CPU's last 2^sample_shift watched packets? Counts
// it. The docs say "one passed packet in 32 of a class"; they are silent on what
// limit.h does: one tick for the CPU across its watched classes, counted for every
// packet its source's own limits passed, before the levels above (one they refuse
// spends a tick and is no sample) and for known-good sources (counted, never sampled),
// and for arrivals refused as new.
bool Model::sampled(const Packet& k) {
  ++tick_;
  return !(tick_ & ((1ull << (k.cls.autop.sample_shift & 15)) - 1));
}

KeyBytes Model::watch_key(const Packet& k) const {
  return bytes_of(key_of(k.p, k.cls.autop.watch_prefix4, k.cls.autop.watch_prefix6, k.cid, LV_KEY_WATCH, k.cls.epoch));
}

// Escalated, until `release` passes without a refused packet.
bool Model::escalated(const Watch& w, const Packet& k) const {
  return w.escalated && !calm_at(w.last_over, k.t, k.cls.autop.release_ns);
}

// A refused packet of an escalated network (or its escalation), noted at most once a
// ms: the class checks its packets against their networks `release` longer.
void Model::watch_over(const Packet& k, Watch& w) {
  if (static_cast<int64_t>(k.t - w.last_over) < static_cast<int64_t>(kNoteNs)) return;
  w.last_over = k.t;
  const uint64_t end = k.t + k.cls.autop.release_ns;
  if (later(end, shared_[k.cid].escalated_until)) shared_[k.cid].escalated_until = end;
}

void Model::escalate(const Packet& k, Watch& w, const KeyBytes& wk) {
  w.escalated = k.t;
  w.last_over = 0;
  watch_over(k, w);
  ++shared_[k.cid].escalations;
  ++feats_.escalations;
  event(k, LV_EV_ESCALATED, LV_R_ESCALATED, 0, k.cls.autop.watch.rate, wk.data());
}

void Model::deescalate(const Packet& k, Watch& w, const KeyBytes& wk) {
  if (!w.escalated) return;
  event(k, LV_EV_DEESCALATED, LV_R_ESCALATED, 0, k.t - w.escalated, wk.data());
  w.escalated = 0;
  ++feats_.deescalated;
}

// This CPU's memo of networks refused as escalated: four entries, by a fold of the
// network's address words (docs: "four entries"; the fold is watch.h's, the one thing
// shared, as the hot slots' hash).
Memo& Model::memo_of(const KeyBytes& wk) {
  uint32_t a[4];
  std::memcpy(a, wk.data(), sizeof a);
  uint32_t x = a[0] ^ a[1] ^ a[2] ^ a[3];
  x ^= x >> 16;
  x ^= x >> 8;
  return memo_[x & (LV_WATCH_MEMOS - 1)];
}

// The packet's network if it is escalated now (some network of the class may be:
// lv_shared.escalated_until_ns), else nullptr.
Watch* Model::escalated_net(const Packet& k, KeyBytes& wk) {
  if (conforms(shared_[k.cid].escalated_until, k.t)) return nullptr;
  wk = watch_key(k);
  auto it = watch_.find(wk);
  return it != watch_.end() && escalated(it->second, k) ? &it->second : nullptr;
}

// A new source of the escalated network refused: the network stays escalated, this CPU
// learns of it, and the drop (with what the memo refused since) is the network's.
uint32_t Model::watch_refuse(const Packet& k, Watch& w, const KeyBytes& wk) {
  watch_over(k, w);
  pilot_[k.cid].until = shared_[k.cid].escalated_until;
  Memo& m = memo_of(wk);
  w.dropped += (1 | k.len << 32) + (m.key == wk ? m.pending : 0);
  m.key = wk;
  m.pending = 0;
  m.look = k.t + kNoteNs;
  ++feats_.escalated_new;
  return LV_R_ESCALATED;
}

// A source lv_seen does not know (new, or on probation), of a network this CPU knows
// escalated: refused before admission, by the memo for a ms after a look at the
// network's state.
uint32_t Model::refuse_escalated(const Packet& k) {
  if (!guards_admission(k) || conforms(pilot_[k.cid].until, k.t) || (seen_bits(k) & 1)) return 0;
  const KeyBytes wk = watch_key(k);
  Memo& m = memo_of(wk);
  if (!conforms(m.look, k.t) && m.key == wk) {
    m.pending += 1 | k.len << 32;
    ++feats_.escalated_new;
    return LV_R_ESCALATED;
  }
  KeyBytes found;
  Watch* w = escalated_net(k, found);
  return w ? watch_refuse(k, *w, found) : 0;
}

// An arrival refused as new, sampled: charged 2^sample_shift times to its network if
// that is watched already (never creating one) and not escalated.
void Model::watch_refused(const Packet& k) {
  const KeyBytes wk = watch_key(k);
  auto it = watch_.find(wk);
  if (it == watch_.end() || escalated(it->second, k)) return;
  Watch& w = it->second;
  deescalate(k, w, wk);
  const lv_limit& l = k.cls.autop.watch;
  if (static_cast<int64_t>(k.t - l.tau_ns - w.ready) >= 0) w.runup = k.t;  // its limit unused
  if (conforms(w.ready, k.t))
    w.ready = after(w.ready, k.t, l.cost << (k.cls.autop.sample_shift & 15), l.tau_ns);
  else
    escalate(k, w, wk);
}

uint32_t Model::refused_arrival(const Packet& k, uint32_t r) {
  if ((r == LV_R_ADMISSION || r == LV_R_NEWCOMER) && guards_admission(k) && sampled(k)) {
    watch_refused(k);
    pilot_[k.cid].until = shared_[k.cid].escalated_until;
  }
  return r;
}

// The watch of a packet every other level passed: an escalated network's packets are
// charged once each (refused over its limit); a sample is charged 2^sample_shift
// times (a network's first sample makes its state, charged nothing), and over the
// limit escalates it; a calm escalated network is de-escalated at its next sample.
uint32_t Model::watch(const Packet& k, uint64_t born, bool sample, uint64_t* hot_ready) {
  const KeyBytes wk = watch_key(k);
  const lv_limit& l = k.cls.autop.watch;
  auto it = watch_.find(wk);
  if (it != watch_.end() && escalated(it->second, k)) {
    Watch& w = it->second;
    // A source that got state since the sample before its network's run-up, or up to
    // a second before it, is refused as the network's new sources are, unless it is
    // known-good or SYN authentication judges it (TCP of a class with syn_auth).
    const bool tcp = k.p.kind == LV_L4_TCP_SYN || k.p.kind == LV_L4_TCP;
    if (guards_admission(k) && static_cast<int64_t>(born + 1'000'000'000ull - w.runup) >= 0 &&
        !(tcp && (k.cls.flags & (LV_CLASS_SYN_AUTH | LV_CLASS_SYN_AUTO))) && !good_.contains(k.kb)) {
      watch_over(k, w);
      w.dropped += 1 | k.len << 32;
      ++feats_.escalated_runup;
      return LV_R_ESCALATED;
    }
    if (conforms(w.ready, k.t)) {
      w.ready = after(w.ready, k.t, l.cost, l.tau_ns);
      return LV_R_CONFORMING;
    }
    watch_over(k, w);
    w.dropped += 1 | k.len << 32;
    *hot_ready = w.ready;
    ++feats_.escalated;
    return LV_R_ESCALATED;
  }
  if (!sample) return LV_R_CONFORMING;
  if (it == watch_.end()) {
    watch_[wk] = Watch{};
    ++created_;
    return LV_R_CONFORMING;
  }
  Watch& w = it->second;
  deescalate(k, w, wk);
  if (static_cast<int64_t>(k.t - l.tau_ns - w.ready) >= 0) w.runup = k.t;  // its limit unused
  if (conforms(w.ready, k.t))
    w.ready = after(w.ready, k.t, l.cost << (k.cls.autop.sample_shift & 15), l.tau_ns);
  else
    escalate(k, w, wk);
  return LV_R_CONFORMING;
}

// Give back what the levels charged: the allowance of sources on probation, the
// network, the class total.
void Model::levels_refund(const Packet& k, bool probation) {
  const lv_class& cls = k.cls;
  if (probation && shared_[k.cid].engaged) shared_[k.cid].newcomer -= threshold_cost(k);
  if (cls.flags & LV_CLASS_NETWORK) {
    auto it = state_.find(net_key(k));
    if (it != state_.end()) refund(it->second, cls.net_pkt, cls.net_bytes, k.len);
  }
  if (cls.flags & LV_CLASS_TOTAL) {
    lease_[k.cid].credit += cls.total_pkt.cost;
    if (cls.total_bytes.cost) lease_[k.cid].credit_b += byte_cost(k.len, cls.total_bytes);
  }
}

// The levels above a source whose own limits passed the packet: the allowance of
// sources on probation, its network, the class total, then the watch (a sample, or
// any packet while this CPU knows a network of the class escalated). A known-good
// source's packet is never a sample, but counts in the tick (docs silent: limit.h).
uint32_t Model::levels_above(const Packet& k, uint64_t born, bool probation, uint64_t* hot_ready) {
  const bool levels = probation || (k.cls.flags & (LV_CLASS_NETWORK | LV_CLASS_TOTAL));
  bool sample = false, watching = false;
  if (k.cls.flags & LV_CLASS_ESCALATE) {
    sample = sampled(k) && !good_.contains(k.kb);
    watching = sample || !conforms(pilot_[k.cid].until, k.t);
  }
  if (!levels && !watching) return LV_R_CONFORMING;
  if (levels) {
    if (probation) {
      if (const uint32_t r = newcomer_take(k)) {
        *hot_ready = shared_[k.cid].newcomer;
        return r;
      }
    }
    if (const uint32_t r = levels_take(k, hot_ready)) {
      if (probation && shared_[k.cid].engaged) shared_[k.cid].newcomer -= threshold_cost(k);
      return r;
    }
  }
  if (!watching) return LV_R_CONFORMING;
  const uint32_t r = watch(k, born, sample, hot_ready);
  if (r != LV_R_CONFORMING && levels) levels_refund(k, probation);
  if (sample) pilot_[k.cid].until = shared_[k.cid].escalated_until;
  return r;
}

}  // namespace levee::progtest::diff
