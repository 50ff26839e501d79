#include "daemon/syn_watch.hpp"

#include <fmt/format.h>

#include "core/clock.hpp"
#include "daemon/log.hpp"
#include "datapath/handoff.hpp"
#include "datapath/kernel.hpp"

namespace levee::daemon {

EventRecord SynWatch::event(unsigned type) const {
  EventRecord r;
  r.type = type;
  r.time_unix_ns = unix_now_ns();
  r.iface = iface_;
  return r;
}

void SynWatch::say_once(const std::string& line) {
  if (line == said_) return;
  said_ = line;
  say(iface_, "{}", line);
}

bool SynWatch::tc_filter_there(const Pinned& pins, PolicyMap& policy, unsigned ifindex, const Emit& emit) {
  const lv_control& ctl = policy.control();
  const TcPlace place{ctl.tc_handle, ctl.tc_priority};
  const ProgIdentity ours = prog_identity(pins.handoff.get());
  if (handoff_at(ifindex, place, ours)) return true;
  // Missing: reset mode first, so that no ACK is proxied while nobody would hand it off.
  proxy(false,
        fmt::format("levee's tc filter (priority {}, handle {:#x}) is gone from {}'s ingress hook", place.priority,
                    place.handle, iface_),
        policy, emit);
  if (!pins.handoff.valid()) {
    say_once("levee's tc program is not pinned: it cannot be put back (levee detach, then attach, puts it back)");
    return false;
  }
  auto at = attach_handoff(pins.handoff.get(), ifindex);
  if (!at) {
    say_once(fmt::format("levee's tc filter could not be put back: {}", at.error().message()));
    return false;
  }
  const bool own = at->own_hook || (ctl.tc_flags & LV_TC_OWN_HOOK);
  policy.set_tc_place(at->place.handle, at->place.priority, own ? LV_TC_OWN_HOOK : 0);
  health_.restored_tc_filter();
  said_.clear();
  say(iface_, "put levee's tc filter back on the ingress hook (priority {}, handle {:#x})", at->place.priority,
      at->place.handle);
  EventRecord r = event(kEvTcFilter);
  r.value = at->place.priority;
  r.count = at->place.handle;
  emit(r);
  return true;
}

void SynWatch::proxy(bool on, const std::string& why, PolicyMap& policy, const Emit& emit) {
  if ((policy.control().handoff != 0) == on) return;
  policy.set_proxying(on);
  if (on)
    say(iface_, "SYN authentication proxies again: {}", why);
  else
    say(iface_, "SYN authentication answers in reset mode: {}", why);
  EventRecord r = event(kEvSynProxy);
  r.value = on;
  r.why = why;
  emit(r);
}

void SynWatch::check(const Pinned& pins, PolicyMap& policy, const Emit& emit) {
  const lv_control& ctl = policy.control();
  const lv_policy& pol = policy.active();
  bool syn_auth = false;
  for (uint32_t i = 0; i < pol.nr_classes && i < LV_MAX_CLASSES; ++i)
    syn_auth |= (pol.classes[pol.order[i]].flags & LV_CLASS_SYN_ANY) != 0;
  if (!syn_auth) return;
  const TcpSysctls sys = read_tcp_sysctls();
  if (const uint32_t off = tcp_off_of(sys); off != ctl.tcp_off) {
    policy.set_tcp_off(off);
    say(iface_,
        "SYN-ACKs leave out {} now (the listener's sysctls: net.ipv4.tcp_timestamps {}, tcp_sack {}, "
        "tcp_window_scaling {})",
        tcp_options_text(off), sys.timestamps, sys.sack, sys.window_scaling);
    EventRecord r = event(kEvTcpOptions);
    r.value = off;
    emit(r);
  }
  if (!ctl.tc_handle) return;  // the attach could not proxy: reset mode for good
  auto ifindex = iface_index(iface_);
  if (!ifindex) return;  // the interface is gone: the attachment's check deals with it
  if (!tc_filter_there(pins, policy, *ifindex, emit)) return;
  if (!syncookies_on(sys))
    proxy(false, "net.ipv4.tcp_syncookies is 0 (the kernel refuses every hand-off)", policy, emit);
  else
    proxy(true, "levee's tc filter is in place and net.ipv4.tcp_syncookies is on", policy, emit);
}

}  // namespace levee::daemon
