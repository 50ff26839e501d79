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
// in kKnownDisagreements (syn_check.cpp; each says what must happen instead): counted
// apart, never as agreement, so the test stays green until bpf/ is fixed, and a floor
// bounds how many frames were compared. LEVEE_SYN_HOSTILE_SEED (default 1) and
// LEVEE_SYN_HOSTILE_FRAMES (default 200,000 per setting, three settings) choose them.
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "datapath/handoff.hpp"
#include "syn_check.hpp"

namespace levee::progtest {
namespace {

uint64_t env_or(const char* name, uint64_t def) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : def;
}

uint32_t be32(std::span<const uint8_t> b, size_t off) {
  return uint32_t{b[off]} << 24 | uint32_t{b[off + 1]} << 16 | uint32_t{b[off + 2]} << 8 | b[off + 3];
}

class SynHostile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "program tests need root (BPF_PROG_TEST_RUN)";
    bench_.emplace();
  }
  // `n` frames from `seed` under `s`, each difference a failure.
  SynTally run(uint64_t seed, uint64_t n, const model::SynSetting& s, const std::string& name) {
    std::vector<std::string> failed;
    SynTally t = bench_->run(seed, n, s, &failed);
    for (const std::string& why : failed) ADD_FAILURE() << why;
    std::printf("SynHostile %s: %s\n", name.c_str(), t.report().c_str());
    return t;
  }
  std::optional<SynBench> bench_;
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
    bench_->install(way.mode);
    bench_->set_control(way.handoff, 0);
    model::SynSetting s = bench_->setting();
    s.proxy = way.handoff && way.mode != SynAuth::Reset;
    const SynTally t = run(seed + i++, n, s, way.name);
    compared += t.compared;
    answers += t.answers;
    EXPECT_EQ(t.failures, 0u);
    EXPECT_GE(t.compared, t.frames * 85 / 100) << "a floor on the frames compared";
    EXPECT_GE(t.answers, t.frames / 20) << "SYN-ACKs compared byte by byte";
    EXPECT_GE(t.deep, t.answers / 50) << "answers to a TCP header past byte 118";
    EXPECT_TRUE(t.flags.all()) << "every flag byte";
    EXPECT_TRUE(t.doffs.all()) << "every data offset";
    EXPECT_TRUE(t.ns.all()) << "NS set and clear";
  }
  EXPECT_GE(compared, 3 * n * 85 / 100);
  std::printf("SynHostile: %lu frames compared, %lu of them SYN-ACKs byte by byte\n",
              static_cast<unsigned long>(compared), static_cast<unsigned long>(answers));
}

// The options the namespace's sysctls turn off are not offered, as levee run reads
// them (read_tcp_sysctls, tcp_off_of); with tcp_syncookies 0 the kernel takes no
// hand-off, and levee answers by reset.
TEST_F(SynHostile, TheAnswersFollowTheNamespacesSysctls) {
  bench_->install(SynAuth::Cookie);
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
    bench_->net().sh(
        "sysctl -qw net.ipv4.tcp_timestamps=1 net.ipv4.tcp_sack=1 net.ipv4.tcp_window_scaling=1 "
        "net.ipv4.tcp_syncookies=1");
    bench_->net().sh(std::string("sysctl -qw ") + c.sysctls);
    const TcpSysctls sys = read_tcp_sysctls();
    ASSERT_EQ(tcp_off_of(sys), c.off) << "the namespace's own sysctls, as levee run reads them";
    ASSERT_EQ(syncookies_on(sys), c.proxy);
    bench_->set_control(syncookies_on(sys), tcp_off_of(sys));
    model::SynSetting s = bench_->setting();
    s.tcp_off = c.off;
    s.proxy = c.proxy;
    const SynTally t = run(seed++, 20'000, s, c.sysctls);
    EXPECT_EQ(t.failures, 0u);
    EXPECT_GE(t.answers, 1'000u);
  }
}

// One address opening many connections at once (a browser, a pool): each SYN is
// answered, to its own port, with its own cookie.
TEST_F(SynHostile, ParallelSynsFromOneAddressAreEachAnsweredOnTheirOwnPort) {
  bench_->set_control(true, 0);
  const model::SynWorld& w = bench_->world();
  for (const bool proxy : {true, false}) {
    bench_->install(proxy ? SynAuth::Proxy : SynAuth::Reset);
    model::SynSetting s = bench_->setting();
    s.proxy = proxy;
    const model::CookieOracle o = bench_->oracle();
    SynTally t;
    for (const bool v6 : {false, true}) {
      std::set<uint32_t> cookies;
      for (uint16_t port = 40000; port < 40032; ++port) {
        const model::Frame f = model::linux_syn(w, v6, 77, port, 1000);
        const model::SynExpect want = model::syn_expect(f, w, s, o);
        ASSERT_TRUE(want.answer) << model::rule_name(want.rule);
        EXPECT_EQ(bench_->check(f, want, o, t), "");
        const RunResult r = bench_->dp().run_out(f);
        ASSERT_GE(r.out.size(), want.answer->l4 + 12);
        cookies.insert(be32(r.out, want.answer->l4 + (proxy ? 4 : 8)));
      }
      EXPECT_EQ(cookies.size(), 32u) << "a cookie of each connection's own";
    }
    EXPECT_EQ(t.compared, 64u) << t.report();
    EXPECT_EQ(t.answers, 64u);
    EXPECT_EQ(bench_->dp().state_count(), 0u) << "answers keep nothing";
  }
}

}  // namespace
}  // namespace levee::progtest
