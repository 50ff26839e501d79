// difftest_test.cpp - the differential test of the datapath: random policies, compiled
// and written by the controller's own path, and random frames through the real XDP
// program (BPF_PROG_TEST_RUN), each frame's verdict and reason, and at the end of each
// policy the per-class and would-drop counters, compared with a userspace model.
//
// The model does not call the code under test. It parses with the reference parser
// (tests/model/parse_model.hpp, written apart from bpf/parse.h); it classifies by first
// match from the classes as the policy writes them (not the compiled table), masks a
// source into its key, costs a packet's bytes, and decides the lists from the entries as
// written (the longest prefix in force; expiring deny entries stop matching on the
// program's clock) from their definitions in docs/, not through rules.h or limiter.h.
// It takes from compile() only the limits it wrote (cost and tolerance, in ns) and
// the class ids. The levels, the order of the checks, monitor mode and the hot source
// are written here from docs/ARCHITECTURE.md.
//
// Time: the program reads the kernel's clock, which a test cannot set. Each limit's
// state is kept relative to the instant it was last full, and every packet of a policy
// happens within E (the policy's elapsed time so far) of it. Rates are low (at most 8
// packets or 200 bytes a second) and a policy's frames run in tens of ms, so a limit
// decides the same anywhere in that window; when it would not (a byte limit's credit
// ending inside the window), the model says so and the policy stops there, counted as
// "undecidable", never as agreement; so does a list entry expiring within a frame's
// window. A floor on the frames compared keeps that honest. Bans (per class) are
// generated, each longer than a policy's frames run: what the limits still measure of a
// banned source moves only its end. Not modelled (not generated): bans in every class,
// their expiry and doubling, class totals, when_full = "refuse", events, the autopilot
// (time-driven: autopilot_test.cpp covers it; a budget, new_sources, still wins over
// it), SYN authentication (syn_hostile_test.cpp).
//
// LEVEE_DIFF_SEED (default 1), LEVEE_DIFF_POLICIES (default 500), LEVEE_DIFF_FRAMES
// (default 1,200,000, shared out over the policies: at least 3/4 must be decided and
// compared; 1.13-1.15M are); LEVEE_DIFF_SAY=1 prints why validate() refused a policy.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "datapath.hpp"
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

// A limit's decision may depend on where in the window of time it was taken.
struct Undecidable {
  std::string what;
};

using KeyBytes = std::array<uint8_t, sizeof(lv_key)>;
KeyBytes bytes_of(const lv_key& k) {
  KeyBytes b{};
  std::memcpy(b.data(), &k, sizeof k);
  return b;
}

// One GCRA's state as the time its next packet conforms, relative to the instant the
// limit was last full; a packet's `now` lies in [0, E] of that instant.
constexpr int64_t kFull = INT64_MIN / 4;  // never charged: a full bucket

struct Gcra {
  int64_t ready = kFull;
};

class Window {
 public:
  explicit Window(uint64_t e) : e_(static_cast<int64_t>(e)) {}
  bool conforms(int64_t ready, const char* what) const {
    if (ready <= 0) return true;
    if (ready > e_) return false;
    throw Undecidable{what};
  }
  // ready' = max(ready + cost, now - tau + cost): the queue, or a full bucket from now
  // on (the limit's instant moves to now).
  void pass(Gcra& g, uint64_t cost, uint64_t tau, const char* what) const {
    const int64_t full = -static_cast<int64_t>(tau);
    if (g.ready <= full) {
      g.ready = full + static_cast<int64_t>(cost);
      return;
    }
    if (g.ready < full + e_) throw Undecidable{what};
    g.ready += static_cast<int64_t>(cost);
  }

 private:
  int64_t e_;
};

struct LimState {
  Gcra pkt, bytes;
};

