// crowdsec_stream.hpp - what the Local API streams to a bouncer (GET
// /v1/decisions/stream), parsed into decisions, and which of them the [crowdsec]
// filter keys take. Pure: no sockets (crowdsec_client.hpp), no maps (bouncer.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "policy/cidr.hpp"
#include "policy/crowdsec.hpp"

namespace levee {

// A stream reply: a startup pull of 100k decisions is about 20 MB of JSON.
inline constexpr size_t kMaxCsBodyBytes = 64u << 20;

// One decision of the stream.
struct CsDecision {
  uint64_t id = 0;
  Cidr net;                 // scope Ip: a /32 or /128; Range: the network
  int64_t duration_ns = 0;  // negative in "deleted"
  std::string origin, scenario, type;
};

struct CsStream {
  std::vector<CsDecision> added, deleted;
  uint64_t skipped = 0;  // entries not understood (another scope, a bad value): counted, ignored
};

// The reply of /v1/decisions/stream: {"new": [...] | null, "deleted": [...] | null}.
// A reply that is not such an object is an error; a bad entry is skipped and counted.
Result<CsStream> parse_cs_stream(std::string_view body);

// A Go duration ("3h59m59.64s", "-1.5s", "59m0.3s", "300ms"): ns, or nothing.
std::optional<int64_t> parse_go_duration(std::string_view s);

// Does the spec's filter take this decision (type, origin, scenario)?
bool cs_wanted(const CrowdsecSpec& spec, const CsDecision& d);

}  // namespace levee
