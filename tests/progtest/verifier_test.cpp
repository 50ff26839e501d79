// verifier_test.cpp - the program's verification cost, kept well under the kernel's
// limit. Every branch the datapath gains multiplies the states the verifier walks;
// at 1M instructions processed the kernel refuses the program outright (E2BIG), as it
// did once when a change took the count from 957k over the edge. This test fails
// while there is still room to restructure.
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "datapath.hpp"
#include "levee_bpf.skel.h"

namespace levee::progtest {
namespace {

constexpr long kKernelLimit = 1'000'000;
constexpr long kBudget = kKernelLimit / 2;

TEST_F(ProgTest, ProgramVerifiesWithinHalfTheKernelsInstructionLimit) {
  std::vector<char> log(32u << 20);
  levee_bpf* skel = levee_bpf__open();
  ASSERT_NE(skel, nullptr);
  bpf_program__set_log_level(skel->progs.levee_xdp, 4);  // statistics only
  bpf_program__set_log_buf(skel->progs.levee_xdp, log.data(), log.size());
  bpf_map__set_max_entries(skel->maps.lv_state, 1024);
  bpf_map__set_max_entries(skel->maps.lv_bans, 1024);
  const int err = levee_bpf__load(skel);
  levee_bpf__destroy(skel);
  ASSERT_EQ(err, 0);
  const std::string text(log.data());
  const size_t at = text.find("processed ");
  ASSERT_NE(at, std::string::npos) << text;
  const long processed = std::strtol(text.c_str() + at + 10, nullptr, 10);
  std::cout << "verifier: " << text.substr(at, text.find('\n', at) - at) << "\n";
  EXPECT_GT(processed, 0);
  EXPECT_LT(processed, kBudget) << "the verifier walks " << processed << " instructions of its " << kKernelLimit
                                << ": restructure before adding branches (see git log -- bpf/)";
}

}  // namespace
}  // namespace levee::progtest
