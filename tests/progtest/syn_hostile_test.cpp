// syn_hostile_test.cpp - the differential test of the SYN path: hostile frames
// (tests/model/syn_frames.hpp: extension-header chains to the frame's end, every flag
// byte, data offsets 0 to 15, bad checksums, group and foreign addresses, tags, IPv4
// options and fragments) through the real XDP program (BPF_PROG_TEST_RUN) in a network
// namespace of the test's own with a listener (HostNetns), under a TCP class with
// syn_auth, by proxy (the tc program's hand-off on), by reset for want of it ("cookie"
// without the tc program) and in a "reset" class; each frame's verdict and reason, and
// for a SYN-ACK every byte of it, compared with the reference (tests/model/
// syn_model.hpp), which says what must be answered. The namespace's option sysctls are
// set and the answers must follow them; one address opening many connections at once
// gets an answer on each port.
//
// Where levee and the reference disagree and levee is the one that is wrong, the case is
// in kKnownDisagreements (each says what must happen instead): counted apart, never as
// agreement, so the test stays green until bpf/ is fixed, and a floor bounds how many
// frames were compared. LEVEE_SYN_HOSTILE_SEED (default 1) and
// LEVEE_SYN_HOSTILE_FRAMES (default 200,000 per setting, three settings) choose them.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "datapath.hpp"
#include "datapath/handoff.hpp"
#include "datapath/local_routes.hpp"
#include "host_netns.hpp"
#include "syn_model.hpp"

namespace levee::progtest {
namespace {

using model::SynRule;

// Where levee answers otherwise than it must (found by this test): the rule that
// decides, what levee does instead. Each is a hole to fix in bpf/.
struct Known {
  SynRule rule;
  Outcome levee;
  const char* must;
};
constexpr Outcome kAnswered{XDP_TX, LV_R_CHALLENGED};
const std::vector<Known> kKnownDisagreements = {
    // RFC 1122 3.2.1.2: a host silently discards a datagram whose header checksum is
    // wrong; levee reads no IPv4 header checksum and answers. Must: drop, malformed.
    {SynRule::Ipv4HeaderChecksum, kAnswered, "drop (malformed)"},
    // A fragment of a datagram not yet whole (IPv4 MF; IPv6 fragment header with M) is
    // no segment yet: the stack answers only the reassembled datagram (RFC 791, RFC 8200
    // 4.5), and its checksum covers the whole. levee answers the first fragment. Must:
    // not answered (drop, malformed).
    {SynRule::Fragment, kAnswered, "drop (malformed)"},
    // RFC 8200 4.1: a hop-by-hop header anywhere but first makes the stack discard the
    // packet (Linux: parameter problem); levee walks it and answers. Must: malformed.
    {SynRule::HopByHopNotFirst, kAnswered, "drop (malformed)"},
    // A SYN from one of the host's own addresses: a martian source (RFC 1812 5.3.7; Linux
    // drops it, and would answer itself, never the wire). levee answers, on the wire, to
    // the host's own address. Must: drop, martian.
    {SynRule::SourceIsHost, kAnswered, "drop (martian)"},
    // A link-local source or destination: bpf_fib_lookup returns NOT_FWDED for any
    // link-local address before it looks at forwarding, and syn_where.h takes NOT_FWDED
    // for "the host's own", so lv_local is never asked. A SYN to a link-local address the
    // host does not own, or from fe80::/10 to any address, is answered (or, to a port
    // without a listener, no_listener; with a bad checksum, malformed). Must: martian.
    {SynRule::NotOursLinkLocal, kAnswered, "drop (martian)"},
    {SynRule::NotOursLinkLocal, Outcome{XDP_DROP, LV_R_NO_LISTENER}, "drop (martian)"},
    {SynRule::NotOursLinkLocal, Outcome{XDP_DROP, LV_R_MALFORMED}, "drop (martian)"},
};

uint64_t env_or(const char* name, uint64_t def) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : def;
}

std::string hex(std::span<const uint8_t> b) {
  std::string s;
  for (uint8_t x : b) s += fmt::format("{:02x}", x);
  return s;
}

uint32_t be32(std::span<const uint8_t> b, size_t off) {
  return uint32_t{b[off]} << 24 | uint32_t{b[off + 1]} << 16 | uint32_t{b[off + 2]} << 8 | b[off + 3];
}

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * LV_NSEC_PER_SEC + static_cast<uint64_t>(ts.tv_nsec);
}

