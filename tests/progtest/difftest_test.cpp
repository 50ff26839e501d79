// difftest_test.cpp - the differential test of the datapath: random policies, compiled
// and written by the controller's own path, and random frames through the real XDP
// program (BPF_PROG_TEST_RUN), each frame's verdict and reason, and at the end of each
// policy the per-class and would-drop counters, every state (its ready times and its
// display counts), ban record, hot slot, shared budget and lease the program keeps, and
// every event it sent, compared with a userspace model.
//
// The model does not call the code under test. It parses with the reference parser
// (tests/model/parse_model.hpp, written apart from bpf/parse.h); it classifies by first
// match from the classes as the policy writes them (not the compiled table), masks a
// source into its key, costs a packet's bytes, runs the GCRA and lengthens bans from
// their definitions in docs/, not through rules.h or limiter.h, and decides the lists
// from the entries as written (the longest prefix in force; expiring deny entries stop
// matching on the program's clock). It takes from compile() only what it wrote: each
// limit's cost and tolerance (ns), the class ids, a class total's lease. The levels,
// the order of the checks, the hot sources (bpf/shared/percpu.h: their slot hash, like
// lv_seen's, is the one thing it shares), monitor mode, bans and events are written
// here from docs/ARCHITECTURE.md and docs/CONFIG.md.
//
// Time: the program reads the kernel's clock, which a test cannot set, but it can read
// what the program read. The test runs on one CPU and keeps that CPU "quiet" (fewer
// than LV_CLOCK_BUSY_PKTS packets in a jiffy: lv_percpu.clock.busy is cleared before
// it gets there), so the program reads the fine clock once for every packet and leaves
// the reading in lv_percpu.clock.ns; the test checks that it lies within the run
// (CLOCK_MONOTONIC before and after) and gives it to the model, which decides every
// frame at that instant: nothing is undecidable. (A packet decided on a cached reading
// fails the test: its reading is not within its run.) Rates are tens to thousands of
// packets a second and the frames of a policy (2,400 by default) run over 100-200 ms,
// with sleeps of a few ms (and rarely tens) between some, so buckets refill; a few
// busy senders change every few hundred frames; bans are mostly 5-40 ms, so within a
// policy they end, are extended, double within forget_after (1-20 ms, or an hour), are
// held at ban_max and start over.
//
// Modelled besides the source's limits: the admission budget (new_sources), networks,
// class totals (this CPU's lease of the shared GCRA), when_full = "refuse" (a small
// max_sources), bans per class and in every class, the hot sources, overrides, allow
// and deny lists, monitor mode, events (a source's first drop, a ban, a spent budget, a
// full map; the event rate and the counts of those over it), and SYN authentication's
// gate: a few sources of the class marked known-good (KnownGood::mark(), as levee run
// marks those that behaved) go on to the limits, SYNs and all; any other's TCP that is
// not a SYN is dropped unverified (no connection is the host's, no cookie returned).
// Not modelled (not generated): the autopilot (time-driven: autopilot_test.cpp covers
// it; a budget, new_sources, still wins over it), the SYNs of sources not known-good
// into a class with SYN authentication (answered with cookies: syn_hostile_test.cpp;
// the test draws another frame instead), proxy mode (it needs levee's tc program),
// CrowdSec, more than one CPU (concurrency_test.cpp).
//
// LEVEE_DIFF_SEED (default 1), LEVEE_DIFF_POLICIES (default 500), LEVEE_DIFF_FRAMES
// (default 1,200,000, shared out over the policies); LEVEE_DIFF_FROM=N starts at policy
// N: each policy and its frames are drawn from the seed and its number alone, so policy
// N of the default run runs alone with LEVEE_DIFF_FROM=N LEVEE_DIFF_POLICIES=1
// LEVEE_DIFF_FRAMES=2400 (its timing is the machine's: a boundary may fall elsewhere);
// LEVEE_DIFF_SAY=1 prints why validate() refused a policy. Floors (over the default
// run): every reason the generator aims at decides at least 1 frame in 1,000; limits
// refill; bans end, double, are held at ban_max, start over, are extended and drop in
// other classes; class totals lease; events are sent and suppressed; each some times
// (the figures the run prints).
#include <bpf/libbpf.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "datapath/known_good.hpp"
#include "frames.hpp"
#include "packet.hpp"
#include "parse_model.hpp"

namespace levee::progtest {
namespace {

uint64_t env_or(const char* name, uint64_t def) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : def;
}

std::string hex(const Bytes& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}

// ---- the model ------------------------------------------------------------------

using KeyBytes = std::array<uint8_t, sizeof(lv_key)>;
KeyBytes bytes_of(const lv_key& k) {
  KeyBytes b{};
  std::memcpy(b.data(), &k, sizeof k);
  return b;
}

// The program read no fine clock for a frame the model says needs one.
struct NoClock {};

// The GCRA, written here from its definition (docs/ARCHITECTURE.md, "The limiter"): the
// state is the earliest time the next packet conforms; a packet at t conforms when
// t >= ready, and passing it makes ready' = max(ready + cost, t - tau + cost). Times
// are CLOCK_MONOTONIC ns, compared as signed differences.
bool conforms(uint64_t ready, uint64_t t) { return static_cast<int64_t>(t - ready) >= 0; }
uint64_t after(uint64_t ready, uint64_t t, uint64_t cost, uint64_t tau) {
  const uint64_t queued = ready + cost, full = t - tau + cost;
  return static_cast<int64_t>(queued - full) > 0 ? queued : full;
}
bool later(uint64_t a, uint64_t b) { return static_cast<int64_t>(a - b) > 0; }

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

// One lv_state entry (a source's or a network's): the ready times of its packet and
// byte limits (0 where the limit has no cost, as the datapath leaves them).
struct LimState {
  uint64_t ready = 0, ready_b = 0;
  uint64_t passed = 0, dropped = 0;  // display counts: packets in the low 32 bits, bytes in the high
  bool refused = false;              // refused since its last pass: the next pass is a refill
};

// One slot of this CPU's hot sources (lv_hotset): the source it last rejected there.
struct Hot {
  bool set = false;  // written under this policy
  KeyBytes key{};
  std::array<uint8_t, 16> addr{};
  uint32_t hits = 0, reason = 0;
  bool fast = false;
  uint64_t ready = 0;
};

// A ban record (lv_bans), per source and class, or in every class.
struct Ban {
  uint64_t until = 0, duration = 0, shadow = 0, shadow_b = 0;
  uint32_t offences = 0, class_id = 0;
  uint8_t epoch = 0;
  bool ended = false;  // the model saw a packet of the source after it ended
};

// What the classes share: the admission budget and the class total's GCRAs; and this
// CPU's lease of the class total.
struct Shared {
  uint64_t admit = 0, total = 0, total_b = 0;
};
struct Lease {
  uint64_t credit = 0, credit_b = 0;
};

// A list entry as the operator wrote it, its expiry on the datapath's clock (0: never).
struct Listed {
  Cidr cidr;
  lv_list_kind kind = LV_LIST_DENY;
  uint32_t override_id = 0;
  uint64_t expires = 0;
};

struct Totals {
  Counters by_reason{};
  Counters would{};
  Datapath::ClassCounters by_class{};
};

// What the generator is for, counted by the model (floors in the test).
struct Feats {
  uint64_t refills = 0;     // a limit passed a packet after refusing one
  uint64_t bans = 0;        // bans started
  uint64_t expiries = 0;    // a banned source's packet decided after its ban ended
  uint64_t doubled = 0;     // a ban started within forget_after of the last: longer
  uint64_t capped = 0;      // ... and held at ban_max
  uint64_t forgotten = 0;   // ... after a quiet forget_after: back to `ban`
  uint64_t extended = 0;    // a banned source over its limits again: the ban moved on
  uint64_t elsewhere = 0;   // dropped for a ban another class imposed in every class
  uint64_t leases = 0;      // class total leases taken
  uint64_t events = 0;      // events sent
  uint64_t unverified = 0;  // TCP of an unproven source in a class with syn_auth
  uint64_t good = 0;        // ... of a known-good one, SYNs too: on to the limits
  uint64_t suppressed = 0;  // ... and over the event rate
  void add(const Feats& o) {
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
  }
};

class Model {
 public:
  Model(const Policy& spec, const lv_policy& pol, const Clocks& clk, uint32_t seen_seed, unsigned cpus)
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

