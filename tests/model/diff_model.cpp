// diff_model.cpp - the differential test's model: the packet path, the limits, bans, the
// hot sources and events (diff_model.hpp). It does not call the code under test: see
// tests/progtest/difftest_test.cpp's head comment for what it takes from where.
#include "diff_model.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace levee::progtest::diff {

void Feats::add(const Feats& o) {
  refills += o.refills;
  bans += o.bans;
  expiries += o.expiries;
  doubled += o.doubled;
  capped += o.capped;
  forgotten += o.forgotten;
  extended += o.extended;
  elsewhere += o.elsewhere;
  leases += o.leases;
  events += o.events;
  unverified += o.unverified;
  good += o.good;
  suppressed += o.suppressed;
  on_probation += o.on_probation;
  engaged += o.engaged;
  released += o.released;
  promoted += o.promoted;
  refused_new += o.refused_new;
  newcomers += o.newcomers;
  good_arrivals += o.good_arrivals;
  escalations += o.escalations;
  escalated += o.escalated;
  escalated_new += o.escalated_new;
  escalated_runup += o.escalated_runup;
  deescalated += o.deescalated;
  learnt += o.learnt;
}

Model::Model(const Policy& spec, const lv_policy& pol, const Clocks& clk, uint32_t seen_seed, unsigned cpus)
    : spec_(spec), pol_(pol), seed_(seen_seed) {
  for (const ClassSpec& c : spec.classes) ids_.push_back(id_named(c.name));
  for (const ClassSpec& c : spec.classes)
    if (c.ban.set() && c.ban.all_classes) ban_all_ = &c;
  for (const ListEntry& e : spec.lists) {
    if (e.expires_unix_ns && e.expires_unix_ns <= clk.now_unix_ns) continue;  // over before it began
    Listed l{e.cidr, e.kind, 0, e.expires_unix_ns ? clk.to_mono(e.expires_unix_ns) : 0};
    if (e.kind == LV_LIST_OVERRIDE)
      for (uint32_t o = 0; o < pol.nr_overrides; ++o)
        if (e.override_name == pol.overrides[o].name) l.override_id = o;
    lists_.push_back(l);
  }
  // when_full = "refuse": refused at max_sources - min(max_sources / 2, 256 x CPUs)
  // states created (docs/CONFIG.md, "when_full").
  if (spec.iface.refuse_full) {
    const uint64_t max = spec.iface.max_sources.value_or(LV_DEFAULT_MAX_SOURCES);
    full_at_ = max - std::min<uint64_t>(max / 2, 256ull * cpus);
  }
}

void Model::start(const lv_percpu& pc) {
  tick_ = pc.watch_tick;
  for (uint32_t c = 0; c < LV_MAX_CLASSES; ++c)
    pilot_[c] = Pilot{pc.pilot[c].escalated_until_ns, pc.pilot[c].engaged != 0};
  for (uint32_t i = 0; i < LV_WATCH_MEMOS; ++i) {
    std::memcpy(memo_[i].key.data(), &pc.watch_memo[i].key, sizeof(lv_key));
    memo_[i].look = pc.watch_memo[i].look_ns;
    memo_[i].pending = pc.watch_memo[i].pending;
  }
}

