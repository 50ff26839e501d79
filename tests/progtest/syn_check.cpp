// syn_check.cpp - the SYN path's differential bench (syn_check.hpp), and the list of
// where levee answers otherwise than it must.
#include "syn_check.hpp"

#include <linux/bpf.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include <fmt/format.h>

#include "datapath/local_routes.hpp"
#include "syncookie.h"

namespace levee::progtest {

using model::SynRule;

const std::vector<SynKnown> kKnownDisagreements = {
    // None: each one the test found is fixed (an IPv4 header sum, fragments, a late
    // hop-by-hop header, a source of the host's own, link-local addresses, an MSS of 0).
};

const SynKnown* known(model::SynRule rule, const Outcome& levee, bool bytes) {
  for (const SynKnown& k : kKnownDisagreements)
    if (k.rule == rule && k.levee == levee && k.bytes == bytes) return &k;
  return nullptr;
}

std::string SynTally::report() const {
  std::string s = fmt::format(
      "{} frames: {} compared ({} SYN-ACKs byte by byte, {} to a TCP header past byte 118, the deepest at {}), {} "
      "known disagreements, {} undecided; {} flag bytes, {} data offsets, NS {}",
      frames, compared, answers, deep, deepest, known, undecided, flags.count(), doffs.count(),
      ns.all() ? "both" : "one");
  for (const auto& [rule, n] : by_rule) s += fmt::format("\n  {:>26}: {}", model::rule_name(rule), n);
  for (const auto& [what, n] : known_by) s += fmt::format("\n  known: {}: {}", what, n);
  for (const auto& [what, n] : failed_by) s += fmt::format("\n  FAILED: {}: {}", what, n);
  return s;
}

namespace {

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * LV_NSEC_PER_SEC + static_cast<uint64_t>(ts.tv_nsec);
}

std::string hex(std::span<const uint8_t> b) {
  std::string s;
  for (uint8_t x : b) s += fmt::format("{:02x}", x);
  return s;
}

}  // namespace

SynBench::SynBench() {
  net_.emplace(std::vector<std::string>{"198.19.0.1", "2001:db8:ffff::1"});
  net_->listen(world_.listen_port);
  dp_.emplace();
  ctl_.emplace(*dp_);
  install(SynAuth::Cookie);
  auto local = local_routes();
  if (!local || !sync_local(dp_->local_fd(), *local))
    throw std::runtime_error("cannot write the namespace's local addresses into lv_local");
  ctl_->map().set_local_known();
  lv_control c = dp_->control();
  c.cookie_key[0][0] = 0x0123456789abcdefULL;
  c.cookie_key[0][1] = 0xfedcba9876543210ULL;
  c.cookie_key[1][0] = 0x1357924680acebdfULL;
  c.cookie_key[1][1] = 0x2468013579bdfaceULL;
  c.mss4 = setting_.mss4;
  c.mss6 = setting_.mss6;
  dp_->write_control(c);
  map_.emplace(*dp_);
  before_ = dp_->counters();
}

SynBench::~SynBench() = default;

void SynBench::install(SynAuth mode) {
  Policy p;
  ClassSpec syn = class_spec("syn", on({Proto::Tcp}, {{world_.listen_port, world_.closed_port}}), {100, 10});
  syn.syn_auth = mode;
  p.classes = {syn, class_spec("rest", Match{}, {100, 10})};
  ctl_->publish(p);
  dp_->edit_policy([](lv_policy& pol) {
    pol.answer.per_network.cost = 0;
    pol.answer.cap_per_cpu.cost = 0;
    for (lv_class& c : pol.classes) {
      c.pkt.cost = c.bytes.cost = 0;
      c.flags &= LV_CLASS_SYN_AUTH | LV_CLASS_SYN_RESET;
    }
  });
}

void SynBench::set_control(bool handoff, uint32_t tcp_off) {
  __atomic_store_n(&(*map_)->handoff, handoff ? 1 : 0, __ATOMIC_RELAXED);
  __atomic_store_n(&(*map_)->tcp_off, tcp_off, __ATOMIC_RELAXED);
}