  // The reason for one frame, and its counts; `t`: the program's clock for it, if it
  // read one.
  uint32_t step(const Bytes& frame, std::optional<uint64_t> t) {
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
  bool answered_syn(const Bytes& frame) const {
    const model::Parsed p = model::parse_frame(frame);
    if (p.reason != LV_R_CONFORMING || p.kind != LV_L4_TCP_SYN) return false;
    const size_t pos = classify(p);
    const ClassSpec& spec = spec_.classes[pos];
    const uint32_t cid = ids_[pos];
    return spec.syn_auth != SynAuth::Off &&
           !good_.contains(bytes_of(key_of(p, spec.prefix4, spec.prefix6, cid, 0, pol_.classes[cid].epoch)));
  }
  // A source marked known-good (KnownGood::mark(), as levee run marks one that
  // behaved): its key as a source; it is known too (lv_seen).
  void mark_good(const lv_key& key) {
    good_.insert(bytes_of(key));
    seen_.insert(lv_seen_hash(&key, seed_));
  }
  const Totals& totals() const { return t_; }
  const Feats& feats() const { return feats_; }
  const std::map<KeyBytes, LimState>& states() const { return state_; }
  const std::map<KeyBytes, Ban>& bans() const { return bans_; }
  const Lease& lease(uint32_t cid) const { return lease_[cid]; }
  const Shared& shared(uint32_t cid) const { return shared_[cid]; }
  const std::map<uint32_t, Hot>& hot() const { return hot_; }
  const std::vector<lv_event>& events() const { return events_; }
  uint64_t events_ready() const { return events_ready_; }
  uint64_t suppressed() const { return suppressed_; }
  uint64_t admit_event(uint32_t cid) const { return admit_event_[cid]; }
  uint64_t full_event(uint32_t cid) const { return full_event_[cid]; }
  uint32_t hot_last() const { return hot_last_; }

 private:
  struct Packet {
    model::Parsed p;
    uint32_t cid;
    size_t pos;  // in spec_.classes
    const lv_class& cls;
    uint64_t len;
    lv_key key;
    KeyBytes kb;
    uint64_t t;  // the program's clock for this packet
    const lv_limit* pkt = nullptr;
    const lv_limit* bytes = nullptr;
    uint32_t flags = 0;
  };

  uint32_t id_named(const std::string& name) const {
    for (uint32_t id = 0; id < LV_MAX_CLASSES; ++id)
      if (name == pol_.classes[id].name) return id;
    throw std::runtime_error("no class id for " + name);
  }

  // First match wins, as docs/CONFIG.md says, from the classes as written: the protocol
  // (any, if none is named), SYN (TCP with SYN and without ACK), destination or source
  // ports (only a TCP or UDP packet that carries them: never a later fragment, ICMP or
  // another protocol). The last class takes what no other does.
  size_t classify(const model::Parsed& p) const {
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
  static bool covers(const Cidr& c, const model::Parsed& p) {
    const bool v4 = c.family == 4;
    if (v4 != (p.family == LV_AF_INET)) return false;
    const uint8_t* a = v4 ? &p.addr[12] : p.addr.data();
    for (unsigned i = 0; i < c.len; ++i)
      if (((c.addr[i / 8] ^ a[i / 8]) >> (7 - i % 8)) & 1) return false;
    return true;
  }

  // A source's key, written here from its definition (docs/ARCHITECTURE.md): the
  // address's first `prefix` bits, the rest zero; IPv4 keeps its ::ffff: mapping.
  static lv_key key_of(const model::Parsed& p, unsigned prefix4, unsigned prefix6, uint32_t cid, uint8_t flags,
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
  std::optional<Listed> list_verdict(const model::Parsed& p, uint64_t t) const {
    std::optional<Listed> best;
    for (const Listed& l : lists_) {
      if (!covers(l.cidr, p)) continue;
      if (l.expires && conforms(l.expires, t)) continue;
      auto rank = [](const Listed& x) { return x.kind == LV_LIST_ALLOW ? 3 : x.kind == LV_LIST_DENY ? 2 : 1; };
      if (!best || l.cidr.len > best->cidr.len || (l.cidr.len == best->cidr.len && rank(l) > rank(*best))) best = l;
    }
    return best;
  }

  bool listed(const model::Parsed& p) const {
    return p.family == LV_AF_INET ? (pol_.nr_list4 | pol_.nr_host4) != 0 : (pol_.nr_list6 | pol_.nr_host6) != 0;
  }

  // The pipeline (docs/ARCHITECTURE.md, "The packet path"): this CPU's last rejected
  // source, the lists, a ban in every class, then the limits.
  uint32_t decide(Packet& k) {
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

  // A source this CPU rejected, in the hot slot `slot`, whose limits allow rejecting on
  // the clock alone: rejected again under the same reason while the time it looked at
  // is ahead, up to LV_HOT_MAX_HITS times; with list entries for the family, only for
  // the very address (lists judge addresses, keys are prefixes). 0: not rejected.
  uint32_t hot_rejects(const Packet& k, uint32_t slot) {
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
  void event(const Packet& k, uint8_t type, uint32_t reason, uint32_t count, uint64_t value) {
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
    std::memcpy(e.addr, k.key.addr, sizeof e.addr);
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
  void event_every(const Packet& k, uint64_t& last, uint8_t type, uint32_t reason) {
    if (last && static_cast<int64_t>(k.t - last) < static_cast<int64_t>(LV_NSEC_PER_SEC)) return;
    last = k.t;
    event(k, type, reason, 0, 0);
  }

  // A rejection on the full path: the source takes (or keeps) its hot slot, with the
  // time the refusing level looks at and the reason its repeats get.
  // Its drops are counted in its state (`st`, if it has one) once per LV_HOT_MAX_HITS,
  // or when another source takes the slot (the drops still pending there are lost).
  uint32_t reject(const Packet& k, uint64_t ready, uint32_t reason, uint32_t hot_reason, LimState* st) {
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
      if (st->dropped == 0 && reason != LV_R_NEWCOMER && reason != LV_R_ESCALATED)
        event(k, LV_EV_LIMITED, reason, 0, 0);
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
  KeyBytes ban_all_key(const Packet& k) const {
    return bytes_of(key_of(k.p, ban_all_->prefix4, ban_all_->prefix6, LV_ALL_CLASSES, 0, 0));
  }
  KeyBytes ban_key(const Packet& k) const {
    return (k.cls.flags & LV_CLASS_BAN_ALL) && ban_all_ ? ban_all_key(k) : k.kb;
  }

  // Banned in every class by another class (its own class finds its ban through the
  // source's limits).
  uint32_t banned_elsewhere(const Packet& k) {
    if (!ban_all_) return 0;
    auto it = bans_.find(ban_all_key(k));
    if (it == bans_.end()) return 0;
    const Ban& b = it->second;
    if (b.class_id == k.cid && b.epoch == k.cls.epoch) return 0;
    if (conforms(b.until, k.t)) return 0;
    ++feats_.elsewhere;
    return reject(k, b.until, LV_R_BAN, LV_R_BAN, nullptr);
  }

  // What a packet of `len` bytes costs a byte limit: its cost per byte (ns, in 1/2^16)
  // times the length, rounded up (never looser).
  static uint64_t byte_cost(uint64_t len, const lv_limit& b) {
    const unsigned __int128 ns = static_cast<unsigned __int128>(len) * b.cost;
    return static_cast<uint64_t>((ns + 65535) / 65536);
  }

  // A new state with this packet passed through `p` and `b`; under when_full =
  // "refuse" every state made (sources and networks) is counted.
  LimState& create(const KeyBytes& key, const lv_limit& p, const lv_limit& b, const Packet& k, bool source) {
    LimState s;
    if (p.cost) s.ready = k.t - p.tau_ns + p.cost;
    if (b.cost) s.ready_b = after(0, k.t, byte_cost(k.len, b), b.tau_ns);
    if (source) {
      s.passed = 1 | k.len << 32;  // a network counts a packet once every level passed it
      seen_.insert(lv_seen_hash(&k.key, seed_));
    }
    ++created_;
    return state_[key] = s;
  }

  // A pair of limits, packets then bytes: both pass the packet or neither is charged.
  uint32_t take(LimState& s, const lv_limit& p, const lv_limit& b, const Packet& k, uint32_t over_p, uint32_t over_b,
                uint64_t* hot_ready) {
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
  static void refund(LimState& s, const lv_limit& p, const lv_limit& b, uint64_t len) {
    if (p.cost) s.ready -= p.cost;
    if (b.cost) s.ready_b -= byte_cost(len, b);
  }
  // Is a pair over at t? *ready: the time the one over looks at.
  static bool over(const LimState& s, const lv_limit& p, const lv_limit& b, uint64_t t, uint64_t* ready) {
    if (p.cost && !conforms(s.ready, t)) return *ready = s.ready, true;
    if (b.cost && !conforms(s.ready_b, t)) return *ready = s.ready_b, true;
    return false;
  }

  KeyBytes net_key(const Packet& k) const {
    const NetworkLimit& n = spec_.classes[k.pos].network;
    return bytes_of(key_of(k.p, n.prefix4, n.prefix6, k.cid, LV_KEY_NETWORK, k.cls.epoch));
  }

  // The class total (docs/CONFIG.md, "total"): a shared GCRA this CPU draws from in
  // leases of the packet's cost plus lease_ns, spending its credit packet by packet.
  uint32_t total_take(const Packet& k, uint64_t* hot_ready) {
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
  uint32_t levels_take(const Packet& k, uint64_t* hot_ready) {
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

  // A packet its source's limits passed: the levels above, or refused there with the
  // source's charge given back. `fresh`: the state was made with it (and counts it).
  uint32_t limit_above(const Packet& k, LimState& st, bool fresh) {
    const uint64_t one = 1 | k.len << 32;
    uint64_t hot_ready = 0;
    const uint32_t r = k.cls.flags & (LV_CLASS_NETWORK | LV_CLASS_TOTAL) ? levels_take(k, &hot_ready) : LV_R_CONFORMING;
    if (r == LV_R_CONFORMING) {
      if (!fresh) st.passed += one;
      return r;
    }
    refund(st, *k.pkt, *k.bytes, k.len);
    if (fresh) st.passed -= one;
    return reject(k, hot_ready, r, r, &st);
  }

  // A source without state: refused read-only by a network or a class total it would
  // be over (the total only for want of packet credit), by a full map (when_full =
  // "refuse"), by the admission budget; else its state, made with this packet passed
  // through its own limits, and the levels above charged after.
  uint32_t new_source(Packet& k) {
    const lv_class& cls = k.cls;
    Shared& sh = shared_[k.cid];
    uint64_t ready = 0;
    if (cls.flags & LV_CLASS_NETWORK) {
      auto it = state_.find(net_key(k));
      if (it != state_.end() && over(it->second, cls.net_pkt, cls.net_bytes, k.t, &ready))
        return reject(k, ready, LV_R_NETWORK, LV_R_NETWORK, nullptr);
    }
    if ((cls.flags & LV_CLASS_TOTAL) && cls.total_pkt.cost && lease_[k.cid].credit < cls.total_pkt.cost &&
        !conforms(sh.total, k.t))
      return reject(k, sh.total, LV_R_CLASS_LIMIT, LV_R_CLASS_LIMIT, nullptr);
    if (full_at_ && created_ >= full_at_) return LV_R_MAP_FULL;
    if (cls.flags & LV_CLASS_ADMIT) {
      if (!conforms(sh.admit, k.t)) return LV_R_ADMISSION;
      sh.admit = after(sh.admit, k.t, cls.admit.cost, cls.admit.tau_ns);
    }
    return limit_above(k, create(k.kb, *k.pkt, *k.bytes, k, true), true);
  }

  uint32_t limit(Packet& k) {
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
    // A budget spent refuses the sources the known-source filter has not seen.
    if ((cls.flags & LV_CLASS_ADMIT) && !conforms(shared_[k.cid].admit, k.t) &&
        !seen_.contains(lv_seen_hash(&k.key, seed_)))
      return LV_R_ADMISSION;
    if (const uint32_t r = hot_rejects(k, lv_hot_slot(&k.key))) return r;
    auto it = state_.find(k.kb);
    if (it == state_.end()) return new_source(k);
    LimState& st = it->second;
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
      return limit_above(k, st, false);
    }
    if (cls.flags & LV_CLASS_BAN) return ban(k, st, r);
    return reject(k, hot_ready, r, r, &st);
  }

  // Keep a banned source failing its own limit (the packet limit, else the byte limit)
  // until `until`: its ready time pushed there, never pulled back.
  static void push(const Packet& k, LimState& st, uint64_t until) {
    uint64_t& ready = k.pkt->cost ? st.ready : st.ready_b;
    if (later(until, ready)) ready = until;
  }

  // A packet of a class with bans its source's limits refused (docs/CONFIG.md, "Bans"):
  // while a ban runs, it is measured against the limits the source would have had
  // (over them: the ban ends its length from now); else it is an offence that starts a
  // ban, twice the last one's length if that ended within forget_after. The offending
  // packet counts under its own reason, the banned ones under ban.
  uint32_t ban(const Packet& k, LimState& st, uint32_t r) {
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

  uint32_t measure(const Packet& k, LimState& st, Ban& b) {
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

  uint32_t mode(const Packet& k, uint32_t reason) {
    if (!(k.cls.flags & LV_CLASS_MONITOR)) return reason;
    const bool deny = reason == LV_R_DENY && !(pol_.flags & LV_POL_MONITOR_DENY);
    if (!((LV_MONITORABLE >> reason) & 1) && !deny) return reason;
    t_.would[reason].packets++;
    t_.would[reason].bytes += k.len;
    return LV_R_MONITORED;
  }

  uint32_t count(uint32_t reason, uint32_t cid, uint64_t len) {
    t_.by_reason[reason].packets++;
    t_.by_reason[reason].bytes += len;
    if (cid < LV_MAX_CLASSES) {
      lv_counter& c = lv_reason_drops(reason) ? t_.by_class[cid].dropped : t_.by_class[cid].passed;
      c.packets++;
      c.bytes += len;
    }
    return reason;
  }

  const Policy& spec_;
  lv_policy pol_;
  std::vector<uint32_t> ids_;  // by position in spec_.classes
  std::vector<Listed> lists_;
  const ClassSpec* ban_all_ = nullptr;  // a class that bans in every class: their prefix
  uint32_t seed_;
  uint64_t full_at_ = 0;  // 0: when_full = "evict"
  uint64_t created_ = 0;  // states made
  std::map<KeyBytes, LimState> state_;
  std::map<KeyBytes, Ban> bans_;
  std::array<Shared, LV_MAX_CLASSES> shared_{};
  std::array<Lease, LV_MAX_CLASSES> lease_{};
  std::set<uint32_t> seen_;
  std::set<KeyBytes> good_;  // sources marked known-good
  std::map<uint32_t, Hot> hot_;
  uint32_t hot_last_ = 0;
  Totals t_;
  Feats feats_;
  std::vector<lv_event> events_;  // what the program sent, in order
  uint64_t events_ready_ = 0;     // the event rate's GCRA, all CPUs'
  uint64_t suppressed_ = 0;       // events this CPU did not send since it last sent one
  std::array<uint64_t, LV_MAX_CLASSES> admit_event_{}, full_event_{};
};

// ---- generators ------------------------------------------------------------------

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  uint64_t n(uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_); }
  bool p(double x) { return std::bernoulli_distribution(x)(rng_); }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[n(0, v.size() - 1)];
  }

  // A source near the others (so limits, networks and lists meet), or anywhere in the
  // test ranges.
  std::string source(bool v6) {
    if (v6) {
      if (p(0.9)) return "2001:db8:" + std::to_string(n(0, nets_ - 1)) + "::" + std::to_string(n(1, hosts_));
      return "2001:db8:" + hex16() + ":" + hex16() + "::" + hex16();
    }
    if (p(0.9)) return "198.18." + std::to_string(n(0, nets_ - 1)) + "." + std::to_string(n(1, hosts_));
    return "198." + std::to_string(n(18, 19)) + "." + std::to_string(n(0, 255)) + "." + std::to_string(n(0, 255));
  }

  // Sources a policy marks known-good: a few of those near each other.
  std::vector<std::string> good_sources() {
    std::vector<std::string> out;
    for (uint64_t i = n(1, 6); i > 0; --i) out.push_back(source(p(0.4)));
    return out;
  }

  // A frame's source: half the time one of a phase's few busy senders (a flood, or a
  // client over its limits), else anyone. The busy ones change every few hundred
  // frames, so a banned source goes quiet, its ban ends, and it may come back.
  std::string sender(bool v6) {
    if (phase_left_ == 0) {
      phase_left_ = n(200, 1200);
      busy_ = p(0.7) ? n(1, 3) : 0;
      busy4_.clear();
      busy6_.clear();
      for (uint64_t i = 0; i < busy_; ++i) {
        busy4_.push_back(source(false));
        busy6_.push_back(source(true));
      }
    }
    --phase_left_;
    if (busy_ && p(0.5)) return pick(v6 ? busy6_ : busy4_);
    return source(v6);
  }

  Bytes frame() {
    const bool v6 = p(0.4);
    pkt::Frame f;
    f.eth();
    const uint64_t tags = pick(std::vector<uint64_t>{0, 0, 0, 0, 0, 1, 1, 2, 3});
    for (uint64_t i = 0; i < tags; ++i) f.vlan(static_cast<uint16_t>(n(0, 4095)), p(0.5) ? 0x8100 : 0x88a8);
    const std::string src = sender(v6);
    bool later = false;  // a fragment that does not start its datagram: ports follow, unread
    if (v6) {
      f.ipv6(src, kDst6);
      const uint64_t exts = p(0.7) ? 0 : n(1, 10);
      for (uint64_t i = 0; i < exts; ++i) {
        if (p(0.2)) {
          later = p(0.4);
          f.ipv6_frag(later ? static_cast<uint16_t>(n(1, 100)) : 0, p(0.5));
          if (later) break;
        } else {
          f.ipv6_ext(pick(std::vector<uint8_t>{0, 43, 60, 60, 135, 139, 140}));
        }
      }
    } else {
      std::vector<uint8_t> opts;
      if (p(0.15)) opts.assign(n(1, 10) * 4, 0x01);
      f.ipv4(src, kDst4, opts);
      if (p(0.1)) {
        later = p(0.5);
        f.ipv4_fragment(later ? static_cast<uint16_t>(n(1, 100)) : 0, p(0.5));
      }
    }
    const uint16_t dport = pick(std::vector<uint16_t>{53, 80, 443, 1500, 1999, 22, static_cast<uint16_t>(n(0, 65535))});
    const uint16_t sport = pick(std::vector<uint16_t>{53, 80, 1500, static_cast<uint16_t>(n(1, 65535))});
    Bytes b;
    switch (n(0, 5)) {
      case 0:
      case 1:
        f.udp(sport, dport);
        break;
      case 2:
      case 3:
        f.tcp(sport, dport, pick(std::vector<uint8_t>{pkt::kTcpSyn, pkt::kTcpSyn, 0x10, 0x12, 0x18, 0x01}));
        break;
      case 4:
        if (v6)
          f.icmp6_echo();
        else
          f.icmp_echo();
        break;
      default:
        break;  // no transport header
    }
    f.payload(n(0, 64));
    if (p(0.1)) f.pad_to(n(60, 120));
    b = f.bytes();
    mangle(b);
    return b;
  }

  // Truncations, odd lengths and flipped bytes.
  void mangle(Bytes& b) {
    const uint64_t what = n(0, 99);
    if (what < 80) return;
    if (what < 88) {
      b.resize(n(14, b.size()));
    } else if (what < 96) {
      b[n(12, std::min<size_t>(b.size() - 1, 80))] = static_cast<uint8_t>(n(0, 255));
    } else {
      const size_t at = n(14, std::min<size_t>(b.size() - 2, 60));
      b[at] = static_cast<uint8_t>(n(0, 255));
      b[at + 1] = static_cast<uint8_t>(n(0, 255));
    }
  }

  // How long to wait before the next frame, so that limits refill and bans end: mostly
  // nothing (a frame every 30 us or so), sometimes a few ms, rarely tens.
  uint64_t gap_ns() {
    if (p(1.0 / 600)) return n(1, 6) * 1'000'000;
    if (p(1.0 / 1500)) return n(10, 40) * 1'000'000;
    return 0;
  }

  // Class `i` of a policy (`last`: its default class); `ban_all`, the prefixes of the
  // classes that ban in every class so far (validate() wants one for them all).
  ClassSpec klass(uint64_t i, bool last, const std::optional<std::pair<unsigned, unsigned>>& ban_all) {
    ClassSpec c;
    c.name = last ? "default" : "c" + std::to_string(i);
    if (!last) c.match = match();
    // SYN authentication needs all of TCP's packets (validate()): the first class only,
    // so that no class before it takes its SYNs.
    if (i == 0 && !last && p(0.25)) {
      c.match = Match{};
      c.match.protos = {Proto::Tcp};
      if (p(0.5)) c.match.ports.push_back(pick(std::vector<PortRange>{{80, 80}, {443, 443}, {0, 1023}}));
      c.syn_auth = p(0.5) ? SynAuth::Reset : SynAuth::Cookie;
    }
    if (p(0.8)) c.packets = Rate{pick(std::vector<uint64_t>{n(50, 200), n(200, 1000), n(1000, 5000)}), n(1, 8)};
    if (p(0.3) || !c.packets.set()) c.bytes = Rate{n(2000, 40000), n(200, 4000)};
    c.prefix4 = static_cast<unsigned>(pick(std::vector<uint64_t>{32, 32, 30, 28, 24}));
    c.prefix6 = static_cast<unsigned>(pick(std::vector<uint64_t>{128, 64, 64, 56}));
    if (p(0.3)) c.new_sources = Rate{n(20, 400), n(1, 5)};
    if (p(0.3)) {
      c.network.prefix4 = std::min(c.prefix4, static_cast<unsigned>(pick(std::vector<uint64_t>{24, 22, 16})));
      c.network.prefix6 = std::min(c.prefix6, static_cast<unsigned>(pick(std::vector<uint64_t>{48, 40, 32})));
      if (p(0.7)) c.network.packets = Rate{n(100, 3000), n(3, 24)};
      if (p(0.4) || !c.network.packets.set()) c.network.bytes = Rate{n(10000, 100000), n(500, 6000)};
    }
    if (p(0.35)) {
      if (p(0.8)) c.total.packets = Rate{n(100, 3000), n(2, 30)};
      if (p(0.4) || !c.total.packets.set()) c.total.bytes = Rate{n(20000, 300000), n(1000, 20000)};
    }
    if (p(0.45)) {
      // Mostly short bans, so that they end, double and start over within a policy.
      const uint64_t kind = n(0, 9);
      c.ban.ban_ns = kind < 7 ? n(5, 40) * 1'000'000 : kind < 9 ? n(40, 200) * 1'000'000 : n(1, 3) * LV_NSEC_PER_SEC;
      if (p(0.7)) c.ban.max_ns = c.ban.ban_ns * n(1, 2);
      if (p(0.7)) c.ban.forget_ns = n(1, 20) * 1'000'000;
      c.ban.all_classes = p(0.3);
      if (c.ban.all_classes && ban_all) {  // one ban in every class: one prefix for it
        c.prefix4 = ban_all->first;
        c.prefix6 = ban_all->second;
        c.network.prefix4 = std::min(c.network.prefix4, c.prefix4);
        c.network.prefix6 = std::min(c.network.prefix6, c.prefix6);
      }
    }
    c.monitor = p(0.1);
    c.admission = Admission::Off;
    c.escalate = false;
    return c;
  }

  // `now_unix_ns`: when it is compiled; a few deny entries expire while its frames run.
  // Rates are such that a source's bucket refills within a policy's run (150 ms or so):
  // tens to thousands of packets a second, bursts of a few.
  Policy policy(uint64_t now_unix_ns) {
    Policy pol;
    // Few hosts a policy make floods (a source over its limits), many make arrivals.
    nets_ = pick(std::vector<uint64_t>{1, 2, 4, 4});
    hosts_ = pick(std::vector<uint64_t>{2, 5, 10, 40, 40});
    const uint64_t nclasses = n(1, 5);
    std::optional<std::pair<unsigned, unsigned>> ban_all;  // the prefixes of bans in every class
    for (uint64_t i = 0; i < nclasses; ++i) {
      const bool last = i + 1 == nclasses;
      ClassSpec c = klass(i, last, ban_all);
      if (c.ban.all_classes && !ban_all) ban_all = {c.prefix4, c.prefix6};
      pol.classes.push_back(std::move(c));
    }
    if (p(0.15)) {  // when_full = "refuse", the map's count reached within the policy
      pol.iface.refuse_full = true;
      pol.iface.max_sources = static_cast<uint32_t>(n(16, 160));
    }
    pol.iface.events_per_second = pick(std::vector<uint64_t>{100, 100, 1000, 20, 0});
    pol.monitor = p(0.05);
    pol.deny_in_monitor = p(0.5);
    const uint64_t noverrides = n(0, 2);
    for (uint64_t i = 0; i < noverrides; ++i) {
      OverrideSpec o;
      o.name = "o" + std::to_string(i);
      o.packets = Rate{n(20, 2000), n(1, 10)};
      if (p(0.3)) o.bytes = Rate{n(2000, 40000), n(200, 4000)};
      if (p(0.5)) o.classes.push_back(pick(pol.classes).name);
      pol.overrides.push_back(o);
    }
    const uint64_t nlist = n(0, 8);
    unsigned expiring = 0;
    for (uint64_t i = 0; i < nlist; ++i) {
      ListEntry e;
      e.cidr = prefix();
      // A prefix is listed once (validate() refuses it twice: one verdict a prefix).
      if (std::any_of(pol.lists.begin(), pol.lists.end(), [&](const ListEntry& x) {
            return x.cidr.family == e.cidr.family && x.cidr.len == e.cidr.len && x.cidr.addr == e.cidr.addr;
          }))
        continue;
      e.kind = pick(std::vector<lv_list_kind>{LV_LIST_ALLOW, LV_LIST_DENY, LV_LIST_OVERRIDE});
      if (e.kind == LV_LIST_OVERRIDE) {
        if (pol.overrides.empty()) continue;
        OverrideSpec& o = pol.overrides[n(0, pol.overrides.size() - 1)];
        e.override_name = o.name;
        o.cidrs.push_back(e.cidr);
      }
      // An expiring deny, up to two a policy (deeper nestings of expiring entries fall
      // back to the nearest that never expires, by design: docs/CONFIG.md), expiring
      // within the policy's run of about 100 ms.
      if (e.kind == LV_LIST_DENY && expiring < 2 && p(0.4)) {
        ++expiring;
        e.expires_unix_ns = now_unix_ns + n(1, 150) * 1'000'000;
      }
      pol.lists.push_back(e);
    }
    return pol;
  }

 private:
  std::string hex16() {
    std::ostringstream s;
    s << std::hex << n(0, 0xffff);
    return s.str();
  }
  Match match() {
    Match m;
    const std::vector<Proto> all{Proto::Tcp, Proto::Udp, Proto::Icmp, Proto::Icmp6, Proto::Other};
    for (Proto pr : all)
      if (p(0.35)) m.protos.push_back(pr);
    const bool ported = m.protos.empty() || std::all_of(m.protos.begin(), m.protos.end(),
                                                        [](Proto x) { return x == Proto::Tcp || x == Proto::Udp; });
    if (ported && p(0.5)) {
      // Destination ports, or (a quarter of the time) source ports.
      auto& ranges = p(0.25) ? m.sports : m.ports;
      ranges.push_back(pick(std::vector<PortRange>{{53, 53}, {80, 80}, {443, 443}, {1000, 1999}, {0, 1023}}));
      if (m.protos.empty()) m.protos = {Proto::Tcp, Proto::Udp};
    }
    if (m.protos == std::vector<Proto>{Proto::Tcp} && p(0.4)) m.syn = true;
    if (m.empty()) m.protos.push_back(pick(all));
    return m;
  }
  Cidr prefix() {
    const bool v6 = p(0.4);
    const std::string a = source(v6);
    const unsigned len = static_cast<unsigned>(v6 ? pick(std::vector<uint64_t>{128, 128, 126, 64, 48, 33})
                                                  : pick(std::vector<uint64_t>{32, 32, 30, 28, 24, 16}));
    Cidr c = cidr(a + (v6 ? "/128" : "/32"));
    c.addr = mask_prefix(c.addr, len);
    c.len = len;
    return c;
  }
  std::mt19937_64 rng_;
  uint64_t nets_ = 4, hosts_ = 40;      // the sources near each other, this policy's
  uint64_t phase_left_ = 0, busy_ = 0;  // frames left in this phase, its busy senders
  std::vector<std::string> busy4_, busy6_;
};

// ---- the test ----------------------------------------------------------------------

// The thread stays on one CPU: the clock, the hot sources, the class totals' leases and
// the counters the model follows are per CPU.
class OneCpu {
 public:
  OneCpu() {
    sched_getaffinity(0, sizeof old_, &old_);
    cpu_ = sched_getcpu();
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu_, &one);
    ok_ = sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~OneCpu() { sched_setaffinity(0, sizeof old_, &old_); }
  OneCpu(const OneCpu&) = delete;
  OneCpu& operator=(const OneCpu&) = delete;
  bool ok() const { return ok_; }
  size_t cpu() const { return static_cast<size_t>(cpu_); }

 private:
  cpu_set_t old_{};
  int cpu_ = 0;
  bool ok_ = false;
};

std::string outcome(uint32_t reason) {
  return std::string(lv_reason_drops(reason) ? "DROP/" : "PASS/") + std::string(reason_name(reason));
}

struct Figures {
  uint64_t frames = 0, policies = 0, refused = 0, states = 0, ban_records = 0, syns_not_sent = 0;
  Counters by_reason{};
  Feats feats;
};

// Every state, ban record, hot slot, shared budget, lease and the event rate of the
// model against the program's maps at the end of a policy: the same values to the
// nanosecond. An empty string if
// they agree.
std::string compare_state(const Datapath& dp, const Model& m, size_t cpu, const lv_percpu& pc, const lv_policy& slot) {
  std::ostringstream out;
  for (const auto& [kb, s] : m.states()) {
    lv_key key{};
    std::memcpy(&key, kb.data(), sizeof key);
    const std::optional<lv_state> st = dp.state(key);
    if (!st) {
      out << "a state the model made is not in lv_state (class " << key.class_id << ")\n";
    } else if (st->ready_ns != s.ready || st->ready_bytes_ns != s.ready_b || st->passed != s.passed ||
               st->dropped != s.dropped) {
      out << "state of class " << key.class_id << (key.family & LV_KEY_NETWORK ? " (network)" : "") << ": ready "
          << st->ready_ns << "/" << st->ready_bytes_ns << " passed " << LV_COUNT_PACKETS(st->passed) << "p/"
          << LV_COUNT_BYTES(st->passed) << "B dropped " << LV_COUNT_PACKETS(st->dropped) << "p/"
          << LV_COUNT_BYTES(st->dropped) << "B; model " << s.ready << "/" << s.ready_b << " passed "
          << LV_COUNT_PACKETS(s.passed) << "p/" << LV_COUNT_BYTES(s.passed) << "B dropped "
          << LV_COUNT_PACKETS(s.dropped) << "p/" << LV_COUNT_BYTES(s.dropped) << "B\n";
    }
  }
  if (dp.state_count() != m.states().size())
    out << "lv_state holds " << dp.state_count() << " entries, the model " << m.states().size() << "\n";
  for (const auto& [kb, b] : m.bans()) {
    lv_key key{};
    std::memcpy(&key, kb.data(), sizeof key);
    const std::optional<lv_ban> got = dp.ban(key);
    if (!got) {
      out << "a ban the model started is not in lv_bans\n";
    } else if (got->until_ns != b.until || got->duration_ns != b.duration || got->offences != b.offences ||
               got->shadow_ns != b.shadow || got->shadow_bytes_ns != b.shadow_b) {
      out << "ban (class " << key.class_id << "): until " << got->until_ns << " for " << got->duration_ns << " offence "
          << got->offences << " shadow " << got->shadow_ns << "/" << got->shadow_bytes_ns << "; model until " << b.until
          << " for " << b.duration << " offence " << b.offences << " shadow " << b.shadow << "/" << b.shadow_b << "\n";
    }
  }
  for (const auto& [slot, h] : m.hot()) {
    if (!h.set) continue;
    lv_key key{};
    std::memcpy(&key, h.key.data(), sizeof key);
    const lv_hot got = dp.hot(key).at(cpu);
    if (std::memcmp(&got.key, &key, sizeof key) != 0 || got.hits != h.hits || got.reason != h.reason ||
        (got.fast != 0) != h.fast || got.ready_ns != h.ready ||
        std::memcmp(got.addr, h.addr.data(), sizeof got.addr) != 0)
      out << "hot slot " << slot << ": hits " << got.hits << " reason " << reason_name(got.reason) << " fast "
          << int{got.fast} << " ready " << got.ready_ns << "; model hits " << h.hits << " reason "
          << reason_name(h.reason) << " fast " << h.fast << " ready " << h.ready << "\n";
  }
  if (pc.hot_last != m.hot_last()) out << "hot_last " << pc.hot_last << ", model " << m.hot_last() << "\n";
  const lv_shared all = dp.shared(LV_MAX_CLASSES);
  if (all.events_ready != m.events_ready() || pc.events_suppressed != m.suppressed())
    out << "event rate " << all.events_ready << ", " << pc.events_suppressed << " suppressed; model "
        << m.events_ready() << ", " << m.suppressed() << "\n";
  if (dp.ban_count() != m.bans().size())
    out << "lv_bans holds " << dp.ban_count() << " records, the model " << m.bans().size() << "\n";
  for (uint32_t c = 0; c < slot.nr_classes && c < LV_MAX_CLASSES; ++c) {
    const lv_shared sh = dp.shared(c);
    const Shared& ms = m.shared(c);
    if (sh.admit_event_ns != m.admit_event(c) || sh.full_event_ns != m.full_event(c))
      out << "class " << c << " last events: admission " << sh.admit_event_ns << " map full " << sh.full_event_ns
          << "; model " << m.admit_event(c) << " " << m.full_event(c) << "\n";
    if (sh.admit_ready != ms.admit || sh.total_ready != ms.total || sh.total_ready_bytes != ms.total_b)
      out << "class " << c << " shared: admission " << sh.admit_ready << " total " << sh.total_ready << "/"
          << sh.total_ready_bytes << "; model " << ms.admit << " " << ms.total << "/" << ms.total_b << "\n";
    const Lease& ml = m.lease(c);
    if ((slot.classes[c].flags & LV_CLASS_TOTAL) &&
        (pc.lease[c].credit_ns != ml.credit || pc.lease[c].credit_bytes_ns != ml.credit_b))
      out << "class " << c << " lease: " << pc.lease[c].credit_ns << "/" << pc.lease[c].credit_bytes_ns << "; model "
          << ml.credit << "/" << ml.credit_b << "\n";
  }
  return out.str();
}

// The events the program sent against the model's, in order, field by field: "" if
// they agree.
std::string compare_events(const std::vector<lv_event>& got, const std::vector<lv_event>& want) {
  std::ostringstream out;
  auto say = [&](const char* who, const lv_event& e) {
    out << who << " type " << int{e.type} << " class " << e.class_id << " reason " << reason_name(e.reason)
        << " family " << int{e.family} << " count " << e.count << " suppressed " << e.suppressed << " value " << e.value
        << " at " << e.time_ns << "\n";
  };
  for (size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    if (i < got.size() && i < want.size() && std::memcmp(&got[i], &want[i], sizeof(lv_event)) == 0) continue;
    out << "event " << i << " of " << got.size() << " (model " << want.size() << "):\n";
    if (i < got.size()) say("  program", got[i]);
    if (i < want.size()) say("  model  ", want[i]);
    break;
  }
  return out.str();
}

TEST_F(ProgTest, DatapathAgreesWithTheModelOnRandomFramesAndPolicies) {
  const uint64_t seed = env_or("LEVEE_DIFF_SEED", 1);
  const uint64_t policies = env_or("LEVEE_DIFF_POLICIES", 500);
  const uint64_t frames = env_or("LEVEE_DIFF_FRAMES", 1'200'000);
  const uint64_t per_policy = std::max<uint64_t>(1, frames / std::max<uint64_t>(1, policies));
  const int ncpus = libbpf_num_possible_cpus();
  ASSERT_GT(ncpus, 0);
  OneCpu pin;
  ASSERT_TRUE(pin.ok()) << "cannot pin the test to one CPU";
  const size_t cpu = pin.cpu();
  Controller ctl(dp());
  Figures fig;
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t from = env_or("LEVEE_DIFF_FROM", 0);
  for (uint64_t i = from; i < from + policies; ++i) {
    Gen g(seed * 1'000'003 + i);
    const Clocks clk = Clocks::read();
    Policy pol = g.policy(clk.now_unix_ns);
    try {
      dp().reset_state();
      ctl.install(pol, clk);
    } catch (const std::runtime_error& e) {
      if (std::getenv("LEVEE_DIFF_SAY")) std::printf("refused: %s\n", e.what());
      ++fig.refused;  // a policy validate() refuses: the generator's, not a finding
      continue;
    }
    ++fig.policies;
    const lv_policy slot = ctl.active();
    Model model(pol, slot, clk, dp().control().seen_seed, static_cast<unsigned>(ncpus));
    // A class with SYN authentication: some of its sources known-good, as levee run
    // marks those that behaved (their SYNs go on to the limits, and are sent).
    if (pol.classes.front().syn_auth != SynAuth::Off) {
      const Pinned pins = dp().pinned("lvdiff");
      auto kg = KnownGood::open(pins, ctl.map());
      ASSERT_TRUE(kg) << kg.error().message();
      const ClassSpec& c = pol.classes.front();
      uint32_t cid = 0;
      while (cid < LV_MAX_CLASSES && c.name != slot.classes[cid].name) ++cid;
      ASSERT_LT(cid, LV_MAX_CLASSES);
      for (const std::string& a : g.good_sources()) {
        lv_key key =
            source_key(a, a.find(':') == std::string::npos ? c.prefix4 : c.prefix6, static_cast<uint16_t>(cid));
        key.epoch = slot.classes[cid].epoch;
        kg.value().mark(key);
        model.mark_good(key);
      }
    }
    std::vector<lv_percpu> pcs = dp().percpu();
    Counters last{};
    const std::string where = "seed " + std::to_string(seed) + " policy " + std::to_string(i);
    for (uint64_t f = 0; f < per_policy; ++f) {
      Bytes frame = g.frame();
      while (model.answered_syn(frame)) {
        ++fig.syns_not_sent;
        frame = g.frame();
      }
      if (const uint64_t gap = g.gap_ns()) std::this_thread::sleep_for(std::chrono::nanoseconds(gap));
      // A CPU that ran LV_CLOCK_BUSY_PKTS packets within a jiffy reuses its last fine
      // reading; one that ran fewer reads the fine clock for every packet. Kept quiet,
      // the program reads one clock per packet, once, and leaves it in lv_percpu.
      if (pcs[cpu].clock.busy >= LV_CLOCK_BUSY_PKTS / 2) {
        pcs[cpu].clock.busy = 0;
        dp().put_percpu(pcs);
      }
      const uint64_t lo = monotonic_ns();
      const RunResult r = dp().run(frame);
      const uint64_t hi = monotonic_ns();
      ASSERT_EQ(r.err, 0) << where << " frame " << f << " " << hex(frame);
      pcs = dp().percpu();
      Counters now{};
      for (const lv_percpu& pc : pcs)
        for (uint32_t x = 0; x < LV_REASON_MAX; ++x) now[x].packets += pc.by_reason[x].packets;
      uint32_t got = LV_REASON_MAX;
      for (uint32_t x = 0; x < LV_REASON_MAX; ++x)
        if (now[x].packets != last[x].packets) got = x;
      last = now;
      // The program's clock for this frame: a fine reading taken during this run.
      const uint64_t at = pcs[cpu].clock.ns;
      const std::optional<uint64_t> t = at >= lo && at <= hi ? std::optional<uint64_t>(at) : std::nullopt;
      uint32_t want = 0;
      try {
        want = model.step(frame, t);
      } catch (const NoClock&) {
        ADD_FAILURE() << where << " frame " << f << ": the program read no fine clock within the run [" << lo << ", "
                      << hi << "] (lv_percpu.clock.ns " << at << ")\n  frame " << hex(frame) << "\n  datapath "
                      << (got < LV_REASON_MAX ? reason_name(got) : "?");
        return;
      }
      ++fig.frames;
      const uint32_t verdict = lv_reason_drops(want) ? XDP_DROP : XDP_PASS;
      if (got != want || r.retval != verdict) {
        ADD_FAILURE() << where << " frame " << f << " at +" << (t ? *t - clk.now_mono_ns : 0)
                      << " ns (alone: LEVEE_DIFF_SEED=" << seed << " LEVEE_DIFF_FROM=" << i
                      << " LEVEE_DIFF_POLICIES=1 LEVEE_DIFF_FRAMES=" << per_policy << ")\n  frame " << hex(frame)
                      << "\n  datapath " << (r.retval == XDP_DROP ? "DROP" : "PASS") << " reason "
                      << (got < LV_REASON_MAX ? reason_name(got) : "?") << "\n  model    " << outcome(want);
        return;
      }
    }
    // Whole-policy counters: per reason, per class, would-drop; and every state.
    const Totals& tm = model.totals();
    const Counters got = dp().counters();
    const auto by_class = dp().class_counters();
    Counters would{};
    for (const lv_percpu& pc : pcs)
      for (uint32_t x = 0; x < LV_REASON_MAX; ++x) {
        would[x].packets += pc.would[x].packets;
        would[x].bytes += pc.would[x].bytes;
      }
    for (uint32_t x = 0; x < LV_REASON_MAX; ++x) {
      fig.by_reason[x].packets += tm.by_reason[x].packets;
      EXPECT_EQ(got[x].packets, tm.by_reason[x].packets) << where << " reason " << reason_name(x);
      EXPECT_EQ(got[x].bytes, tm.by_reason[x].bytes) << where << " reason " << reason_name(x);
      EXPECT_EQ(would[x].packets, tm.would[x].packets) << where << " would " << reason_name(x);
    }
    for (uint32_t c = 0; c < LV_MAX_CLASSES; ++c) {
      EXPECT_EQ(by_class[c].passed.packets, tm.by_class[c].passed.packets) << where << " class " << c;
      EXPECT_EQ(by_class[c].dropped.bytes, tm.by_class[c].dropped.bytes) << where << " class " << c;
    }
    const std::string diff = compare_state(dp(), model, cpu, pcs[cpu], slot);
    EXPECT_EQ(compare_events(dp().events(), model.events()), "") << where << ": the events differ from the model's";
    EXPECT_EQ(diff, "") << where << ": the maps differ from the model's";
    fig.states += model.states().size();
    fig.ban_records += model.bans().size();
    fig.feats.add(model.feats());
    if (HasFailure()) return;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Feats& ft = fig.feats;
  std::printf(
      "difftest: seed %llu, %llu policies (%llu refused by validate), %llu frames agreed, %llu states and %llu "
      "ban records agreed (%llu SYNs into syn_auth classes not sent), %.1f s\n",
      static_cast<unsigned long long>(seed), static_cast<unsigned long long>(fig.policies),
      static_cast<unsigned long long>(fig.refused), static_cast<unsigned long long>(fig.frames),
      static_cast<unsigned long long>(fig.states), static_cast<unsigned long long>(fig.ban_records),
      static_cast<unsigned long long>(fig.syns_not_sent), secs);
  std::printf(
      "difftest: refills %llu, bans %llu (ended %llu, doubled %llu, held at ban_max %llu, started over %llu, "
      "extended %llu), banned elsewhere %llu, class total leases %llu, events %llu (%llu over the rate), syn_auth: "
      "%llu unverified, %llu known-good\n",
      static_cast<unsigned long long>(ft.refills), static_cast<unsigned long long>(ft.bans),
      static_cast<unsigned long long>(ft.expiries), static_cast<unsigned long long>(ft.doubled),
      static_cast<unsigned long long>(ft.capped), static_cast<unsigned long long>(ft.forgotten),
      static_cast<unsigned long long>(ft.extended), static_cast<unsigned long long>(ft.elsewhere),
      static_cast<unsigned long long>(ft.leases), static_cast<unsigned long long>(ft.events),
      static_cast<unsigned long long>(ft.suppressed), static_cast<unsigned long long>(ft.unverified),
      static_cast<unsigned long long>(ft.good));
  std::printf("difftest: by reason %s\n", describe(fig.by_reason).c_str());
  EXPECT_GE(fig.policies, policies * 99 / 100) << "the generator's policies are refused";
  EXPECT_GE(fig.frames, frames * 95 / 100) << "too few frames compared";
  // The floors hold over a run of the default size or larger; a shorter one (a policy
  // run alone) says it does not check them.
  if (policies < 500 || frames < 1'000'000) {
    std::printf("difftest: a run shorter than the default: the floors are not checked\n");
    return;
  }
  // What the generator is for: every level decides some frames.
  for (uint32_t r : {LV_R_RATE, LV_R_BYTES, LV_R_BAN, LV_R_NETWORK, LV_R_ADMISSION, LV_R_ALLOW, LV_R_DENY,
                     LV_R_CLASS_LIMIT, LV_R_MAP_FULL, LV_R_UNVERIFIED})
    EXPECT_GE(fig.by_reason[r].packets, frames / 1000) << reason_name(r) << " decided too few frames";
  // ...and time moves: limits refill, bans end, double, start over and are extended,
  // bans in every class drop in other classes, class totals lease.
  const uint64_t floor = std::max<uint64_t>(1, frames / 20'000);
  EXPECT_GE(ft.refills, frames / 200) << "too few refills";
  for (auto [n, what] : {std::pair{ft.expiries, "bans ended"}, std::pair{ft.doubled, "bans doubled"},
                         std::pair{ft.capped, "bans held at ban_max"}, std::pair{ft.forgotten, "bans started over"},
                         std::pair{ft.extended, "bans extended"}, std::pair{ft.elsewhere, "bans in every class"},
                         std::pair{ft.leases, "leases"}, std::pair{ft.events, "events"},
                         std::pair{ft.suppressed, "events over the rate"},
                         std::pair{ft.good, "TCP of known-good sources in syn_auth classes"}})
    EXPECT_GE(n, floor) << what << ": too few";
}

}  // namespace
}  // namespace levee::progtest