// The reason for one frame, and its counts; `t`: the program's clock for it, if it
// read one.
uint32_t Model::step(const std::vector<uint8_t>& frame, std::optional<uint64_t> t) {
  const model::Parsed p = model::parse_frame(frame);
  if (p.reason != LV_R_CONFORMING) return count(p.reason, LV_MAX_CLASSES, frame.size());
  if (!t) throw NoClock{};
  const size_t pos = classify(p);
  const uint32_t cid = ids_[pos];
  const ClassSpec& spec = spec_.classes[pos];
  const lv_class& cls = pol_.classes[cid];
  Packet k{p, cid, pos, cls, frame.size(), key_of(p, spec.prefix4, spec.prefix6, cid, 0, cls.epoch), {}, *t};
  k.kb = bytes_of(k.key);
  const uint32_t r = decide(k);
  // A class-wide condition is an event, once a second a class at most.
  if (r == LV_R_ADMISSION) event_every(k, admit_event_[cid], LV_EV_ADMISSION, r);
  if (r == LV_R_MAP_FULL) event_every(k, full_event_[cid], LV_EV_MAP_FULL, r);
  return count(mode(k, r), cid, frame.size());
}
// Is the frame a SYN into a class with SYN authentication (which the model leaves to
// syn_hostile_test.cpp: the test does not send it)?
bool Model::answered_syn(const std::vector<uint8_t>& frame) const {
  const model::Parsed p = model::parse_frame(frame);
  if (p.reason != LV_R_CONFORMING || p.kind != LV_L4_TCP_SYN) return false;
  const size_t pos = classify(p);
  const ClassSpec& spec = spec_.classes[pos];
  const uint32_t cid = ids_[pos];
  return spec.syn_auth_in_force() != SynAuth::Off &&
         !good_.contains(bytes_of(key_of(p, spec.prefix4, spec.prefix6, cid, 0, pol_.classes[cid].epoch)));
}
// A source marked known-good (KnownGood::mark(), as levee run marks one that
// behaved): its key as a source; it is known too (lv_seen).
void Model::mark_good(const lv_key& key) {
  good_.insert(bytes_of(key));
  seen_.insert(lv_seen_hash(&key, seed_));
}

uint32_t Model::id_named(const std::string& name) const {
  for (uint32_t id = 0; id < LV_MAX_CLASSES; ++id)
    if (name == pol_.classes[id].name) return id;
  throw std::runtime_error("no class id for " + name);
}

// First match wins, as docs/CONFIG.md says, from the classes as written: the protocol
// (any, if none is named), SYN (TCP with SYN and without ACK), destination or source
// ports (only a TCP or UDP packet that carries them: never a later fragment, ICMP or
// another protocol). The last class takes what no other does.
size_t Model::classify(const model::Parsed& p) const {
  const bool tcp = p.kind == LV_L4_TCP_SYN || p.kind == LV_L4_TCP || p.kind == LV_L4_TCP_FRAG;
  const bool udp = p.kind == LV_L4_UDP || p.kind == LV_L4_UDP_FRAG;
  const bool ported = p.kind == LV_L4_TCP_SYN || p.kind == LV_L4_TCP || p.kind == LV_L4_UDP;
  const Proto proto = tcp                     ? Proto::Tcp
                      : udp                   ? Proto::Udp
                      : p.kind == LV_L4_ICMP  ? Proto::Icmp
                      : p.kind == LV_L4_ICMP6 ? Proto::Icmp6
                                              : Proto::Other;
  auto in = [](const std::vector<PortRange>& rs, uint16_t port) {
    return std::any_of(rs.begin(), rs.end(), [&](const PortRange& r) { return port >= r.first && port <= r.last; });
  };
  for (size_t i = 0; i + 1 < spec_.classes.size(); ++i) {
    const Match& m = spec_.classes[i].match;
    if (!m.protos.empty() && std::find(m.protos.begin(), m.protos.end(), proto) == m.protos.end()) continue;
    if (m.syn && p.kind != LV_L4_TCP_SYN) continue;
    if ((m.syn || !m.ports.empty() || !m.sports.empty()) && !ported) continue;
    if (!m.ports.empty() && !in(m.ports, p.dport)) continue;
    if (!m.sports.empty() && !in(m.sports, p.sport)) continue;
    return i;
  }
  return spec_.classes.size() - 1;
}

// Does a network of `len` bits cover `a` (16 bytes, IPv4 mapped in the last 4)?
bool Model::covers(const Cidr& c, const model::Parsed& p) {
  const bool v4 = c.family == 4;
  if (v4 != (p.family == LV_AF_INET)) return false;
  const uint8_t* a = v4 ? &p.addr[12] : p.addr.data();
  for (unsigned i = 0; i < c.len; ++i)
    if (((c.addr[i / 8] ^ a[i / 8]) >> (7 - i % 8)) & 1) return false;
  return true;
}

