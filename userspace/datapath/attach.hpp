// attach.hpp - put levee on an interface and take it off.
//
// attach: preflight (privileges, bpffs, interface, no other XDP program, not already
// attached, or attached with these very settings: then nothing to do) -> validate and compile the policy -> load the
// embedded skeleton -> write the policy and lists -> create the XDP link -> pin link and maps into a staging directory
// -> rename it into place. Any failure unwinds: the staging directory is removed and the link fd closes, which
// detaches. Nothing is left half-applied.
//
// detach: rename the pin directory away (a reader sees it whole or not at all), detach
// the link, take levee's tc filter off (only levee's: handoff.hpp), keep the SYN cookie
// keys for an attach soon after (cookie_file.hpp), remove the pins.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.hpp"
#include "datapath/pins.hpp"
#include "datapath/tc_filter.hpp"
#include "levee_abi.h"
#include "policy/policy.hpp"

namespace levee {

struct AttachOptions {
  std::string iface;
  Policy policy;
  lv_attach_mode mode = LV_MODE_AUTO;
  uint32_t max_sources = LV_DEFAULT_MAX_SOURCES;
  uint32_t max_bans = LV_DEFAULT_MAX_BANS;
  bool exceed_memory_cap = false;  // maps over the share of MemTotal (check_map_memory) are wanted
};

struct AttachResult {
  std::string mode;      // "native" or "generic": what the kernel gave us
  std::string fallback;  // why native was not used in auto mode, or ""
  std::string no_proxy;  // why SYN authentication cannot proxy here (it resets), or ""
  uint32_t prog_id = 0;
  TcPlace tc_place;               // where levee's tc filter went (handle 0: none)
  uint32_t tcp_off = 0;           // LV_TCP_OFF_*: options the SYN-ACKs leave out (the sysctls)
  bool kept_cookie_keys = false;  // the SYN cookie keys of the detach before (cookie_file.hpp)
  bool already = false;           // the interface had this very filter already: nothing was done
};

// Attach options from a config file's policy: its [interface] mode, max_sources and
// max_bans where it sets them, the defaults elsewhere.
AttachOptions attach_options(const std::string& iface, Policy p);

Result<AttachResult> attach(const AttachOptions& o);
Status detach(const std::string& iface);

// Whether the pinned link still attaches its program: false once the interface it was
// made for is gone (the kernel ends the link with its device) or after a detach.
bool link_attached(const Pinned& p);

// The pins of an open filter made again from its fds, as attach makes them (staging
// directory, renamed into place): for `levee run` after its pins went with an unmounted
// bpffs while it held the filter open. Refuses if bpffs is not mounted or the pin
// directory is there again.
Status repin(const Pinned& p);

}  // namespace levee
