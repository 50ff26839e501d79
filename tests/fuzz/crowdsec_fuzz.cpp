// crowdsec_fuzz.cpp - the CrowdSec Local API's decision stream as levee run's bouncer
// reads it (parse_cs_stream, policy/crowdsec.hpp), and what the bouncer holds after
// applying it (CsHeldSet).
//
// Properties: every decision taken has a network of its family's length and the scope
// its text said; a Go duration it accepted is within 100 years either way and reads
// back the same from its whole-nanosecond form; a startup pull holds exactly the
// networks of its wanted decisions with time left, and nothing but what the set holds
// is planned to be written.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "core/units.hpp"
#include "daemon/crowdsec_held.hpp"
#include "daemon/crowdsec_stream.hpp"
#include "fuzz.hpp"

namespace levee {
namespace {

void check_decision(const CsDecision& d) {
  LV_PROPERTY(d.net.family == 4 || d.net.family == 6, "family %u", d.net.family);
  LV_PROPERTY(d.net.len >= 1 && d.net.len <= (d.net.family == 4 ? 32u : 128u), "length %u", d.net.len);
  const int64_t cap = static_cast<int64_t>(kMaxDurationNs);
  LV_PROPERTY(d.duration_ns >= -cap && d.duration_ns <= cap, "duration %lld", static_cast<long long>(d.duration_ns));
  const std::string again = std::to_string(d.duration_ns < 0 ? -d.duration_ns : d.duration_ns) + "ns";
  const auto back = parse_go_duration(again);
  LV_PROPERTY(back && *back == (d.duration_ns < 0 ? -d.duration_ns : d.duration_ns), "%s reads back", again.c_str());
}

}  // namespace
}  // namespace levee

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace levee;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)parse_go_duration(text.substr(0, 64));
  auto s = parse_cs_stream(text);
  if (!s) return 0;
  for (const CsDecision& d : s->added) check_decision(d);
  for (const CsDecision& d : s->deleted) check_decision(d);

  const CrowdsecSpec spec;
  constexpr uint64_t kNow = 1'000'000'000'000;
  CsHeldSet held;
  const CsPlan plan = held.plan(spec, *s, true, kNow);
  std::set<Cidr, CidrLess> want;
  size_t wanted = 0;
  for (const CsDecision& d : s->added)
    if (d.duration_ns > 0 && cs_wanted(spec, d)) want.insert(d.net), ++wanted;
  LV_PROPERTY(held.size() == want.size(), "held %zu of %zu wanted in %s", held.size(), want.size(),
              fuzz::escaped(text.substr(0, 200)).c_str());
  LV_PROPERTY(plan.put.size() == want.size() && plan.remove.empty(), "a first startup pull writes what it holds");
  // The same reply again, incremental: nothing is new (when no network came twice: then
  // the startup kept the longer, and the other is a change).
  if (wanted != want.size()) return 0;
  CsStream again = *s;
  again.deleted.clear();
  LV_PROPERTY(held.plan(spec, again, false, kNow + 1).put.empty(), "a repeated reply writes nothing");
  return 0;
}