// What came of a run of frames.
struct Tally {
  uint64_t frames = 0, compared = 0, answers = 0, undecided = 0, known = 0, failures = 0;
  uint64_t deep = 0, deepest = 0;  // SYN-ACKs to a SYN whose TCP header was past byte 118
  std::map<SynRule, uint64_t> by_rule;
  std::map<std::string, uint64_t> known_by, failed_by;
  std::string report() const {
    std::string s = fmt::format(
        "{} frames: {} compared ({} SYN-ACKs byte by byte, {} to a TCP header past byte 118, the deepest at {}), {} "
        "known disagreements, {} undecided",
        frames, compared, answers, deep, deepest, known, undecided);
    for (const auto& [rule, n] : by_rule) s += fmt::format("\n  {:>22}: {}", model::rule_name(rule), n);
    for (const auto& [what, n] : known_by) s += fmt::format("\n  known: {}: {}", what, n);
    for (const auto& [what, n] : failed_by) s += fmt::format("\n  FAILED: {}: {}", what, n);
    return s;
  }
};

class SynHostile : public ProgTest {
 protected:
  void SetUp() override {
    ProgTest::SetUp();
    if (IsSkipped()) return;
    net_.emplace(std::vector<std::string>{"198.19.0.1", "2001:db8:ffff::1"});
    net_->listen(world_.listen_port);
    ctl_.emplace(dp());
    install(SynAuth::Cookie);
    auto local = local_routes();
    ASSERT_TRUE(local) << local.error().message();
    ASSERT_TRUE(sync_local(dp().local_fd(), *local));
    ctl_->map().set_local_known();
    lv_control c = dp().control();
    c.cookie_key[0][0] = 0x0123456789abcdefULL;
    c.cookie_key[0][1] = 0xfedcba9876543210ULL;
    c.cookie_key[1][0] = 0x1357924680acebdfULL;
    c.cookie_key[1][1] = 0x2468013579bdfaceULL;
    c.mss4 = setting_.mss4;
    c.mss6 = setting_.mss6;
    dp().write_control(c);
  }
  void TearDown() override {
    if (net_)
      net_->sh(
          "sysctl -qw net.ipv4.tcp_timestamps=1 net.ipv4.tcp_sack=1 net.ipv4.tcp_window_scaling=1 "
          "net.ipv4.tcp_syncookies=1");
  }
  // The class "syn" (the world's two ports) with `mode`, and every other frame in a
  // class without limits; no answer rate (the reference has no clock): every frame's
  // fate is the SYN path's alone.
  void install(SynAuth mode) {
    Policy p;
    ClassSpec syn = class_spec("syn", on({Proto::Tcp}, {{world_.listen_port, world_.closed_port}}), {100, 10});
    syn.syn_auth = mode;
    p.classes = {syn, class_spec("rest", Match{}, {100, 10})};
    ctl_->publish(p);
    dp().edit_policy([](lv_policy& pol) {
      pol.answer.per_network.cost = 0;
      pol.answer.cap_per_cpu.cost = 0;
      for (lv_class& c : pol.classes) {
        c.pkt.cost = c.bytes.cost = 0;
        c.flags &= LV_CLASS_SYN_AUTH | LV_CLASS_SYN_RESET;
      }
    });
  }
  void set_handoff(bool on) {
    lv_control c = dp().control();
    c.handoff = on ? 1 : 0;
    dp().write_control(c);
  }
  model::CookieOracle oracle() {
    const lv_control c = dp().control();
    model::CookieOracle o;
    o.wide = [keys = c](const lv_cookie_in& in, uint32_t cookie) -> std::optional<uint64_t> {
      __u64 wide = 0;
      if (!lv_cookie_check_wide(&in, cookie, now_ns(), keys.cookie_key, nullptr, &wide)) return std::nullopt;
      return wide;
    };
    o.tsval = [](uint64_t wide, uint32_t tsval) { return lv_cookie_ts_echoed(wide, tsval, now_ns()) != 0; };
    return o;
  }
  // One frame through the program: its verdict and the one reason counted (else
  // LV_REASON_MAX), from the counters' difference with `before`, which it moves on.
  Outcome observe(const model::Frame& f, RunResult& r, Counters& before) {
    r = dp().run_out(f);
    const Counters after = dp().counters();
    Outcome got{r.retval, LV_REASON_MAX};
    int moved = 0;
    for (uint32_t i = 0; i < LV_REASON_MAX; ++i)
      if (after[i].packets != before[i].packets && moved++ == 0) got.reason = i;
    before = after;
    if (r.err || moved != 1) got.reason = LV_REASON_MAX;
    if (got.reason == LV_R_VERIFIED || got.reason == LV_R_PROXIED) {
      dp().reset_state();  // a retry pass or a mark: the next frames must find none
      before = dp().counters();
    }
    return got;
  }
  // One frame through the program and the reference; a difference is a failure, unless
  // it is a known disagreement.
  void check(const model::Frame& f, const model::SynExpect& want, const model::CookieOracle& o, Tally& t,
             Counters& before) {
    ++t.frames;
    RunResult r;
    const Outcome got = observe(f, r, before);
    if (!want.decided) return void(++t.undecided);
    ++t.by_rule[want.rule];
    const Outcome must{want.verdict, want.reason};
    for (const Known& k : kKnownDisagreements) {
      if (k.rule == want.rule && got == k.levee && !(got == must)) {
        ++t.known_by[fmt::format("{}: levee {}, must {}", model::rule_name(k.rule), reason_name(got.reason), k.must)];
        return void(++t.known);
      }
    }
    std::string why;
    if (!(got == must))
      why = fmt::format("levee {}/{}, must {}/{}", got.verdict, reason_name(got.reason), must.verdict,
                        reason_name(must.reason));
    else if (want.answer)
      why = model::synack_differs(*want.answer, r.out, o);
    if (why.empty()) {
      ++t.compared;
      if (!want.answer) return;
      ++t.answers;
      t.deep += want.answer->syn_l4 > 118 ? 1 : 0;
      t.deepest = std::max<uint64_t>(t.deepest, want.answer->syn_l4);
      return;
    }
    ++t.failed_by[fmt::format("{}: levee {}", model::rule_name(want.rule), reason_name(got.reason))];
    if (++t.failures <= 10)
      ADD_FAILURE() << "rule " << model::rule_name(want.rule) << ": " << why << "\n  frame " << hex(f)
                    << (r.retval == XDP_TX ? "\n  sent  " + hex(r.out) : "");
  }
  // `n` frames from `seed` under `s`.
  Tally run(uint64_t seed, uint64_t n, const model::SynSetting& s) {
    model::Draw d(seed);
    const model::CookieOracle o = oracle();
    Tally t;
    Counters before = dp().counters();
    for (uint64_t i = 0; i < n; ++i) {
      const model::Frame f = model::hostile_syn(d, world_);
      check(f, model::syn_expect(f, world_, s, o), o, t, before);
    }
    return t;
  }
  model::SynWorld world_;
  model::SynSetting setting_;
  std::optional<pkt::HostNetns> net_;
  std::optional<Controller> ctl_;
};

