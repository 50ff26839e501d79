// synpath_fuzz.cpp - the SYN path of the real XDP program against the reference of what
// it must answer (tests/model/syn_model.hpp), on every input: the program loaded once
// in a network namespace of the harness's own with a listener, driven with
// BPF_PROG_TEST_RUN through the program tests' bench (tests/progtest/syn_check.hpp),
// under a TCP class with syn_auth = "cookie". The input's first draw picks the way
// levee answers (proxy, or reset for want of the tc program) and the option sysctls the
// namespace turned off; then either the rest of the input is the frame as it is, or it
// drives the hostile-frame generator (tests/model/syn_frames.hpp). Any difference in
// verdict, reason or a SYN-ACK's bytes, but the known disagreements
// (kKnownDisagreements), aborts with the frame in hex.
//
// Needs root (it loads a BPF program and makes a network namespace), as CI runs it.
// Without, or when the program cannot load, it stops at once with the reason: it never
// passes without having run.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "fuzz.hpp"
#include "syn_check.hpp"

namespace {

levee::progtest::SynBench& bench() {
  static levee::progtest::SynBench* b = [] {
    if (geteuid() != 0) {
      std::fprintf(stderr, "synpath_fuzz: needs root: it loads the XDP program and makes a network namespace\n");
      std::abort();
    }
    try {
      return new levee::progtest::SynBench();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "synpath_fuzz: cannot load the program in a namespace of its own: %s\n", e.what());
      std::abort();
    }
  }();
  return *b;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  bench();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace levee;
  progtest::SynBench& b = bench();
  model::Draw d({data, size});
  const uint32_t how = d.next();
  model::SynSetting s = b.setting();
  s.proxy = how & 1;
  s.tcp_off = (how >> 1) & (LV_TCP_OFF_TS | LV_TCP_OFF_SACK | LV_TCP_OFF_WSCALE);
  b.set_control(s.proxy, s.tcp_off);
  // A frame as it is (at least an Ethernet header: the kernel takes no shorter), or
  // one the generator makes.
  const bool raw = ((how >> 8) & 3) == 0 && size >= 4 + 14 && size <= 4 + model::kMaxFrame;
  const model::Frame f = raw ? model::Frame(data + 4, data + size) : model::hostile_syn(d, b.world());
  const model::CookieOracle o = b.oracle();
  progtest::SynTally t;
  const std::string why = b.check(f, model::syn_expect(f, b.world(), s, o), o, t);
  LV_PROPERTY(why.empty(), "{}", why);
  return 0;
}
