// limits.hpp - operator limits, validated, compiled into the datapath's lv_class.
#pragma once

#include <cstdint>
#include <string>

#include "core/clock.hpp"  // clock_tick_ns(), compile_class()'s tick
#include "core/result.hpp"
#include "levee_abi.h"

namespace levee {

// Per-source rates above this are not limits worth enforcing per packet, and the
// emission interval (ns, rounded up) would lose more than 1% of the rate.
inline constexpr uint64_t kMaxRatePps = 10'000'000;
inline constexpr uint64_t kMaxBurst = 1'000'000'000;

struct Limits {
  uint64_t rate = 0;      // packets per second, per source
  uint64_t burst = 0;     // packets a source may send at once
  unsigned prefix4 = 32;  // IPv4 addresses in one /prefix4 are one source
  unsigned prefix6 = 64;  // IPv6 likewise; a host usually owns a whole /64

  bool operator==(const Limits&) const = default;
};

// Checks ranges; the error names the option and the accepted range.
Status validate(const Limits& l);

// The datapath form. The fast reject on the cached clock is enabled only when the
// burst tolerance covers two ticks of staleness, so that a source sending at or
// below its rate from a refilled bucket is never rejected by it (see
// LV_CLASS_FAST_REJECT); otherwise every decision reads the fine clock.
lv_class compile_class(const Limits& l, uint64_t tick_ns);

// Read the operator's limits back out of a compiled class.
Limits limits_of(const lv_class& c);

// The rate the datapath actually enforces: 1e9 / interval, <= the configured rate.
double effective_rate(const lv_class& c);

}  // namespace levee