struct Hot {
  bool set = false, fast = false;
  bool banned = false;  // its source is banned: whether or not the entry refuses, a ban does
  KeyBytes key{};
  std::array<uint8_t, 16> addr{};
  uint32_t hits = 0, reason = 0;
  int64_t ready = 0;
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

// When the program may have read its clock for one frame: the fine clock within
// [lo, hi] (the run's bracket), the cached one up to a tick earlier.
struct Instant {
  uint64_t lo = 0, hi = 0, tick = 0;
};

class Model {
 public:
  Model(const Policy& spec, const lv_policy& pol, const Clocks& clk, uint32_t seen_seed)
      : spec_(spec), pol_(pol), seed_(seen_seed) {
    for (const ClassSpec& c : spec.classes) ids_.push_back(id_named(c.name));
    for (const ListEntry& e : spec.lists) {
      if (e.expires_unix_ns && e.expires_unix_ns <= clk.now_unix_ns) continue;  // over before it began
      Listed l{e.cidr, e.kind, 0, e.expires_unix_ns ? clk.to_mono(e.expires_unix_ns) : 0};
      if (e.kind == LV_LIST_OVERRIDE)
        for (uint32_t o = 0; o < pol.nr_overrides; ++o)
          if (e.override_name == pol.overrides[o].name) l.override_id = o;
      lists_.push_back(l);
    }
  }

  // The reason for one frame, and its counts.
  uint32_t step(const Bytes& frame, uint64_t elapsed_ns, const Instant& at) {
    const Window w(elapsed_ns);
    const model::Parsed p = model::parse_frame(frame);
    if (p.reason != LV_R_CONFORMING) return count(p.reason, LV_MAX_CLASSES, frame.size());
    const size_t pos = classify(p);
    const uint32_t cid = ids_[pos];
    const ClassSpec& spec = spec_.classes[pos];
    const lv_class& cls = pol_.classes[cid];
    Packet k{p, cid, cls, frame.size(), key_of(p, spec.prefix4, spec.prefix6, cid, 0, cls.epoch)};
    return count(mode(k, decide(k, w, at)), cid, frame.size());
  }
  const Totals& totals() const { return t_; }

 private:
  struct Packet {
    model::Parsed p;
    uint32_t cid;
    const lv_class& cls;
    uint64_t len;
    lv_key key;
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

  // What the lists say of a source at the frame's instant (the cached clock): of the
  // entries that cover it and have not expired, the longest; at one length, allow over
  // deny over override. An entry that expires within the instant's window is
  // undecidable.
  std::optional<Listed> list_verdict(const model::Parsed& p, const Instant& at) const {
    std::optional<Listed> best;
    for (const Listed& l : lists_) {
      if (!covers(l.cidr, p)) continue;
      if (l.expires) {
        if (l.expires <= at.lo - at.tick) continue;  // over at every reading the frame may have had
        if (l.expires <= at.hi) throw Undecidable{"a list entry's expiry"};
      }
      auto rank = [](const Listed& x) { return x.kind == LV_LIST_ALLOW ? 3 : x.kind == LV_LIST_DENY ? 2 : 1; };
      if (!best || l.cidr.len > best->cidr.len || (l.cidr.len == best->cidr.len && rank(l) > rank(*best))) best = l;
    }
    return best;
  }

  bool listed(const model::Parsed& p) const {
    return p.family == LV_AF_INET ? (pol_.nr_list4 | pol_.nr_host4) != 0 : (pol_.nr_list6 | pol_.nr_host6) != 0;
  }

  uint32_t decide(Packet& k, const Window& w, const Instant& at) {
    // A banned source's repeat: the hot entry refuses it until a grain past the ban's
    // start or extension (a time the model does not know), the full path after that;
    // both say ban, and both count the hit (a full entry starts over).
    if (hot_.set && hot_.banned && hot_.key == bytes_of(k.key) && (!listed(k.p) || hot_.addr == k.p.addr)) {
      hot_.hits = hot_.hits < LV_HOT_MAX_HITS ? hot_.hits + 1 : 0;
      return LV_R_BAN;
    }
    // A flood's repeat: the last source rejected, still not eligible.
    if (hot_.set && !hot_.banned && hot_.fast && hot_.hits < LV_HOT_MAX_HITS && hot_.key == bytes_of(k.key) &&
        (!listed(k.p) || hot_.addr == k.p.addr) && !w.conforms(hot_.ready, "hot source")) {
      ++hot_.hits;
      return hot_.reason;
    }
    k.pkt = &k.cls.pkt;
    k.bytes = &k.cls.bytes;
    k.flags = k.cls.flags;
    if (const std::optional<Listed> d = list_verdict(k.p, at)) {
      if (d->kind == LV_LIST_ALLOW) return LV_R_ALLOW;
      if (d->kind == LV_LIST_DENY) return LV_R_DENY;
      if (d->kind == LV_LIST_OVERRIDE && ((pol_.overrides[d->override_id].classes >> k.cid) & 1)) {
        const lv_override& o = pol_.overrides[d->override_id];
        k.pkt = &o.pkt;
        k.bytes = &o.bytes;
        k.flags = o.flags;
      }
    }
    return limit(k, w);
  }

