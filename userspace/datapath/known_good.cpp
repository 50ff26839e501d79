#include "datapath/known_good.hpp"

namespace levee {

Result<KnownGood> KnownGood::open(const Pinned& p, PolicyMap& policy) {
  LV_TRY_ASSIGN(auto seen, SeenMap::map(p.seen.get()));
  LV_TRY_ASSIGN(auto good, GoodMap::map(p.good.get()));
  return KnownGood(std::move(seen), std::move(good), policy);
}

void KnownGood::mark(const lv_key& k) {
  const uint32_t seed = policy_.control().seen_seed;
  for (unsigned h = 0; h < 2; ++h) {
    // lv_seen first: a packet never finds the source good but certainly unknown.
    seen_mark(seen_.half(h), filter_key(k), seed);
    good_mark(good_.half(h), k, seed);
  }
}

bool KnownGood::test(const lv_key& k) const {
  const lv_control& ctl = policy_.control();
  return good_test(good_.half(ctl.good_active & 1), k, ctl.seen_seed);
}

Status KnownGood::age() {
  const uint32_t now_read = policy_.flip_good();
  policy_.bump_good_epoch();
  LV_TRY(wait_for_datapath_readers());
  good_clear(good_.half(now_read ^ 1));
  return {};
}

GoodFill KnownGood::fill() const { return good_fill(good_.half(policy_.control().good_active & 1)); }

}  // namespace levee
