// datapath.hpp - the XDP program loaded in the kernel, driven with BPF_PROG_TEST_RUN.
//
// One Datapath is one loaded skeleton with its own maps (nothing pinned, nothing
// attached): destroying it frees everything. Frames go in through
// bpf_prog_test_run_opts; what the program did comes back as its verdict, the per-CPU
// counters summed over CPUs, and the lv_state entries.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "levee_abi.h"
#include "policy/limits.hpp"

struct levee_bpf;

namespace levee::progtest {

struct RunResult {
  int err = 0;            // 0 or -errno from bpf_prog_test_run_opts
  uint32_t retval = 0;    // XDP_* of the last repetition
  uint32_t duration = 0;  // kernel's average ns per repetition
};

using Counters = std::array<lv_counter, LV_REASON_MAX>;

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

  Counters counters() const;  // summed over possible CPUs
  std::vector<lv_percpu> percpu() const;  // one per possible CPU
  void put_percpu(const lv_percpu& value);  // the same on every CPU
  std::optional<lv_state> state(const lv_key& key) const;
  // Writes the state and bumps the active slot's generation (invalidating lv_hot).
  void put_state(const lv_key& key, const lv_state& st);
  size_t state_count() const;

  int prog_fd() const;
  int policy_fd() const;
  int state_fd() const;
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

// ---- helpers ---------------------------------------------------------------------

uint64_t monotonic_ns();

// The kernel's jiffies now (from /proc/timer_list), or nullopt if unreadable.
std::optional<uint64_t> kernel_jiffies();

// compile_class on this machine's tick; `fast_reject` forces the flag either way.
lv_class make_class(uint64_t rate, uint64_t burst, unsigned prefix4 = 32, unsigned prefix6 = 64,
                    std::optional<bool> fast_reject = std::nullopt);

// The lv_state key the datapath should use for a source under `cls` (class 0),
// built here independently of the BPF code.
lv_key key4(std::string_view addr, const lv_class& cls);
lv_key key6(std::string_view addr, const lv_class& cls);

const char* reason_name(uint32_t reason);
std::string describe(const Counters& c);

// Fixture for every program test: a fresh Datapath, skipped without root.
class ProgTest : public ::testing::Test {
 protected:
  void SetUp() override;
  Datapath& dp() { return *dp_; }
  std::optional<Datapath> dp_;
};

}  // namespace levee::progtest