  uint32_t reject(const Packet& k, int64_t ready, uint32_t reason, uint32_t hot_reason = LV_REASON_MAX) {
    const bool fast = k.flags & LV_CLASS_FAST_REJECT;
    if (hot_.set && hot_.key == bytes_of(k.key) && hot_.hits < LV_HOT_MAX_HITS) {
      ++hot_.hits;
    } else {
      hot_.set = true;
      hot_.key = bytes_of(k.key);
      hot_.hits = 0;
    }
    hot_.reason = hot_reason == LV_REASON_MAX ? reason : hot_reason;
    hot_.banned = hot_.reason == LV_R_BAN;
    hot_.fast = fast;
    hot_.addr = k.p.addr;
    hot_.ready = ready;
    return reason;
  }

  // A source of a class with bans, refused by its own limits (`r`): the offending packet
  // counts under r and starts a ban; while the ban runs (a second at least, longer than
  // a policy's frames) every packet of the source counts under ban, whatever the limits
  // it is still measured against say (they only move the ban's end).
  uint32_t ban(const Packet& k, uint32_t r) {
    if (banned_.insert(bytes_of(k.key)).second) return reject(k, 0, r, LV_R_BAN);
    return reject(k, 0, LV_R_BAN);
  }

  lv_key net_key(const Packet& k) const {
    const NetworkLimit& n = spec_.classes[std::find(ids_.begin(), ids_.end(), k.cid) - ids_.begin()].network;
    return key_of(k.p, n.prefix4, n.prefix6, k.cid, LV_KEY_NETWORK, k.cls.epoch);
  }

  // Is a pair of limits over at the packet's time? *ready: the one that is.
  static bool over(const LimState& s, const lv_limit& p, const lv_limit& b, const Window& w, int64_t* ready) {
    if (p.cost && !w.conforms(s.pkt.ready, "over, packets")) return *ready = s.pkt.ready, true;
    if (b.cost && !w.conforms(s.bytes.ready, "over, bytes")) return *ready = s.bytes.ready, true;
    return false;
  }

  // What a packet of `len` bytes costs a byte limit: its cost per byte (ns, in 1/2^16)
  // times the length, rounded up (never looser).
  static uint64_t byte_cost(uint64_t len, const lv_limit& b) {
    const unsigned __int128 ns = static_cast<unsigned __int128>(len) * b.cost;
    return static_cast<uint64_t>((ns + 65535) / 65536);
  }

  // Take a pair of limits: both or neither.
  static uint32_t take(LimState& s, const lv_limit& p, const lv_limit& b, uint64_t len, const Window& w,
                       uint32_t over_p, uint32_t over_b, int64_t* ready) {
    if (p.cost) {
      if (!w.conforms(s.pkt.ready, "take, packets")) return *ready = s.pkt.ready, over_p;
    }
    if (b.cost && !w.conforms(s.bytes.ready, "take, bytes")) return *ready = s.bytes.ready, over_b;
    if (p.cost) w.pass(s.pkt, p.cost, p.tau_ns, "pass, packets");
    if (b.cost) w.pass(s.bytes, byte_cost(len, b), b.tau_ns, "pass, bytes");
    return LV_R_CONFORMING;
  }
  static void refund(LimState& s, const lv_limit& p, const lv_limit& b, uint64_t len) {
    if (p.cost) s.pkt.ready -= static_cast<int64_t>(p.cost);
    if (b.cost) s.bytes.ready -= static_cast<int64_t>(byte_cost(len, b));
  }