// A source's key, written here from its definition (docs/ARCHITECTURE.md): the
// address's first `prefix` bits, the rest zero; IPv4 keeps its ::ffff: mapping.
lv_key Model::key_of(const model::Parsed& p, unsigned prefix4, unsigned prefix6, uint32_t cid, uint8_t flags,
                     uint8_t epoch) {
  std::array<uint8_t, 16> a = p.addr;
  const unsigned keep = p.family == LV_AF_INET ? 96 + prefix4 : prefix6;
  for (unsigned i = keep; i < 128; ++i) a[i / 8] &= static_cast<uint8_t>(~(0x80u >> (i % 8)));
  lv_key k{};
  std::memcpy(k.addr, a.data(), 16);
  k.class_id = static_cast<uint16_t>(cid);
  k.family = static_cast<uint8_t>(p.family | flags);
  k.epoch = epoch;
  return k;
}

// What the lists say of a source at the packet's time: of the entries that cover it
// and have not expired (an entry is over from its expiry on), the longest; at one
// length, allow over deny over override.
std::optional<Listed> Model::list_verdict(const model::Parsed& p, uint64_t t) const {
  std::optional<Listed> best;
  for (const Listed& l : lists_) {
    if (!covers(l.cidr, p)) continue;
    if (l.expires && conforms(l.expires, t)) continue;
    auto rank = [](const Listed& x) { return x.kind == LV_LIST_ALLOW ? 3 : x.kind == LV_LIST_DENY ? 2 : 1; };
    if (!best || l.cidr.len > best->cidr.len || (l.cidr.len == best->cidr.len && rank(l) > rank(*best))) best = l;
  }
  return best;
}

bool Model::listed(const model::Parsed& p) const {
  return p.family == LV_AF_INET ? (pol_.nr_list4 | pol_.nr_host4) != 0 : (pol_.nr_list6 | pol_.nr_host6) != 0;
}

// The pipeline (docs/ARCHITECTURE.md, "The packet path"): this CPU's last rejected
// source, the lists, a ban in every class, then the limits.
uint32_t Model::decide(Packet& k) {
  if (const uint32_t r = hot_rejects(k, hot_last_)) return r;
  k.pkt = &k.cls.pkt;
  k.bytes = &k.cls.bytes;
  k.flags = k.cls.flags;
  if (const std::optional<Listed> d = list_verdict(k.p, k.t)) {
    if (d->kind == LV_LIST_ALLOW) return LV_R_ALLOW;
    if (d->kind == LV_LIST_DENY) return LV_R_DENY;
    if (d->kind == LV_LIST_OVERRIDE && ((pol_.overrides[d->override_id].classes >> k.cid) & 1)) {
      const lv_override& o = pol_.overrides[d->override_id];
      k.pkt = &o.pkt;
      k.bytes = &o.bytes;
      k.flags = o.flags;
    }
  }
  if (const uint32_t r = banned_elsewhere(k)) return r;
  return limit(k);
}

// What a packet of `len` bytes costs a byte limit: its cost per byte (ns, in 1/2^16)
// times the length, rounded up (never looser).
uint64_t Model::byte_cost(uint64_t len, const lv_limit& b) {
  const unsigned __int128 ns = static_cast<unsigned __int128>(len) * b.cost;
  return static_cast<uint64_t>((ns + 65535) / 65536);
}

// A new state with this packet passed through `p` and `b`; under when_full =
// "refuse" every state made (sources and networks) is counted.
LimState& Model::create(const KeyBytes& key, const lv_limit& p, const lv_limit& b, const Packet& k, bool source) {
  LimState s;
  if (p.cost) s.ready = k.t - p.tau_ns + p.cost;
  if (b.cost) s.ready_b = after(0, k.t, byte_cost(k.len, b), b.tau_ns);
  s.born = k.t;
  if (source) {
    s.passed = 1 | k.len << 32;  // a network counts a packet once every level passed it
    // Its bit in lv_seen is its key's as a source; on probation, in the probation half.
    (key == k.kb ? seen_ : seen_prob_).insert(lv_seen_hash(&k.key, seed_));
  }
  ++created_;
  return state_[key] = s;
}

