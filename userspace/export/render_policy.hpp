// render_policy.hpp - a policy as attach and reload summarise it under their first line,
// and the pieces of it that status and show print too: rates, a class's match and
// limits, an override's line, the list counts.
#pragma once

#include <cstddef>
#include <string>

#include "policy/policy.hpp"

namespace levee {

// "500 pps, burst 100; 1M B/s, burst 100k B", or "no limit".
std::string describe_rates(const Rate& packets, const Rate& bytes);

// "500 pps, burst 100; 1M B/s, burst 100k; per /32 (IPv4), /64 (IPv6)", then the
// class's other limits and its mode (describe_extras).
std::string describe_limits(const ClassSpec& c);
// "new sources 100/s, burst 10; per network /24, /48: 10k pps, burst 1k; class total
// 50k pps, burst 5k; ban 2s, doubling up to 1h, forgotten after 1h; monitor mode", or
// "" for a class with none of them.
std::string describe_extras(const ClassSpec& c);

// "udp port 53", "tcp syn ports 80,443,8000-8999", "any" (the default class).
std::string describe_match(const Match& m);

// One line per class (match and limits), per override, and (with_lists) the list
// entries by kind.
std::string policy_text(const Policy& p, bool with_lists = true);

// "  override partner     100k pps, burst 10k; classes web, api\n": `where` says the
// classes it applies in.
std::string override_line(const std::string& name, const Rate& packets, const Rate& bytes, const std::string& where);
// "  lists    3 allow, 1,024 deny, 2 override entries\n"
std::string lists_line(size_t allow, size_t deny, size_t overrides);

}  // namespace levee