  // The network level: its state created with the packet passed, or taken.
  uint32_t network_take(const Packet& k, const Window& w, LimState** net, int64_t* ready) {
    const KeyBytes nk = bytes_of(net_key(k));
    auto it = state_.find(nk);
    if (it == state_.end()) {
      LimState s;
      take(s, k.cls.net_pkt, k.cls.net_bytes, k.len, w, 0, 0, ready);
      *net = &(state_[nk] = s);
      return LV_R_CONFORMING;
    }
    *net = &it->second;
    return take(it->second, k.cls.net_pkt, k.cls.net_bytes, k.len, w, LV_R_NETWORK, LV_R_NETWORK, ready);
  }

  uint32_t new_source(const Packet& k, const Window& w) {
    const lv_class& cls = k.cls;
    int64_t ready = 0;
    if (cls.flags & LV_CLASS_NETWORK) {
      auto it = state_.find(bytes_of(net_key(k)));
      if (it != state_.end() && over(it->second, cls.net_pkt, cls.net_bytes, w, &ready))
        return reject(k, ready, LV_R_NETWORK);
    }
    Gcra& admit = admit_[k.cid];
    if (cls.flags & LV_CLASS_ADMIT) {
      if (!w.conforms(admit.ready, "admission")) return LV_R_ADMISSION;
      w.pass(admit, cls.admit.cost, cls.admit.tau_ns, "admission");
    }
    if (cls.flags & LV_CLASS_NETWORK) {
      LimState* net = nullptr;
      const uint32_t r = network_take(k, w, &net, &ready);
      if (r != LV_R_CONFORMING) {
        if (cls.flags & LV_CLASS_ADMIT) admit.ready -= static_cast<int64_t>(cls.admit.cost);
        return reject(k, ready, r);
      }
    }
    LimState s;
    take(s, *k.pkt, *k.bytes, k.len, w, 0, 0, &ready);
    state_[bytes_of(k.key)] = s;
    seen_.insert(lv_seen_hash(&k.key, seed_));
    return LV_R_CONFORMING;
  }

  uint32_t limit(const Packet& k, const Window& w) {
    const lv_class& cls = k.cls;
    if (!k.pkt->cost && !k.bytes->cost && !(cls.flags & (LV_CLASS_NETWORK | LV_CLASS_TOTAL))) return LV_R_CONFORMING;
    if ((cls.flags & LV_CLASS_ADMIT) && !w.conforms(admit_[k.cid].ready, "admission") &&
        !seen_.contains(lv_seen_hash(&k.key, seed_)))
      return LV_R_ADMISSION;
    auto it = state_.find(bytes_of(k.key));
    if (it == state_.end()) return new_source(k, w);
    LimState& st = it->second;
    int64_t ready = 0;
    if (banned_.contains(bytes_of(k.key))) return ban(k, LV_R_BAN);  // its state fails until the ban ends
    uint32_t r = take(st, *k.pkt, *k.bytes, k.len, w, LV_R_RATE, LV_R_BYTES, &ready);
    if (r != LV_R_CONFORMING && (cls.flags & LV_CLASS_BAN) && (r == LV_R_RATE || r == LV_R_BYTES)) return ban(k, r);
    if (r != LV_R_CONFORMING) return reject(k, ready, r);
    if (cls.flags & LV_CLASS_NETWORK) {
      LimState* net = nullptr;
      r = network_take(k, w, &net, &ready);
      if (r != LV_R_CONFORMING) {
        refund(st, *k.pkt, *k.bytes, k.len);
        return reject(k, ready, r);
      }
    }
    return LV_R_CONFORMING;
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
  uint32_t seed_;
  std::map<KeyBytes, LimState> state_;
  std::array<Gcra, LV_MAX_CLASSES> admit_{};
  std::set<uint32_t> seen_;
  std::set<KeyBytes> banned_;  // keys of sources banned (per class: no ban in every class)
  Hot hot_;
  Totals t_;
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
      if (p(0.9)) return "2001:db8:" + std::to_string(n(0, 3)) + "::" + std::to_string(n(1, 40));
      return "2001:db8:" + hex16() + ":" + hex16() + "::" + hex16();
    }
    if (p(0.9)) return "198.18." + std::to_string(n(0, 3)) + "." + std::to_string(n(1, 40));
    return "198." + std::to_string(n(18, 19)) + "." + std::to_string(n(0, 255)) + "." + std::to_string(n(0, 255));
  }

