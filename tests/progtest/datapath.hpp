// datapath.hpp - the XDP program loaded in the kernel, driven with BPF_PROG_TEST_RUN.
//
// One Datapath is one loaded skeleton with its own maps (nothing pinned, nothing
// attached): destroying it frees everything. Frames go in through
// bpf_prog_test_run_opts; what the program did comes back as its verdict, the per-CPU
// counters summed over CPUs, and the lv_state entries.
#pragma once

#include <sched.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "datapath/pins.hpp"
#include "datapath/policy_map.hpp"
#include "levee_abi.h"
#include "policy/compile.hpp"
#include "policy/keys.hpp"
#include "policy/limits.hpp"
#include "policy/policy.hpp"

struct levee_bpf;

namespace levee::progtest {

struct RunResult {
  int err = 0;               // 0 or -errno from bpf_prog_test_run_opts
  uint32_t retval = 0;       // XDP_* of the last repetition
  uint32_t duration = 0;     // kernel's average ns per repetition
  std::vector<uint8_t> out;  // the frame as the program left it (run_out() only)
};

using Counters = std::array<lv_counter, LV_REASON_MAX>;

// One packet's fate: its verdict and the one reason it was counted under.
struct Outcome {
  uint32_t verdict = 0;
  uint32_t reason = LV_REASON_MAX;  // LV_REASON_MAX: the run failed or no single reason moved
  bool operator==(const Outcome&) const = default;
};
void PrintTo(const Outcome& o, std::ostream* os);

class Datapath {
 public:
  static constexpr uint32_t kDefaultMaxSources = 4096;

  // Opens the skeleton, sizes lv_state, loads. Throws std::runtime_error.
  explicit Datapath(uint32_t max_sources = kDefaultMaxSources);
  ~Datapath();
  Datapath(const Datapath&) = delete;
  Datapath& operator=(const Datapath&) = delete;

  // Write `cls` as class 0 of the active slot (nr_classes = 1) with bpf_map_update_elem.
  void set_class(const lv_class& cls);
  lv_control control() const;
  void write_control(const lv_control& ctl);

  RunResult run(std::span<const uint8_t> frame, int repeat = 1) const;
  // One run that keeps the frame the program left (an answer it wrote, XDP_TX).
  RunResult run_out(std::span<const uint8_t> frame) const;
  // Run one frame once; the reason is read from the counters' difference.
  Outcome send(std::span<const uint8_t> frame) const;

  Counters counters() const;  // summed over possible CPUs
  using ClassCounters = std::array<lv_class_counters, LV_MAX_CLASSES>;
  ClassCounters class_counters() const;   // lv_percpu.by_class summed over possible CPUs
  std::vector<lv_percpu> percpu() const;  // one per possible CPU
  // The lv_hotset slot a key hashes to, one per possible CPU.
  std::vector<lv_hot> hot(const lv_key& key) const;
  void put_percpu(const lv_percpu& value);              // the same on every CPU
  void put_percpu(const std::vector<lv_percpu>& each);  // one per possible CPU, as percpu() reads them
  std::optional<lv_state> state(const lv_key& key) const;
  // Writes the state and bumps the active slot's generation (invalidating lv_hot).
  void put_state(const lv_key& key, const lv_state& st);
  size_t state_count() const;
  // Entries of lv_state whose key is a network (LV_KEY_NETWORK), not a source.
  size_t network_count() const;

  // lv_shared by class id (LV_MAX_CLASSES: the interface-wide entry).
  lv_shared shared(uint32_t id) const;
  void put_shared(uint32_t id, const lv_shared& v);
  // lv_bans; put_ban publishes a new generation like put_state.
  std::optional<lv_ban> ban(const lv_key& key) const;
  void put_ban(const lv_key& key, const lv_ban& b);
  size_t ban_count() const;
  // Everything the program wrote to lv_events since the last call, in order.
  std::vector<lv_event> events();
  // Change the active slot in place (and bump its generation).
  template <typename F>
  void edit_policy(F&& f) {
    lv_control ctl = control();
    lv_policy& pol = ctl.slot[ctl.active & 1];
    f(pol);
    pol.generation++;
    write_control(ctl);
  }

  // Every source, network, ban, shared budget, known-source bit, per-CPU counter and
  // hot entry back to zero, as after load (the policy and the lists stay): a fresh
  // datapath without the verifier's second of a new load.
  void reset_state();

  // The maps as the controller's readers take an attachment's pins (descriptors
  // duplicated), under the interface name `iface`.
  Pinned pinned(const std::string& iface) const;

  int prog_fd() const;
  int policy_fd() const;
  int state_fd() const;
  int local_fd() const;  // lv_local: the host's own addresses
  // The four list tries, [slot][0 = IPv4, 1 = IPv6], as PolicyMap takes them.
  ListFds list_fds() const;
  uint32_t max_sources() const { return max_sources_; }

 private:
  struct SkelDeleter {
    void operator()(::levee_bpf* s) const;
  };
  std::unique_ptr<::levee_bpf, SkelDeleter> skel_;
  uint32_t max_sources_;
};

// The lv_policy map mapped into memory, as the controller writes it: one slot edited
// while packets read the other, then `active` flipped with one store.
class PolicyMapping {
 public:
  explicit PolicyMapping(const Datapath& dp);
  ~PolicyMapping();
  PolicyMapping(const PolicyMapping&) = delete;
  PolicyMapping& operator=(const PolicyMapping&) = delete;
  lv_control* operator->() { return ctl_; }
  void flip_to(uint32_t slot);

