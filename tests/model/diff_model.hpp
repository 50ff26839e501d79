// diff_model.hpp - the differential test's model of the datapath
// (tests/progtest/difftest_test.cpp): what the XDP program decides for a frame at the
// clock reading it took, and the state it leaves, written from docs/ARCHITECTURE.md and
// docs/CONFIG.md, not from bpf/. diff_model.cpp holds the pipeline and the limits;
// diff_drops.cpp hot sources, events and bans; diff_autopilot.cpp the autopilot
// (admission, probation, the network watch). One CPU: the per-CPU state (hot slots, leases, the watch's tick, what
// the CPU remembers of each class's autopilot) is that CPU's.
#ifndef LEVEE_TESTS_MODEL_DIFF_MODEL_HPP
#define LEVEE_TESTS_MODEL_DIFF_MODEL_HPP

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "core/clock.hpp"
#include "levee_abi.h"
#include "parse_model.hpp"
#include "policy/policy.hpp"

namespace levee::progtest::diff {

using KeyBytes = std::array<uint8_t, sizeof(lv_key)>;
inline KeyBytes bytes_of(const lv_key& k) {
  KeyBytes b{};
  std::memcpy(b.data(), &k, sizeof k);
  return b;
}

// The program read no fine clock for a frame the model says needs one.
struct NoClock {};

// The GCRA, written from its definition (docs/ARCHITECTURE.md, "The limiter"): the
// state is the earliest time the next packet conforms; a packet at t conforms when
// t >= ready, and passing it makes ready' = max(ready + cost, t - tau + cost). Times
// are CLOCK_MONOTONIC ns, compared as signed differences.
inline bool conforms(uint64_t ready, uint64_t t) { return static_cast<int64_t>(t - ready) >= 0; }
inline uint64_t after(uint64_t ready, uint64_t t, uint64_t cost, uint64_t tau) {
  const uint64_t queued = ready + cost, full = t - tau + cost;
  return static_cast<int64_t>(queued - full) > 0 ? queued : full;
}
inline bool later(uint64_t a, uint64_t b) { return static_cast<int64_t>(a - b) > 0; }

// One lv_state entry (a source's, on probation or not, or a network's): the ready times
// of its packet and byte limits (0 where the limit has no cost, as the datapath leaves
// them).
struct LimState {
  uint64_t ready = 0, ready_b = 0;
  uint64_t passed = 0, dropped = 0;  // display counts: packets in the low 32 bits, bytes in the high
  uint64_t born = 0;                 // when it got state (on probation too)
  bool refused = false;              // refused since its last pass: the next pass is a refill
};

// A network the autopilot watches (an LV_KEY_WATCH entry of lv_state, struct lv_watch).
struct Watch {
  uint64_t ready = 0, escalated = 0, last_over = 0, dropped = 0;
  uint64_t runup = 0;  // its last sample that found its limit unused
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

// What the CPUs of a class share (lv_shared): the admission budget (the autopilot's
// threshold in a class with it), the class total's GCRAs, the autopilot's state and
// its counts.
struct Shared {
  uint64_t admit = 0, total = 0, total_b = 0;
  uint64_t engaged = 0, last_over = 0, over_since = 0, threshold_cost = 0, newcomer = 0;
  uint64_t escalated_until = 0, period = 0, arrivals = 0, period_arrivals = 0, baseline = 0;
  uint64_t admitted = 0, engagements = 0, escalations = 0, good_admitted = 0, probation = 0, promoted = 0;
};
// This CPU's lease of the class total.
struct Lease {
  uint64_t credit = 0, credit_b = 0;
};
// What this CPU remembers of a class's autopilot (lv_pilot), and of a network it refused
// as escalated (lv_watch_memo).
struct Pilot {
  uint64_t until = 0;
  bool engaged = false;
};
struct Memo {
  KeyBytes key{};
  uint64_t look = 0, pending = 0;
};

// A list entry as the operator wrote it, its expiry on the datapath's clock (0: never).
struct Listed {
  Cidr cidr;
  lv_list_kind kind = LV_LIST_DENY;
  uint32_t override_id = 0;
  uint64_t expires = 0;
};

struct Totals {
  std::array<lv_counter, LV_REASON_MAX> by_reason{};
  std::array<lv_counter, LV_REASON_MAX> would{};
  std::array<lv_class_counters, LV_MAX_CLASSES> by_class{};
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
  // The autopilot.
  uint64_t on_probation = 0;     // arrivals given state on probation
  uint64_t engaged = 0;          // classes engaged
  uint64_t released = 0;         // ... and released
  uint64_t promoted = 0;         // sources on probation promoted
  uint64_t refused_new = 0;      // arrivals refused by an engaged class (admission)
  uint64_t newcomers = 0;        // packets of sources on probation over their allowance
  uint64_t good_arrivals = 0;    // known-good arrivals an abnormal threshold let in
  uint64_t escalations = 0;      // networks escalated
  uint64_t escalated = 0;        // packets of an escalated network over its limit
  uint64_t escalated_new = 0;    // new sources of an escalated network refused before admission
  uint64_t escalated_runup = 0;  // sources that arrived with its run-up, refused
  uint64_t deescalated = 0;      // escalated networks released
  uint64_t learnt = 0;           // calm periods that moved a baseline
  void add(const Feats& o);
};

class Model {
 public:
  Model(const Policy& spec, const lv_policy& pol, const Clocks& clk, uint32_t seen_seed, unsigned cpus);