  Bytes frame() {
    const bool v6 = p(0.4);
    pkt::Frame f;
    f.eth();
    const uint64_t tags = pick(std::vector<uint64_t>{0, 0, 0, 0, 0, 1, 1, 2, 3});
    for (uint64_t i = 0; i < tags; ++i) f.vlan(static_cast<uint16_t>(n(0, 4095)), p(0.5) ? 0x8100 : 0x88a8);
    const std::string src = source(v6);
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

  // `now_unix_ns`: when it is compiled; a few deny entries expire while its frames run.
  Policy policy(uint64_t now_unix_ns) {
    Policy pol;
    const uint64_t nclasses = n(1, 5);
    for (uint64_t i = 0; i < nclasses; ++i) {
      const bool last = i + 1 == nclasses;
      ClassSpec c;
      c.name = last ? "default" : "c" + std::to_string(i);
      if (!last) c.match = match();
      if (p(0.8)) c.packets = Rate{n(1, 8), n(1, 6)};
      if (p(0.3) || !c.packets.set()) c.bytes = Rate{n(50, 200), n(100, 3000)};
      c.prefix4 = static_cast<unsigned>(pick(std::vector<uint64_t>{32, 32, 30, 28, 24}));
      c.prefix6 = static_cast<unsigned>(pick(std::vector<uint64_t>{128, 64, 64, 56}));
      if (p(0.3)) c.new_sources = Rate{n(1, 4), n(1, 5)};
      if (p(0.3)) {
        c.network.prefix4 = std::min(c.prefix4, static_cast<unsigned>(pick(std::vector<uint64_t>{24, 22, 16})));
        c.network.prefix6 = std::min(c.prefix6, static_cast<unsigned>(pick(std::vector<uint64_t>{48, 40, 32})));
        if (p(0.7)) c.network.packets = Rate{n(2, 8), n(2, 12)};
        if (p(0.4) || !c.network.packets.set()) c.network.bytes = Rate{n(100, 200), n(300, 3000)};
      }
      if (p(0.3)) c.ban.ban_ns = n(1, 5) * LV_NSEC_PER_SEC;  // longer than the policy's frames run
      c.monitor = p(0.1);
      c.admission = Admission::Off;
      c.escalate = false;
      pol.classes.push_back(std::move(c));
    }
    pol.monitor = p(0.05);
    pol.deny_in_monitor = p(0.5);
    const uint64_t noverrides = n(0, 2);
    for (uint64_t i = 0; i < noverrides; ++i) {
      OverrideSpec o;
      o.name = "o" + std::to_string(i);
      o.packets = Rate{n(1, 8), n(1, 10)};
      if (p(0.3)) o.bytes = Rate{n(50, 200), n(100, 3000)};
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
};

// ---- the test ----------------------------------------------------------------------

// The thread stays on one CPU: the cached clock, the hot source and the counters the
// model follows are per CPU.
class OneCpu {
 public:
  OneCpu() {
    sched_getaffinity(0, sizeof old_, &old_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    sched_setaffinity(0, sizeof one, &one);
  }
  ~OneCpu() { sched_setaffinity(0, sizeof old_, &old_); }
  OneCpu(const OneCpu&) = delete;
  OneCpu& operator=(const OneCpu&) = delete;

 private:
  cpu_set_t old_{};
};

std::string outcome(uint32_t reason) {
  return std::string(lv_reason_drops(reason) ? "DROP/" : "PASS/") + std::string(reason_name(reason));
}

struct Figures {
  uint64_t frames = 0, policies = 0, refused = 0, undecidable = 0, skipped_frames = 0;
  Counters by_reason{};  // of the policies compared to the end
};

TEST_F(ProgTest, DatapathAgreesWithTheModelOnRandomFramesAndPolicies) {
  const uint64_t seed = env_or("LEVEE_DIFF_SEED", 1);
  const uint64_t policies = env_or("LEVEE_DIFF_POLICIES", 500);
  const uint64_t frames = env_or("LEVEE_DIFF_FRAMES", 1'200'000);
  const uint64_t per_policy = std::max<uint64_t>(1, frames / std::max<uint64_t>(1, policies));
  OneCpu pin;
  Controller ctl(dp());
  Figures fig;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < policies; ++i) {
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
    Model model(pol, slot, clk, dp().control().seen_seed);
    Counters last = dp().counters();
    const uint64_t start = monotonic_ns();
    std::string where = "seed " + std::to_string(seed) + " policy " + std::to_string(i);
    uint64_t f = 0;
    for (; f < per_policy; ++f) {
      const Bytes frame = g.frame();
      Instant at{monotonic_ns(), 0, clk.tick_ns};
      const RunResult r = dp().run(frame);
      at.hi = monotonic_ns();
      ASSERT_EQ(r.err, 0) << where << " frame " << f << " " << hex(frame);
      const Counters now = dp().counters();
      uint32_t got = LV_REASON_MAX;
      for (uint32_t x = 0; x < LV_REASON_MAX; ++x)
        if (now[x].packets != last[x].packets) got = x;
      last = now;
      uint32_t want = 0;
      try {
        want = model.step(frame, at.hi - start, at);
      } catch (const Undecidable& u) {
        ++fig.undecidable;
        break;
      }
      ++fig.frames;
      const uint32_t verdict = lv_reason_drops(want) ? XDP_DROP : XDP_PASS;
      if (got != want || r.retval != verdict) {
        ADD_FAILURE() << where << " frame " << f << " (LEVEE_DIFF_SEED=" << seed << ")\n  frame " << hex(frame)
                      << "\n  datapath " << (r.retval == XDP_DROP ? "DROP" : "PASS") << " reason "
                      << (got < LV_REASON_MAX ? reason_name(got) : "?") << "\n  model    " << outcome(want);
        return;
      }
    }
    fig.skipped_frames += per_policy - f;
    // Whole-policy counters: per reason, per class, would-drop.
    const Totals& t = model.totals();
    const Counters got = dp().counters();
    const auto by_class = dp().class_counters();
    Counters would{};
    for (const lv_percpu& pc : dp().percpu())
      for (uint32_t x = 0; x < LV_REASON_MAX; ++x) {
        would[x].packets += pc.would[x].packets;
        would[x].bytes += pc.would[x].bytes;
      }
    for (uint32_t x = 0; x < LV_REASON_MAX; ++x) {
      if (f < per_policy) break;  // stopped early: the last frame is counted but not modelled
      fig.by_reason[x].packets += t.by_reason[x].packets;
      EXPECT_EQ(got[x].packets, t.by_reason[x].packets) << where << " reason " << reason_name(x);
      EXPECT_EQ(got[x].bytes, t.by_reason[x].bytes) << where << " reason " << reason_name(x);
      EXPECT_EQ(would[x].packets, t.would[x].packets) << where << " would " << reason_name(x);
    }
    for (uint32_t c = 0; c < LV_MAX_CLASSES && f == per_policy; ++c) {
      EXPECT_EQ(by_class[c].passed.packets, t.by_class[c].passed.packets) << where << " class " << c;
      EXPECT_EQ(by_class[c].dropped.bytes, t.by_class[c].dropped.bytes) << where << " class " << c;
    }
    if (HasFailure()) return;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "difftest: seed %llu, %llu policies (%llu refused by validate), %llu frames agreed, %llu policies "
      "stopped undecidable (%llu frames not run), %.1f s\n",
      static_cast<unsigned long long>(seed), static_cast<unsigned long long>(fig.policies),
      static_cast<unsigned long long>(fig.refused), static_cast<unsigned long long>(fig.frames),
      static_cast<unsigned long long>(fig.undecidable), static_cast<unsigned long long>(fig.skipped_frames), secs);
  std::printf("difftest: by reason %s\n", describe(fig.by_reason).c_str());
  EXPECT_GE(fig.policies, policies * 99 / 100) << "the generator's policies are refused";
  // What the generator is for: every level decides some frames.
  for (uint32_t r : {LV_R_RATE, LV_R_BYTES, LV_R_BAN, LV_R_NETWORK, LV_R_ADMISSION, LV_R_ALLOW, LV_R_DENY})
    EXPECT_GE(fig.by_reason[r].packets, frames / 1000) << reason_name(r) << " decided too few frames";
  // A floor on what was compared: a model that stopped early on every policy would
  // agree with anything.
  EXPECT_GE(fig.frames, frames * 3 / 4) << "too few frames decided and compared";
}

}  // namespace
}  // namespace levee::progtest
