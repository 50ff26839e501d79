#include "policy/limits.hpp"

#include "policy/compile.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <time.h>

namespace levee {

Status validate(const Limits& l) {
  if (l.rate < 1 || l.rate > kMaxRatePps)
    return usage_error(fmt::format("--rate {} is out of range", l.rate),
                       fmt::format("give packets per second per source, 1 to {}", kMaxRatePps));
  if (l.burst < 1 || l.burst > kMaxBurst)
    return usage_error(fmt::format("--burst {} is out of range", l.burst),
                       fmt::format("give packets a source may send at once, 1 to {}", kMaxBurst));
  if (l.prefix4 < 1 || l.prefix4 > 32)
    return usage_error(fmt::format("--prefix4 {} is out of range", l.prefix4), "give an IPv4 prefix length, 1 to 32");
  if (l.prefix6 < 1 || l.prefix6 > 128)
    return usage_error(fmt::format("--prefix6 {} is out of range", l.prefix6), "give an IPv6 prefix length, 1 to 128");
  return {};
}

lv_class compile_class(const Limits& l, uint64_t tick_ns) {
  return compile_class(one_class_policy(l).classes[0], tick_ns);
}

Limits limits_of(const lv_class& c) { return Limits{c.pkt.rate, c.pkt.burst, c.prefix4, c.prefix6}; }

double effective_rate(const lv_class& c) {
  return c.pkt.cost ? static_cast<double>(LV_NSEC_PER_SEC) / static_cast<double>(c.pkt.cost) : 0.0;
}

}  // namespace levee