// A pair of limits, packets then bytes: both pass the packet or neither is charged.
uint32_t Model::take(LimState& s, const lv_limit& p, const lv_limit& b, const Packet& k, uint32_t over_p,
                     uint32_t over_b, uint64_t* hot_ready) {
  if (p.cost) {
    if (!conforms(s.ready, k.t)) {
      s.refused = true;
      *hot_ready = s.ready;
      return over_p;
    }
    s.ready = after(s.ready, k.t, p.cost, p.tau_ns);
  }
  if (b.cost) {
    if (!conforms(s.ready_b, k.t)) {
      if (p.cost) s.ready -= p.cost;
      s.refused = true;
      *hot_ready = s.ready_b;
      return over_b;
    }
    s.ready_b = after(s.ready_b, k.t, byte_cost(k.len, b), b.tau_ns);
  }
  if (s.refused) {
    ++feats_.refills;
    s.refused = false;
  }
  return LV_R_CONFORMING;
}
void Model::refund(LimState& s, const lv_limit& p, const lv_limit& b, uint64_t len) {
  if (p.cost) s.ready -= p.cost;
  if (b.cost) s.ready_b -= byte_cost(len, b);
}
// Is a pair over at t? *ready: the time the one over looks at.
bool Model::over(const LimState& s, const lv_limit& p, const lv_limit& b, uint64_t t, uint64_t* ready) {
  if (p.cost && !conforms(s.ready, t)) return *ready = s.ready, true;
  if (b.cost && !conforms(s.ready_b, t)) return *ready = s.ready_b, true;
  return false;
}

KeyBytes Model::net_key(const Packet& k) const {
  const NetworkLimit& n = spec_.classes[k.pos].network;
  return bytes_of(key_of(k.p, n.prefix4, n.prefix6, k.cid, LV_KEY_NETWORK, k.cls.epoch));
}

// The class total (docs/CONFIG.md, "total"): a shared GCRA this CPU draws from in
// leases of the packet's cost plus lease_ns, spending its credit packet by packet.
uint32_t Model::total_take(const Packet& k, uint64_t* hot_ready) {
  const lv_class& cls = k.cls;
  Lease& ls = lease_[k.cid];
  Shared& sh = shared_[k.cid];
  const uint64_t cp = cls.total_pkt.cost;
  uint64_t cb = 0;
  if (cp && ls.credit < cp) {
    if (!conforms(sh.total, k.t)) return *hot_ready = sh.total, LV_R_CLASS_LIMIT;
    sh.total = after(sh.total, k.t, cp + cls.lease_ns, cls.total_pkt.tau_ns);
    ls.credit += cp + cls.lease_ns;
    ++feats_.leases;
  }
  if (cls.total_bytes.cost) {
    cb = byte_cost(k.len, cls.total_bytes);
    if (ls.credit_b < cb) {
      if (!conforms(sh.total_b, k.t)) return *hot_ready = sh.total_b, LV_R_CLASS_LIMIT;
      sh.total_b = after(sh.total_b, k.t, cb + cls.lease_ns, cls.total_bytes.tau_ns);
      ls.credit_b += cb + cls.lease_ns;
      ++feats_.leases;
    }
  }
  ls.credit -= cp;
  ls.credit_b -= cb;
  return LV_R_CONFORMING;
}

// The levels above a source: its network (made with the packet passed when new),
// then the class total; the total refusing gives the network its charge back.
uint32_t Model::levels_take(const Packet& k, uint64_t* hot_ready) {
  const lv_class& cls = k.cls;
  LimState* net = nullptr;
  if (cls.flags & LV_CLASS_NETWORK) {
    const KeyBytes nk = net_key(k);
    auto it = state_.find(nk);
    if (it == state_.end()) {
      net = &create(nk, cls.net_pkt, cls.net_bytes, k, false);
    } else {
      net = &it->second;
      const uint32_t r = take(*net, cls.net_pkt, cls.net_bytes, k, LV_R_NETWORK, LV_R_NETWORK, hot_ready);
      if (r != LV_R_CONFORMING) return r;
    }
  }
  if (cls.flags & LV_CLASS_TOTAL) {
    const uint32_t r = total_take(k, hot_ready);
    if (r != LV_R_CONFORMING) {
      if (net) refund(*net, cls.net_pkt, cls.net_bytes, k.len);
      return r;
    }
  }
  if (net) net->passed += 1 | k.len << 32;
  return LV_R_CONFORMING;
}

