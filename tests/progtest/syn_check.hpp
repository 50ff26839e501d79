// syn_check.hpp - the SYN path's differential bench, shared by the program test
// (syn_hostile_test.cpp) and the fuzzer (tests/fuzz/synpath_fuzz.cpp): a loaded
// Datapath in a network namespace of its own (HostNetns: the host's addresses on its
// loopback, a listener on the world's port), a TCP class with syn_auth, each frame run
// through the program with BPF_PROG_TEST_RUN and compared with the reference
// (tests/model/syn_model.hpp): its verdict, its reason, and for a SYN-ACK every byte.
//
// kKnownDisagreements lists where levee is wrong and the reference right (each entry
// says what must happen instead): such frames are counted apart, never as agreement.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "datapath.hpp"
#include "host_netns.hpp"
#include "syn_model.hpp"

namespace levee::progtest {

// A rule of the reference that levee breaks, and what levee does instead.
struct SynKnown {
  model::SynRule rule;
  Outcome levee;
  const char* must;
};
extern const std::vector<SynKnown> kKnownDisagreements;

// What came of a run of frames.
struct SynTally {
  uint64_t frames = 0, compared = 0, answers = 0, undecided = 0, known = 0, failures = 0;
  uint64_t deep = 0, deepest = 0;  // SYN-ACKs to a SYN whose TCP header was past byte 118
  std::map<model::SynRule, uint64_t> by_rule;
  std::map<std::string, uint64_t> known_by, failed_by;
  std::string report() const;
};

class SynBench {
 public:
  // Loads the program in a namespace of its own. Throws std::runtime_error.
  SynBench();
  ~SynBench();
  SynBench(const SynBench&) = delete;
  SynBench& operator=(const SynBench&) = delete;

  // The class "syn" (the world's listening and closed ports) with `mode`; every other
  // frame in a class without limits, and no answer rate (the reference has no clock):
  // every frame's fate is the SYN path's alone.
  void install(SynAuth mode);
  // lv_control.handoff (the tc program is there) and tcp_off.
  void set_control(bool handoff, uint32_t tcp_off);
  // The cookie rule under the interface's keys, at the time of the call.
  model::CookieOracle oracle() const;

  // One frame through the program and the reference: "" if they agree (or the frame is
  // undecided, or a known disagreement), else what differs. Counted in `t`.
  std::string check(const model::Frame& f, const model::SynExpect& want, const model::CookieOracle& o, SynTally& t);
  // `n` frames from the generator with `seed` under `s`; the first 10 differences in
  // `failed`.
  SynTally run(uint64_t seed, uint64_t n, const model::SynSetting& s, std::vector<std::string>* failed = nullptr);

  Datapath& dp() { return *dp_; }
  pkt::HostNetns& net() { return *net_; }
  const model::SynWorld& world() const { return world_; }
  const model::SynSetting& setting() const { return setting_; }

 private:
  Outcome observe(const model::Frame& f, RunResult& r);

  model::SynWorld world_;
  model::SynSetting setting_;
  std::optional<pkt::HostNetns> net_;
  std::optional<Datapath> dp_;
  std::optional<Controller> ctl_;
  Counters before_{};
};

}  // namespace levee::progtest
