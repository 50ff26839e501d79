// loader.hpp - attach, detach and inspect levee on an interface.
//
// attach: preflight (privileges, bpffs, interface, no other XDP program, not already
// attached) -> load the embedded skeleton -> write the policy -> create the XDP link
// -> pin link and maps into a staging directory -> rename it into place. Any failure
// unwinds: the staging directory is removed and the link fd closes, which detaches.
// Nothing is left half-applied.
#pragma once

#include <cstdint>
#include <string>

#include "bpf/pins.hpp"
#include "core/result.hpp"
#include "levee_abi.h"
#include "policy/limits.hpp"

namespace levee {

struct AttachOptions {
  std::string iface;
  Limits limits;
  lv_attach_mode mode = LV_MODE_AUTO;
  uint32_t max_sources = LV_DEFAULT_MAX_SOURCES;
};

struct AttachResult {
  std::string mode;      // "native" or "generic": what the kernel gave us
  std::string fallback;  // why native was not used in auto mode, or ""
  uint32_t prog_id = 0;
};

Result<AttachResult> attach(const AttachOptions& o);
Status detach(const std::string& iface);

// What `levee status` shows for one interface.
struct IfaceStatus {
  std::string iface;
  bool defunct = false;  // the interface went away; the link no longer does anything
  bool other_netns = false;  // attached in another network namespace than the caller's
  unsigned ifindex = 0;
  std::string mode;      // native, generic, or "" when defunct
  uint32_t prog_id = 0;
  uint32_t link_id = 0;
  Limits limits;
  double effective_rate = 0;
  bool fast_reject = false;
  uint64_t generation = 0;
  uint32_t max_sources = 0;
  uint64_t sources = 0;
};

Result<IfaceStatus> query_status(const Pinned& p);

// Change the limits of an attached interface atomically; per-source state is kept.
Result<Limits> set_limits(const std::string& iface, const Limits& requested_changes,
                          bool rate_given, bool burst_given, bool prefix4_given, bool prefix6_given);

const char* mode_name(lv_attach_mode m);

}  // namespace levee