model::CookieOracle SynBench::oracle() {
  model::CookieOracle o;
  struct Keys {
    __u64 k[2][2];
  } keys{};
  std::memcpy(keys.k, (*map_)->cookie_key, sizeof keys.k);
  o.wide = [keys](const lv_cookie_in& in, uint32_t cookie) -> std::optional<uint64_t> {
    __u64 wide = 0;
    if (!lv_cookie_check_wide(&in, cookie, now_ns(), keys.k, nullptr, &wide)) return std::nullopt;
    return wide;
  };
  o.tsval = [](uint64_t wide, uint32_t tsval) { return lv_cookie_ts_echoed(wide, tsval, now_ns()) != 0; };
  return o;
}

// The frame through the program: its verdict and the one reason counted (else
// LV_REASON_MAX), from the counters' difference.
Outcome SynBench::observe(const model::Frame& f, RunResult& r) {
  r = dp_->run_out(f);
  const Counters after = dp_->counters();
  Outcome got{r.retval, LV_REASON_MAX};
  int moved = 0;
  for (uint32_t i = 0; i < LV_REASON_MAX; ++i)
    if (after[i].packets != before_[i].packets && moved++ == 0) got.reason = i;
  before_ = after;
  if (r.err || moved != 1) got.reason = LV_REASON_MAX;
  if (got.reason == LV_R_VERIFIED || got.reason == LV_R_PROXIED) {
    dp_->reset_state();  // a retry pass or a mark: the next frames must find none
    before_ = dp_->counters();
  }
  return got;
}

// The link-local hole leaves its wrong word on the destination in the CPU's memory
// (lv_percpu.where, LV_SYN_WHERE_NS): the next SYNs to that address and port, from any
// source, would be answered too. The bench starts each frame from a clean memory.
void SynBench::forget_where() {
  dp_->put_percpu(lv_percpu{});
  before_ = dp_->counters();
}

std::string SynBench::check(const model::Frame& f, const model::SynExpect& want, const model::CookieOracle& o,
                            SynTally& t) {
  ++t.frames;
  RunResult r;
  const Outcome got = observe(f, r);
  if (!want.decided) {
    ++t.undecided;
    return "";
  }
  ++t.by_rule[want.rule];
  if (want.l4) {
    t.flags.set(f[want.l4 + 13]);
    t.doffs.set(f[want.l4 + 12] >> 4);
    t.ns.set(f[want.l4 + 12] & 1);
  }
  const Outcome must{want.verdict, want.reason};
  std::string why;
  if (!(got == must))
    why = fmt::format("levee {}/{}, must {}/{}", got.verdict, reason_name(got.reason), must.verdict,
                      reason_name(must.reason));
  else if (want.answer)
    why = model::synack_differs(*want.answer, r.out, o);
  if (!why.empty()) {
    if (const SynKnown* k = known(want.rule, got, got == must)) {
      ++t.known_by[fmt::format("{}: levee {}, must {}", model::rule_name(k->rule), reason_name(got.reason), k->must)];
      ++t.known;
      if (k->rule == SynRule::NotOursLinkLocal) forget_where();
      return "";
    }
  }
  if (!why.empty()) {
    ++t.failures;
    ++t.failed_by[fmt::format("{}: levee {}", model::rule_name(want.rule), reason_name(got.reason))];
    return fmt::format("rule {}: {}\n  frame {}{}", model::rule_name(want.rule), why, hex(f),
                       r.retval == XDP_TX ? "\n  sent  " + hex(r.out) : "");
  }
  ++t.compared;
  if (want.answer) {
    ++t.answers;
    t.deep += want.answer->syn_l4 > 118 ? 1 : 0;
    t.deepest = std::max<uint64_t>(t.deepest, want.answer->syn_l4);
  }
  return "";
}

SynTally SynBench::run(uint64_t seed, uint64_t n, const model::SynSetting& s, std::vector<std::string>* failed) {
  model::Draw d(seed);
  const model::CookieOracle o = oracle();
  SynTally t;
  for (uint64_t i = 0; i < n; ++i) {
    const model::Frame f = model::hostile_syn(d, world_);
    std::string why = check(f, model::syn_expect(f, world_, s, o), o, t);
    if (!why.empty() && failed && failed->size() < 10) failed->push_back(std::move(why));
  }
  return t;
}

}  // namespace levee::progtest
