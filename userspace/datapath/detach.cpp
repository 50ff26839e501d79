// detach.cpp - levee taken off an interface: the XDP link, levee's tc filter (only
// levee's), the pins; the SYN cookie keys kept for an attach soon after.
#include <bpf/bpf.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "core/iface.hpp"
#include "core/lock.hpp"
#include "core/quote.hpp"
#include "datapath/attach.hpp"
#include "datapath/cookie_file.hpp"
#include "datapath/handoff.hpp"
#include "datapath/kernel.hpp"
#include "datapath/mapped.hpp"

namespace fs = std::filesystem;

namespace levee {
namespace {

// What a detach needs of the attachment it takes apart, read from its pins before they
// go: where its tc filter is and which program it holds, and its SYN cookie keys.
struct Leaving {
  TcPlace tc;
  bool own_hook = false;
  ProgIdentity handoff;
  bool syn_auth = false;
  uint64_t cookie_keys[2][2] = {};
};

Leaving read_leaving(const std::string& dir) {
  Leaving l;
  if (auto tc = open_pin(fmt::format("{}/{}", dir, kPinHandoff)); tc) l.handoff = prog_identity(tc->get());
  auto policy = open_pin(fmt::format("{}/{}", dir, LV_MAP_POLICY));
  if (!policy) return l;
  auto m = MappedArray::map(policy->get(), sizeof(lv_control), LV_MAP_POLICY);
  if (!m) return l;
  const lv_control& ctl = *m->as<lv_control>();
  if (ctl.abi_version != LV_ABI_VERSION) return l;  // another layout: nothing of it is ours to read
  l.tc = {ctl.tc_handle, ctl.tc_priority};
  l.own_hook = (ctl.tc_flags & LV_TC_OWN_HOOK) != 0;
  const lv_policy& pol = ctl.slot[ctl.active & 1];
  for (uint32_t i = 0; i < pol.nr_classes && i < LV_MAX_CLASSES; ++i)
    l.syn_auth |= (pol.classes[pol.order[i]].flags & LV_CLASS_SYN_ANY) != 0;
  for (unsigned s = 0; s < 2; ++s)
    for (unsigned i = 0; i < 2; ++i) l.cookie_keys[s][i] = ctl.cookie_key[s][i];
  return l;
}

}  // namespace

Status detach(const std::string& iface) {
  LV_TRY(preflight("detach"));
  if (!valid_iface_name(iface)) return usage_error(fmt::format("{} is not a valid interface name", quote_value(iface)));
  LV_TRY_ASSIGN(auto lock, IfaceLock::acquire(iface));
  const std::string dir = pin_dir(iface);
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (remove_leftovers(iface) > 0) return {};  // a killed detach's work, finished
    return Error{fmt::format("{} is not attached by levee (no {})", iface, dir), 0,
                 "see what is attached with: levee status"};
  }
  // Out of sight first, in one step: a reader sees the directory whole or not at all.
  const std::string gone = work_dir(iface, "detaching", getpid());
  if (rename(dir.c_str(), gone.c_str()) != 0) return sys_error(fmt::format("move {} away", dir));
  const Leaving leaving = read_leaving(gone);
  // Detach explicitly: closing the last reference would also do it, but a reader
  // (a running `levee stats`) may hold one.
  if (auto link = open_pin(fmt::format("{}/{}", gone, LV_PIN_LINK)); link) {
    int err = bpf_link_detach(link->get());
    if (err && -err != ENOLINK && -err != EINVAL && -err != ENODEV)
      return sys_error(fmt::format("detach the XDP program from {}", iface), -err,
                       fmt::format("its pins are in {}; retry: levee detach {}", gone, iface));
  }
  // Only the filter at levee's place whose program is levee's: another tool's filters on
  // the hook stay, and so does a clsact qdisc levee did not create or that holds more.
  if (auto ifindex = iface_index(iface); ifindex)
    LV_TRY(detach_handoff(*ifindex, leaving.tc, leaving.own_hook, leaving.handoff));
  // For an attach within a cookie's life: clients mid-handshake keep their cookies. Not
  // worth failing the detach for.
  if (leaving.syn_auth) (void)save_cookie_keys(iface, leaving.cookie_keys);
  // /sys/fs/bpf/levee stays, empty: removed, another user could make it before the next
  // attach (bpffs is 1777), which would then refuse it.
  return remove_pin_dir(gone);
}

}  // namespace levee
