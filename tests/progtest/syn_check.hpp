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

#include <bitset>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "datapath.hpp"
#include "host_netns.hpp"
#include "syn_model.hpp"

namespace levee::progtest {

// A rule of the reference that levee breaks, and what levee does instead: another
// outcome, or (`bytes`) the outcome it must have with a SYN-ACK whose bytes differ.
struct SynKnown {
  model::SynRule rule;
  Outcome levee;
  const char* must;
  bool bytes = false;
};
extern const std::vector<SynKnown> kKnownDisagreements;
// The entry of kKnownDisagreements for a frame of `rule` to which levee did `levee`
// (with the bytes of its SYN-ACK the only difference: `bytes`), if there is one.
const SynKnown* known(model::SynRule rule, const Outcome& levee, bool bytes);

// What came of a run of frames.
struct SynTally {
  uint64_t frames = 0, compared = 0, answers = 0, undecided = 0, known = 0, failures = 0;
  uint64_t deep = 0, deepest = 0;  // SYN-ACKs to a SYN whose TCP header was past byte 118
  // Of the TCP frames of the class decided: their flag bytes, data offsets, NS bits.
  std::bitset<256> flags;
  std::bitset<16> doffs;
  std::bitset<2> ns;
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
  // lv_control.handoff (the tc program is there) and tcp_off, stored through the
  // map's memory (a fuzzer changes them every input).
  void set_control(bool handoff, uint32_t tcp_off);
  // The cookie rule under the interface's keys, at the time of the call.
  model::CookieOracle oracle();

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
  void forget_where();

  model::SynWorld world_;
  model::SynSetting setting_;
  std::optional<pkt::HostNetns> net_;
  std::optional<Datapath> dp_;
  std::optional<Controller> ctl_;
  std::optional<PolicyMapping> map_;
  Counters before_{};
};

}  // namespace levee::progtest