  // This CPU's per-CPU state as the test found it before the policy's first frame (the
  // watch's tick, the autopilot's memory of each class, the memo).
  void start(const lv_percpu& pc);
  // The reason for one frame, and its counts; `t`: the program's clock for it, if it
  // read one.
  uint32_t step(const std::vector<uint8_t>& frame, std::optional<uint64_t> t);
  // Is the frame a SYN into a class with SYN authentication (which the model leaves to
  // syn_hostile_test.cpp: the test does not send it)?
  bool answered_syn(const std::vector<uint8_t>& frame) const;
  // A source marked known-good (KnownGood::mark(), as levee run marks one that
  // behaved): its key as a source; it is known too (lv_seen).
  void mark_good(const lv_key& key);

  const Totals& totals() const { return t_; }
  const Feats& feats() const { return feats_; }
  const std::map<KeyBytes, LimState>& states() const { return state_; }
  const std::map<KeyBytes, Watch>& watches() const { return watch_; }
  const std::map<KeyBytes, Ban>& bans() const { return bans_; }
  const Lease& lease(uint32_t cid) const { return lease_[cid]; }
  const Shared& shared(uint32_t cid) const { return shared_[cid]; }
  const Pilot& pilot(uint32_t cid) const { return pilot_[cid]; }
  const std::array<Memo, LV_WATCH_MEMOS>& memos() const { return memo_; }
  uint64_t watch_tick() const { return tick_; }
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
  // An arrival that goes on through a state (not refused).
  static constexpr uint32_t kArrived = ~0u;

  // diff_model.cpp: the pipeline, the limits, bans, hot sources, events.
  uint32_t id_named(const std::string& name) const;
  size_t classify(const model::Parsed& p) const;
  static bool covers(const Cidr& c, const model::Parsed& p);
  static lv_key key_of(const model::Parsed& p, unsigned prefix4, unsigned prefix6, uint32_t cid, uint8_t flags,
                       uint8_t epoch);
  std::optional<Listed> list_verdict(const model::Parsed& p, uint64_t t) const;
  bool listed(const model::Parsed& p) const;
  uint32_t decide(Packet& k);
  uint32_t hot_rejects(const Packet& k, uint32_t slot);
  void event(const Packet& k, uint8_t type, uint32_t reason, uint32_t count, uint64_t value,
             const uint8_t* addr = nullptr);
  void event_every(const Packet& k, uint64_t& last, uint8_t type, uint32_t reason);
  uint32_t reject(const Packet& k, uint64_t ready, uint32_t reason, uint32_t hot_reason, LimState* st);
  KeyBytes ban_all_key(const Packet& k) const;
  KeyBytes ban_key(const Packet& k) const;
  uint32_t banned_elsewhere(const Packet& k);
  static uint64_t byte_cost(uint64_t len, const lv_limit& b);
  LimState& create(const KeyBytes& key, const lv_limit& p, const lv_limit& b, const Packet& k, bool source);
  uint32_t take(LimState& s, const lv_limit& p, const lv_limit& b, const Packet& k, uint32_t over_p, uint32_t over_b,
                uint64_t* hot_ready);
  static void refund(LimState& s, const lv_limit& p, const lv_limit& b, uint64_t len);
  static bool over(const LimState& s, const lv_limit& p, const lv_limit& b, uint64_t t, uint64_t* ready);
  KeyBytes net_key(const Packet& k) const;
  uint32_t total_take(const Packet& k, uint64_t* hot_ready);
  uint32_t levels_take(const Packet& k, uint64_t* hot_ready);
  uint32_t limit_above(const Packet& k, LimState& st, bool probation, bool fresh);
  uint32_t new_source(Packet& k, LimState*& st, bool& probation, bool& fresh);
  uint32_t limit(Packet& k);
  uint32_t limit_state(Packet& k, LimState& st, bool probation);
  static void push(const Packet& k, LimState& st, uint64_t until);
  uint32_t ban(const Packet& k, LimState& st, uint32_t r);
  uint32_t measure(const Packet& k, LimState& st, Ban& b);
  uint32_t mode(const Packet& k, uint32_t reason);
  uint32_t count(uint32_t reason, uint32_t cid, uint64_t len);