// A packet its source's limits passed: the levels above (diff_autopilot.cpp,
// levels_above()), or refused there with the source's charge given back. `fresh`: the
// state was made with it (and counts it).
uint32_t Model::limit_above(const Packet& k, LimState& st, bool probation, bool fresh) {
  const uint64_t one = 1 | k.len << 32;
  uint64_t hot_ready = 0;
  const uint32_t r = levels_above(k, st.born, probation, &hot_ready);
  if (r == LV_R_CONFORMING) {
    if (!fresh) st.passed += one;
    return r;
  }
  refund(st, *k.pkt, *k.bytes, k.len);
  if (fresh) st.passed -= one;
  return reject(k, hot_ready, r, r, &st);
}

// A source without state as a source: refused as a new source, or one on probation, of
// an escalated network (but known-good); its state on probation, if it has one
// (promoted once the class is calm); else refused read-only by a network or a class
// total it would be over (the total only for want of packet credit), by a full map (when_full = "refuse"), by the
// admission budget or the autopilot; else its state (on probation, as the autopilot says), made with this packet passed
// through its own limits (`fresh`). kArrived, or the refusing reason.
uint32_t Model::new_source(Packet& k, LimState*& st, bool& probation, bool& fresh) {
  const lv_class& cls = k.cls;
  Shared& sh = shared_[k.cid];
  uint64_t ready = 0;
  if (guards_admission(k)) {  // a new source, or one on probation, of an escalated network
    KeyBytes wk;
    if (Watch* w = escalated_net(k, wk); w && !good_.contains(k.kb)) return watch_refuse(k, *w, wk);
  }
  if (auto_admits(k) && (seen_bits(k) & 2) && probation_find(k, st, probation)) return kArrived;
  if (cls.flags & LV_CLASS_NETWORK) {
    auto it = state_.find(net_key(k));
    if (it != state_.end() && over(it->second, cls.net_pkt, cls.net_bytes, k.t, &ready))
      return reject(k, ready, LV_R_NETWORK, LV_R_NETWORK, nullptr);
  }
  if ((cls.flags & LV_CLASS_TOTAL) && cls.total_pkt.cost && lease_[k.cid].credit < cls.total_pkt.cost &&
      !conforms(sh.total, k.t))
    return reject(k, sh.total, LV_R_CLASS_LIMIT, LV_R_CLASS_LIMIT, nullptr);
  if (full_at_ && created_ >= full_at_) return LV_R_MAP_FULL;
  bool charged = false;
  probation = false;
  if (auto_admits(k)) {
    const uint32_t r = guard_admit(k, charged, probation);
    pilot_[k.cid].engaged = sh.engaged != 0;
    if (r != LV_R_CONFORMING) return r;
  } else if (cls.flags & LV_CLASS_ADMIT) {
    if (!conforms(sh.admit, k.t)) return LV_R_ADMISSION;
    sh.admit = after(sh.admit, k.t, cls.admit.cost, cls.admit.tau_ns);
  }
  KeyBytes key = k.kb;
  if (probation) {
    key[offsetof(lv_key, family)] |= LV_KEY_PROBATION;
    ++sh.probation;
    ++feats_.on_probation;
  }
  if (cls.flags & (LV_CLASS_ADMIT | LV_CLASS_AUTO_ADMIT)) ++sh.admitted;
  st = &create(key, *k.pkt, *k.bytes, k, true);
  fresh = true;
  return kArrived;
}

