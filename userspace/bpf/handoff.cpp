#include "bpf/handoff.hpp"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <linux/btf.h>

#include <cerrno>
#include <charconv>

#include "core/input_file.hpp"

namespace levee {
namespace {

// A small number from a /proc or /sys file, or -1.
long read_number(const std::string& path) {
  auto f = read_input(path, {.what = "a kernel setting", .max_bytes = kMaxKernelFileBytes});
  long v = -1;
  if (!f || std::from_chars(f->text.data(), f->text.data() + f->text.size(), v).ec != std::errc()) return -1;
  return v;
}

bpf_tc_hook ingress_hook(unsigned ifindex) {
  bpf_tc_hook hook{};
  hook.sz = sizeof hook;
  hook.ifindex = static_cast<int>(ifindex);
  hook.attach_point = BPF_TC_INGRESS;
  return hook;
}

bpf_tc_opts our_filter() {
  bpf_tc_opts o{};
  o.sz = sizeof o;
  o.handle = kTcHandle;
  o.priority = kTcPriority;
  return o;
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

Status attach_handoff(int prog_fd, unsigned ifindex) {
  bpf_tc_hook hook = ingress_hook(ifindex);
  if (int err = bpf_tc_hook_create(&hook); err && err != -EEXIST)
    return sys_error("create the interface's clsact hook for levee's tc program", -err);
  bpf_tc_opts o = our_filter();
  o.prog_fd = prog_fd;
  o.flags = BPF_TC_F_REPLACE;
  if (int err = bpf_tc_attach(&hook, &o); err)
    return sys_error(fmt::format("attach levee's tc program (handle {:#x}, priority {})", kTcHandle, kTcPriority),
                     -err);
  return {};
}

Status detach_handoff(unsigned ifindex) {
  bpf_tc_hook hook = ingress_hook(ifindex);
  bpf_tc_opts o = our_filter();
  int err = bpf_tc_detach(&hook, &o);
  if (err && err != -ENOENT && err != -ENODEV && err != -EINVAL)
    return sys_error(fmt::format("remove levee's tc filter (handle {:#x})", kTcHandle), -err);
  return {};
}

uint32_t handoff_prog_id(unsigned ifindex) {
  bpf_tc_hook hook = ingress_hook(ifindex);
  bpf_tc_opts o = our_filter();
  return bpf_tc_query(&hook, &o) == 0 ? o.prog_id : 0;
}

}  // namespace levee
