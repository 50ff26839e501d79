// known_good_test.cpp - the known-good filter as `levee run` keeps it: it ages early once
// its false positives pass 1 % (estimated from its fill), at most once a minute, and says
// so in its log and metrics.
#include <bpf/bpf.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "e2e.hpp"
#include "levee_abi.h"
#include "levee_run.hpp"

namespace lvt {
namespace {

using KnownGoodFilter = E2e;

// The half of lv_good packets read now (lv_control.good_active), from the pinned policy.
unsigned good_active(const std::string& pin_dir) {
  const std::vector<uint8_t> v = pinned_control(pin_dir);
  return reinterpret_cast<const lv_control*>(v.data())->good_active & 1;
}

// Fills half `half` of the pinned lv_good as some million marks would: 37.5 % of each
// word's bits, every summary bit. About 5 % of sources never marked test good in it.
void fill_good_half(const std::string& pin_dir, unsigned half) {
  const int fd = bpf_obj_get((pin_dir + "/lv_good").c_str());
  if (fd < 0) throw std::runtime_error("open " + pin_dir + "/lv_good");
  std::mt19937_64 rng(half + 1);
  for (uint32_t w = 0; w < LV_SEEN_WORDS; ++w) {
    const uint32_t key = lv_good_entry(half, w << 6);
    const uint64_t bits = rng() & (rng() | rng());
    if (bpf_map_update_elem(fd, &key, &bits, BPF_ANY) != 0) throw std::runtime_error("write lv_good");
  }
  const uint64_t all = ~uint64_t{0};
  for (uint32_t w = 0; w < LV_GOOD_SUM_WORDS; ++w) {
    const uint32_t key = 2 * LV_SEEN_WORDS + half * LV_GOOD_SUM_WORDS + w;
    if (bpf_map_update_elem(fd, &key, &all, BPF_ANY) != 0) throw std::runtime_error("write lv_good's summary");
  }
  close(fd);
}

// A filter filled past 1 % of false positives ages at levee run's next walk: packets read
// the other half, the full one is cleared, each network's count of marks starts over
// (good_epoch), counted as an early ageing. Filled again at once, it is not aged again
// within the minute: its false positives are reported as they are meanwhile.
TEST_F(KnownGoodFilter, AgesEarlyOnceItsFalsePositivesPassOnePercent) {
  TempDir dir;
  LeveeRun run(sb(), {"--config", dir.write("levee.toml", kUdpClassPolicy), "--prune-every", "500ms"});
  run.wait_ready();
  ASSERT_TRUE(eventually([&] { return run.sample("levee_known_good_fill") == 0; }, 3000)) << run.scrape().body;
  EXPECT_EQ(run.sample("levee_known_good_ageings_total", {{"kind", "early"}}), 0);
  const unsigned half = good_active(sb().pin_dir());
  const uint64_t epoch0 = sb().status()["known_good"]["ageings"].get<uint64_t>();

  fill_good_half(sb().pin_dir(), half);
  ASSERT_TRUE(eventually(
      [&] {
        return run.sample("levee_known_good_ageings_total", {{"kind", "early"}}) == 1;
      },
      5000))
      << run.scrape().body;
  EXPECT_EQ(good_active(sb().pin_dir()), half ^ 1) << "packets read the other half";
  EXPECT_LT(run.sample("levee_known_good_false_positive_ratio"), 0.01);
  const nlohmann::json kg = sb().status()["known_good"];
  EXPECT_EQ(kg["ageings"].get<uint64_t>(), epoch0 + 1) << kg.dump();
  EXPECT_LT(kg["fill"].get<double>(), 0.01) << kg.dump();

  fill_good_half(sb().pin_dir(), half ^ 1);
  ASSERT_TRUE(eventually([&] { return run.sample("levee_known_good_false_positive_ratio") > 0.01; }, 3000))
      << run.scrape().body;
  usleep(1'500'000);  // three walks
  EXPECT_EQ(run.sample("levee_known_good_ageings_total", {{"kind", "early"}}), 1) << "aged again within a minute";
  EXPECT_EQ(good_active(sb().pin_dir()), half ^ 1);
  const RunResult out = run.stop();
  EXPECT_NE(out.err.find("the known-good filter aged early"), std::string::npos) << out.describe();
}

}  // namespace
}  // namespace lvt