uint32_t Model::limit(Packet& k) {
  const lv_class& cls = k.cls;
  if (!k.pkt->cost && !k.bytes->cost && !(cls.flags & (LV_CLASS_NETWORK | LV_CLASS_TOTAL | LV_CLASS_SYN_AUTH)))
    return LV_R_CONFORMING;
  // SYN authentication (docs/CONFIG.md, "syn_auth"), before any budget: the TCP of a
  // known-good source goes on to the limits (its ACKs' cookies are checked only in
  // proxy mode, which needs levee's tc program: not here); a packet that is not a SYN,
  // of any other source, goes on only with a connection the host has or a cookie
  // returned. The frames' destination has no connection and their numbers return no
  // cookie: it is dropped unverified. (Its TCP header is never deeper than SYN
  // authentication reads: the frames are short.) Such a source's SYNs are
  // syn_hostile_test.cpp's: none is sent.
  if ((cls.flags & LV_CLASS_SYN_AUTH) && k.p.kind == LV_L4_TCP && !good_.contains(k.kb)) {
    ++feats_.unverified;
    return LV_R_UNVERIFIED;
  }
  if ((cls.flags & LV_CLASS_SYN_AUTH) && (k.p.kind == LV_L4_TCP || k.p.kind == LV_L4_TCP_SYN)) ++feats_.good;
  // A never-seen source of an escalated network, before anything it could spend.
  if (const uint32_t r = refuse_escalated(k)) return r;
  // A budget spent refuses the sources the known-source filter has not seen; so does
  // an engaged autopilot whose threshold is spent.
  if ((cls.flags & LV_CLASS_ADMIT) && !conforms(shared_[k.cid].admit, k.t) && !(seen_bits(k) & 1))
    return refused_arrival(k, LV_R_ADMISSION);
  if (const uint32_t r = refuse_unseen(k)) return refused_arrival(k, r);
  if (const uint32_t r = hot_rejects(k, lv_hot_slot(&k.key))) return r;
  auto it = state_.find(k.kb);
  if (it != state_.end()) return limit_state(k, it->second, false);
  LimState* st = nullptr;
  bool probation = false, fresh = false;
  if (const uint32_t r = new_source(k, st, probation, fresh); r != kArrived) return refused_arrival(k, r);
  return fresh ? limit_above(k, *st, probation, true) : limit_state(k, *st, probation);
}

// A packet of a source with state (on probation or not): its own limits, then the
// levels above.
uint32_t Model::limit_state(Packet& k, LimState& st, bool probation) {
  const lv_class& cls = k.cls;
  // On the clock alone first, where the limits allow it and the class does not ban.
  if ((k.flags & LV_CLASS_FAST_REJECT) && !(cls.flags & LV_CLASS_BAN)) {
    if (k.pkt->cost && !conforms(st.ready, k.t)) {
      st.refused = true;
      return reject(k, st.ready, LV_R_RATE, LV_R_RATE, &st);
    }
    if (k.bytes->cost && !conforms(st.ready_b, k.t)) {
      st.refused = true;
      return reject(k, st.ready_b, LV_R_BYTES, LV_R_BYTES, &st);
    }
  }
  uint64_t hot_ready = 0;
  const uint32_t r = take(st, *k.pkt, *k.bytes, k, LV_R_RATE, LV_R_BYTES, &hot_ready);
  if (r == LV_R_CONFORMING) {
    if (cls.flags & LV_CLASS_BAN) {
      auto b = bans_.find(ban_key(k));
      if (b != bans_.end() && !b->second.ended && conforms(b->second.until, k.t)) {
        b->second.ended = true;
        ++feats_.expiries;
      }
    }
    return limit_above(k, st, probation, false);
  }
  if (cls.flags & LV_CLASS_BAN) return ban(k, st, r);
  return reject(k, hot_ready, r, r, &st);
}

uint32_t Model::mode(const Packet& k, uint32_t reason) {
  if (!(k.cls.flags & LV_CLASS_MONITOR)) return reason;
  const bool deny = reason == LV_R_DENY && !(pol_.flags & LV_POL_MONITOR_DENY);
  if (!((LV_MONITORABLE >> reason) & 1) && !deny) return reason;
  t_.would[reason].packets++;
  t_.would[reason].bytes += k.len;
  return LV_R_MONITORED;
}

uint32_t Model::count(uint32_t reason, uint32_t cid, uint64_t len) {
  t_.by_reason[reason].packets++;
  t_.by_reason[reason].bytes += len;
  if (cid < LV_MAX_CLASSES) {
    lv_counter& c = lv_reason_drops(reason) ? t_.by_class[cid].dropped : t_.by_class[cid].passed;
    c.packets++;
    c.bytes += len;
  }
  return reason;
}

}  // namespace levee::progtest::diff