  // diff_autopilot.cpp: admission, probation, the network watch.
  bool auto_admits(const Packet& k) const;
  bool guards_admission(const Packet& k) const;
  uint64_t threshold_cost(const Packet& k) const;
  bool calm(const Packet& k) const;
  void note(const Packet& k);
  void guard_release(const Packet& k);
  void guard_count(const Packet& k);
  uint32_t guard_admit(const Packet& k, bool& charged, bool& probation);
  uint32_t refuse_unseen(const Packet& k);
  uint32_t newcomer_take(const Packet& k);
  uint32_t probation_find(const Packet& k, LimState*& st, bool& probation);
  uint32_t refused_arrival(const Packet& k, uint32_t r);
  bool sampled(const Packet& k);
  KeyBytes watch_key(const Packet& k) const;
  bool escalated(const Watch& w, const Packet& k) const;
  Memo& memo_of(const KeyBytes& wk);
  void watch_over(const Packet& k, Watch& w);
  void escalate(const Packet& k, Watch& w, const KeyBytes& wk);
  void deescalate(const Packet& k, Watch& w, const KeyBytes& wk);
  Watch* escalated_net(const Packet& k, KeyBytes& wk);
  uint32_t watch_refuse(const Packet& k, Watch& w, const KeyBytes& wk);
  uint32_t refuse_escalated(const Packet& k);
  void watch_refused(const Packet& k);
  uint32_t watch(const Packet& k, uint64_t born, bool sample, uint64_t* hot_ready);
  uint32_t levels_above(const Packet& k, uint64_t born, bool probation, uint64_t* hot_ready);
  void levels_refund(const Packet& k, bool probation);
  uint32_t seen_bits(const Packet& k) const;

  const Policy& spec_;
  lv_policy pol_;
  std::vector<uint32_t> ids_;  // by position in spec_.classes
  std::vector<Listed> lists_;
  const ClassSpec* ban_all_ = nullptr;  // a class that bans in every class: their prefix
  uint32_t seed_;
  uint64_t full_at_ = 0;  // 0: when_full = "evict"
  uint64_t created_ = 0;  // states made
  std::map<KeyBytes, LimState> state_;
  std::map<KeyBytes, Watch> watch_;
  std::map<KeyBytes, Ban> bans_;
  std::array<Shared, LV_MAX_CLASSES> shared_{};
  std::array<Lease, LV_MAX_CLASSES> lease_{};
  std::array<Pilot, LV_MAX_CLASSES> pilot_{};
  std::array<Memo, LV_WATCH_MEMOS> memo_{};
  uint64_t tick_ = 0;             // lv_percpu.watch_tick
  std::set<uint32_t> seen_;       // lv_seen's known half: sources with state as a source, known-good
  std::set<uint32_t> seen_prob_;  // ... and its probation half
  std::set<KeyBytes> good_;       // sources marked known-good
  std::map<uint32_t, Hot> hot_;
  uint32_t hot_last_ = 0;
  Totals t_;
  Feats feats_;
  std::vector<lv_event> events_;  // what the program sent, in order
  uint64_t events_ready_ = 0;     // the event rate's GCRA, all CPUs'
  uint64_t suppressed_ = 0;       // events this CPU did not send since it last sent one
  std::array<uint64_t, LV_MAX_CLASSES> admit_event_{}, full_event_{};
};

}  // namespace levee::progtest::diff

#endif  // LEVEE_TESTS_MODEL_DIFF_MODEL_HPP