// Every frame gets what the reference says, in each way levee answers: by proxy, by
// reset for want of the tc program, and in a class that asks for reset.
TEST_F(SynHostile, EveryFrameIsAnsweredAsTheModelSays) {
  const uint64_t seed = env_or("LEVEE_SYN_HOSTILE_SEED", 1), n = env_or("LEVEE_SYN_HOSTILE_FRAMES", 200'000);
  uint64_t compared = 0, answers = 0;
  struct Way {
    const char* name;
    SynAuth mode;
    bool handoff;
  };
  for (uint64_t i = 0;
       const Way& way : {Way{"proxy", SynAuth::Proxy, true}, Way{"cookie without tc", SynAuth::Cookie, false},
                         Way{"reset class", SynAuth::Reset, true}}) {
    SCOPED_TRACE(way.name);
    install(way.mode);
    set_handoff(way.handoff);
    model::SynSetting s = setting_;
    s.proxy = way.handoff && way.mode != SynAuth::Reset;
    const Tally t = run(seed + i++, n, s);
    std::printf("SynHostile %s: %s\n", way.name, t.report().c_str());
    compared += t.compared;
    answers += t.answers;
    EXPECT_EQ(t.failures, 0u);
    EXPECT_GE(t.compared, t.frames * 85 / 100) << "a floor on the frames compared";
    EXPECT_GE(t.answers, t.frames / 20) << "SYN-ACKs compared byte by byte";
    EXPECT_GE(t.deep, t.answers / 50) << "answers to a TCP header past byte 118";
  }
  EXPECT_GE(compared, 3 * n * 85 / 100);
  std::printf("SynHostile: %lu frames compared, %lu of them SYN-ACKs byte by byte\n",
              static_cast<unsigned long>(compared), static_cast<unsigned long>(answers));
}

// The options the namespace's sysctls turn off are not offered, as levee run reads
// them (read_tcp_sysctls, tcp_off_of); with tcp_syncookies 0 the kernel takes no
// hand-off, and levee answers by reset.
TEST_F(SynHostile, TheAnswersFollowTheNamespacesSysctls) {
  install(SynAuth::Cookie);
  struct Case {
    const char* sysctls;
    uint32_t off;
    bool proxy;
  };
  const Case cases[] = {
      {"net.ipv4.tcp_timestamps=0", LV_TCP_OFF_TS, true},
      {"net.ipv4.tcp_sack=0", LV_TCP_OFF_SACK, true},
      {"net.ipv4.tcp_window_scaling=0", LV_TCP_OFF_WSCALE, true},
      {"net.ipv4.tcp_timestamps=0 net.ipv4.tcp_sack=0 net.ipv4.tcp_window_scaling=0",
       LV_TCP_OFF_TS | LV_TCP_OFF_SACK | LV_TCP_OFF_WSCALE, true},
      {"net.ipv4.tcp_syncookies=0", 0, false},
  };
  uint64_t seed = env_or("LEVEE_SYN_HOSTILE_SEED", 1) + 100;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sysctls);
    net_->sh(
        "sysctl -qw net.ipv4.tcp_timestamps=1 net.ipv4.tcp_sack=1 net.ipv4.tcp_window_scaling=1 "
        "net.ipv4.tcp_syncookies=1");
    net_->sh(std::string("sysctl -qw ") + c.sysctls);
    const TcpSysctls sys = read_tcp_sysctls();
    ASSERT_EQ(tcp_off_of(sys), c.off) << "the namespace's own sysctls, as levee run reads them";
    ASSERT_EQ(syncookies_on(sys), c.proxy);
    lv_control ctl = dp().control();
    ctl.tcp_off = tcp_off_of(sys);
    ctl.handoff = syncookies_on(sys) ? 1 : 0;
    dp().write_control(ctl);
    model::SynSetting s = setting_;
    s.tcp_off = c.off;
    s.proxy = c.proxy;
    const Tally t = run(seed++, 20'000, s);
    std::printf("SynHostile %s: %s\n", c.sysctls, t.report().c_str());
    EXPECT_EQ(t.failures, 0u);
    EXPECT_GE(t.answers, 1'000u);
  }
}

// One address opening many connections at once (a browser, a pool): each SYN is
// answered, to its own port, with its own cookie.
TEST_F(SynHostile, ParallelSynsFromOneAddressAreEachAnsweredOnTheirOwnPort) {
  set_handoff(true);
  for (const bool proxy : {true, false}) {
    install(proxy ? SynAuth::Proxy : SynAuth::Reset);
    model::SynSetting s = setting_;
    s.proxy = proxy;
    const model::CookieOracle o = oracle();
    Tally t;
    Counters before = dp().counters();
    for (const bool v6 : {false, true}) {
      std::set<uint32_t> cookies;
      for (uint16_t port = 40000; port < 40032; ++port) {
        const model::Frame f = model::linux_syn(world_, v6, 77, port, 1000);
        const model::SynExpect want = model::syn_expect(f, world_, s, o);
        ASSERT_TRUE(want.answer) << model::rule_name(want.rule);
        check(f, want, o, t, before);
        const RunResult r = dp().run_out(f);
        ASSERT_GE(r.out.size(), want.answer->l4 + 12);
        cookies.insert(be32(r.out, want.answer->l4 + (proxy ? 4 : 8)));
      }
      EXPECT_EQ(cookies.size(), 32u) << "a cookie of each connection's own";
    }
    EXPECT_EQ(t.compared, 64u) << t.report();
    EXPECT_EQ(t.answers, 64u);
    EXPECT_EQ(dp().state_count(), 0u) << "answers keep nothing";
  }
}

}  // namespace
}  // namespace levee::progtest
