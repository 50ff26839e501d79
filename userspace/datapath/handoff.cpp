#include "datapath/handoff.hpp"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <linux/btf.h>

#include <cerrno>
#include <charconv>

#include "core/input_file.hpp"

#include "levee_abi.h"

namespace levee {
namespace {

// A small number from a /proc or /sys file, or -1.
long read_number(const std::string& path) {
  auto f = read_input(path, {.what = "a kernel setting", .max_bytes = kMaxKernelFileBytes});
  long v = -1;
  if (!f || std::from_chars(f->text.data(), f->text.data() + f->text.size(), v).ec != std::errc()) return -1;
  return v;
}

int sysctl(const char* name) { return static_cast<int>(read_number(fmt::format("/proc/sys/net/ipv4/{}", name))); }

// The program at `place` is ours: the same id, or (no id to compare with) our name.
bool ours_at(unsigned ifindex, TcPlace place, const ProgIdentity& ours) {
  const uint32_t id = tc_prog_id_at(ifindex, place);
  if (!id) return false;
  if (ours.id) return id == ours.id;
  return prog_identity_of_id(id).name == kHandoffProgName;
}

// Nothing on either side of the interface's clsact hook (no filter, no priority head).
bool hook_empty(unsigned ifindex) {
  for (bool ingress : {true, false}) {
    auto f = list_tc_filters(ifindex, ingress);
    if (!f || !f->empty()) return false;  // unreadable: keep it
  }
  return true;
}

// The clsact qdisc of both hooks, gone.
void destroy_hook(unsigned ifindex) {
  bpf_tc_hook hook = tc_ingress_hook(ifindex);
  hook.attach_point = static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS);
  (void)bpf_tc_hook_destroy(&hook);
}

}  // namespace

HandoffSupport handoff_support() {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return {false, "the kernel has no BTF to look up bpf_sk_assign_tcp_reqsk in"};
  const bool kfunc = btf__find_by_name_kind(vmlinux, "bpf_sk_assign_tcp_reqsk", BTF_KIND_FUNC) > 0;
  btf__free(vmlinux);
  if (!kfunc) return {false, "the kernel lacks bpf_sk_assign_tcp_reqsk (Linux 6.9 or later has it)"};
  if (read_number("/proc/sys/net/ipv4/tcp_syncookies") == 0)
    return {false, "net.ipv4.tcp_syncookies is 0 in this network namespace (set it to 1)"};
  return {true, ""};
}

Status require_handoff(const Policy& p, const std::string& why) {
  for (const ClassSpec& c : p.classes)
    if (c.syn_auth == SynAuth::Proxy)
      return Error{fmt::format(R"(class '{}' has syn_auth = "proxy" but levee cannot proxy here: {})", c.name, why), 0,
                   R"(use syn_auth = "cookie" (proxy where it can, else reset) or "reset")"};
  return {};
}

HandoffMss handoff_mss(const std::string& iface) {
  HandoffMss m;
  const long mtu = read_number(fmt::format("/sys/class/net/{}/mtu", iface));
  // IPv6 needs 1280; below that (or unreadable) the defaults stand.
  if (mtu >= 1280 && mtu <= 65535) {
    m.v4 = static_cast<uint16_t>(mtu - 40);
    m.v6 = static_cast<uint16_t>(mtu - 60);
  }
  return m;
}

TcpSysctls read_tcp_sysctls() {
  return {sysctl("tcp_timestamps"), sysctl("tcp_sack"), sysctl("tcp_window_scaling"), sysctl("tcp_syncookies")};
}

uint32_t tcp_off_of(const TcpSysctls& s) {
  uint32_t off = 0;
  if (s.timestamps == 0) off |= LV_TCP_OFF_TS;
  if (s.sack == 0) off |= LV_TCP_OFF_SACK;
  if (s.window_scaling == 0) off |= LV_TCP_OFF_WSCALE;
  return off;
}

std::string tcp_options_text(uint32_t tcp_off) {
  std::string out;
  auto add = [&](uint32_t bit, const char* name) {
    if (tcp_off & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  };
  add(LV_TCP_OFF_TS, "timestamps");
  add(LV_TCP_OFF_SACK, "SACK");
  add(LV_TCP_OFF_WSCALE, "window scaling");
  return out.empty() ? "none" : out;
}

Result<TcAttached> attach_handoff(int prog_fd, unsigned ifindex) {
  bpf_tc_hook hook = tc_ingress_hook(ifindex);
  TcAttached out;
  if (int err = bpf_tc_hook_create(&hook); err && err != -EEXIST)
    return sys_error("create the interface's clsact hook for levee's tc program", -err);
  else
    out.own_hook = err == 0;
  // Another tool may add a filter between the listing and the attach: the attach then
  // fails (it never replaces), and the next listing sees it.
  int err = -EEXIST;
  for (int tries = 0; tries < 3 && err == -EEXIST; ++tries) {
    auto filters = list_tc_filters(ifindex, true);
    if (!filters) {
      if (out.own_hook) destroy_hook(ifindex);
      return filters.error();
    }
    const std::optional<TcPlace> place = free_tc_place(*filters);
    if (!place) {
      if (out.own_hook) destroy_hook(ifindex);
      return Error{fmt::format("no free place for levee's tc filter: the clsact ingress hook's priorities 1 to {} "
                               "all hold filters levee cannot share",
                               kTcPriorities),
                   0, "see them with: tc filter show dev IFACE ingress"};
    }
    bpf_tc_opts o = tc_filter_opts(*place);
    o.prog_fd = prog_fd;
    err = bpf_tc_attach(&hook, &o);  // without BPF_TC_F_REPLACE: never over a filter
    out.place = *place;
  }
  if (err) {
    if (out.own_hook) destroy_hook(ifindex);
    return sys_error(
        fmt::format("attach levee's tc program (handle {:#x}, priority {})", out.place.handle, out.place.priority),
        -err);
  }
  return out;
}

Status detach_handoff(unsigned ifindex, TcPlace place, bool own_hook, const ProgIdentity& ours) {
  if (place.handle && ours_at(ifindex, place, ours)) {
    bpf_tc_hook hook = tc_ingress_hook(ifindex);
    bpf_tc_opts o = tc_filter_opts(place);
    int err = bpf_tc_detach(&hook, &o);
    if (err && err != -ENOENT && err != -ENODEV && err != -EINVAL)
      return sys_error(
          fmt::format("remove levee's tc filter (handle {:#x}, priority {})", place.handle, place.priority), -err);
  }
  if (own_hook && hook_empty(ifindex)) destroy_hook(ifindex);
  return {};
}

bool handoff_at(unsigned ifindex, TcPlace place, const ProgIdentity& ours) { return ours_at(ifindex, place, ours); }

}  // namespace levee