 private:
  lv_control* ctl_ = nullptr;
  size_t len_ = 0;
};

// The controller's side of a policy change on a loaded Datapath: a whole Policy is
// validated and compiled (policy/policy.hpp) and written through the real PolicyMap
// (datapath/policy_map.hpp) mapped on the skeleton's lv_policy and four list tries:
// install() is PolicyMap::init (both slots, all tries), publish() is PolicyMap::publish
// (inactive slot and its tries rebuilt, grace period, one flip). Errors throw.
class Controller {
 public:
  explicit Controller(Datapath& dp);

  // Validate, compile on `clocks` (Clocks::read() when not given), write.
  const CompiledPolicy& install(const Policy& p, std::optional<Clocks> clocks = std::nullopt);
  const CompiledPolicy& publish(const Policy& p, std::optional<Clocks> clocks = std::nullopt);
  // An already compiled (possibly hand-edited) policy, as is.
  void install(const CompiledPolicy& c);
  void publish(const CompiledPolicy& c);

  PolicyMap& map() { return *map_; }
  const CompiledPolicy& compiled() const { return compiled_; }
  // The slot packets use now.
  const lv_policy& active() const { return map_->active(); }

 private:
  CompiledPolicy compile_checked(const Policy& p, std::optional<Clocks> clocks);
  std::optional<PolicyMap> map_;
  CompiledPolicy compiled_;
};

// ---- policy helpers ---------------------------------------------------------------

Match on(std::vector<Proto> protos, std::vector<PortRange> ports = {}, bool syn = false);
ClassSpec class_spec(std::string name, Match m, Rate packets, Rate bytes = {}, unsigned prefix4 = 32,
                     unsigned prefix6 = 64);
Cidr cidr(std::string_view text);  // throws std::invalid_argument
ListEntry list_entry(std::string_view cidr_text, lv_list_kind kind, std::string override_name = {},
                     uint64_t expires_unix_ns = 0);

// The lv_state key of `addr` (IPv4 or IPv6, by its form) in class `class_id` whose
// prefix for that family is `prefix`, built independently of the BPF code and of
// compile_class.
lv_key source_key(std::string_view addr, unsigned prefix, uint16_t class_id);

// ---- helpers ---------------------------------------------------------------------

uint64_t monotonic_ns();

// The kernel's jiffies now (from /proc/timer_list), or nullopt if unreadable.
std::optional<uint64_t> kernel_jiffies();

// compile_class on this machine's tick, without the autopilot (LV_CLASS_AUTO_ADMIT,
// LV_CLASS_ESCALATE): the limiter alone. `fast_reject` forces the flag either way.
lv_class make_class(uint64_t rate, uint64_t burst, unsigned prefix4 = 32, unsigned prefix6 = 64,
                    std::optional<bool> fast_reject = std::nullopt);

// The lv_state key the datapath should use for a source under `cls` (class 0),
// built here independently of the BPF code.
lv_key key4(std::string_view addr, const lv_class& cls);
lv_key key6(std::string_view addr, const lv_class& cls);
// The key of the IPv4 network that the watch of `cls` (class 0) keeps `addr` under.
lv_key watch_key4(std::string_view addr, const lv_class& cls);
// The network of `addr` under the watch of `cls` (class 0) escalated a moment ago, its
// limit with room: as the class's shared state and the network's own say it. Its
// run-up began a moment ago too (lv_watch.runup_ns): its sources that got state since,
// or a second before, arrived with its flood (shared/guard.h).
void escalate_network(Datapath& dp, const lv_class& cls, std::string_view addr);
// A source's state as one that arrived `ago_ns` ago, with its limits unused (as one
// from before a flood, or of its run-up).
void put_source(Datapath& dp, const lv_key& key, uint64_t ago_ns);

// The calling thread kept on the CPU it runs on, for as long as this lives: the clock,
// the hot sources, the class totals' leases, the counters and the autopilot's memory
// (struct lv_pilot) are per CPU, and a test that follows them must not migrate.
class OneCpu {
 public:
  OneCpu();
  ~OneCpu();
  OneCpu(const OneCpu&) = delete;
  OneCpu& operator=(const OneCpu&) = delete;
  bool ok() const { return ok_; }
  size_t cpu() const { return static_cast<size_t>(cpu_); }

 private:
  cpu_set_t old_{};
  int cpu_ = 0;
  bool ok_ = false;
};

// One frame run `repeat` times on CPU 0 and on CPU 1 at once (threads pinned, released
// together). begin/end bracket every decision's clock reading.
struct TwoCpuRun {
  std::array<RunResult, 2> run{};
  std::array<int, 2> pin_err{};
  uint64_t begin = 0, end = 0;
  int repeat = 0;
  uint64_t busy_ns() const;  // the longer of the two runs' kernel time
};
TwoCpuRun run_on_two_cpus(const Datapath& dp, std::span<const uint8_t> frame, int repeat);

// A reason as levee names it (core/reasons.hpp), for failure messages.
std::string_view reason_name(uint32_t reason);
std::string describe(const Counters& c);

// Fixture for every program test: a fresh Datapath, skipped without root.
class ProgTest : public ::testing::Test {
 protected:
  void SetUp() override;
  Datapath& dp() { return *dp_; }
  std::optional<Datapath> dp_;
};

}  // namespace levee::progtest
