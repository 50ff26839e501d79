#include "datapath/kernel.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdarg>
#include <mutex>
#include <sstream>

#include "core/input_file.hpp"
#include "core/quote.hpp"
#include "datapath/pins.hpp"

namespace levee {
namespace {

constexpr int kCapNetAdmin = 12, kCapSysAdmin = 21, kCapBpf = 39;

bool has_cap(unsigned long long eff, int cap) { return (eff >> cap) & 1; }

unsigned long long effective_caps() {
  auto f = read_input("/proc/self/status", {.what = "the process's status", .max_bytes = kMaxKernelFileBytes});
  if (!f) return 0;
  std::istringstream in(f->text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("CapEff:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
  return 0;
}

bool g_verbose = false;
std::mutex g_log_mu;
std::string g_log;

int libbpf_print(enum libbpf_print_level level, const char* fmt, va_list args) {
  char buf[4096];
  vsnprintf(buf, sizeof buf, fmt, args);
  if (g_verbose) {
    fputs(buf, stderr);
    return 0;
  }
  if (level == LIBBPF_DEBUG) return 0;
  std::lock_guard lock(g_log_mu);
  g_log += buf;
  if (g_log.size() > 16384) g_log.erase(0, g_log.size() - 16384);
  return 0;
}

}  // namespace

Status check_privileges(std::string_view action) {
  if (geteuid() == 0) return {};
  unsigned long long eff = effective_caps();
  bool bpf_ok = has_cap(eff, kCapBpf) || has_cap(eff, kCapSysAdmin);
  if (bpf_ok && has_cap(eff, kCapNetAdmin)) return {};
  return Error{fmt::format("levee {} needs root (CAP_BPF and CAP_NET_ADMIN)", action), EPERM,
               "run it as root, e.g. with sudo"};
}

Status check_bpffs() {
  struct statfs st {};
  if (statfs(kBpffs, &st) != 0 || static_cast<unsigned long>(st.f_type) != BPF_FS_MAGIC)
    return Error{fmt::format("{} is not a mounted BPF filesystem", kBpffs), 0,
                 fmt::format("mount it with: mount -t bpf bpf {}", kBpffs)};
  return {};
}

Status preflight(std::string_view action) {
  LV_TRY(check_privileges(action));
  LV_TRY(check_bpffs());
  return check_pin_root();
}

Result<unsigned> iface_index(const std::string& iface) {
  if (iface.empty() || iface.size() >= IF_NAMESIZE || iface.find('/') != std::string::npos)
    return usage_error(fmt::format("{} is not a valid interface name", quote_value(iface)));
  unsigned idx = if_nametoindex(iface.c_str());
  if (idx == 0)
    return Error{fmt::format("no interface named {} in this network namespace", iface), 0,
                 "list interfaces with: ip link"};
  return idx;
}

Result<Fd> open_pin(const std::string& path) {
  int fd = bpf_obj_get(path.c_str());
  if (fd < 0) return sys_error(fmt::format("open {}", path), -fd);
  return Fd(fd);
}

std::string iface_name(unsigned ifindex) {
  char buf[IF_NAMESIZE] = {};
  return if_indextoname(ifindex, buf) ? std::string(buf) : std::string();
}

std::string attached_mode(unsigned ifindex) {
  bpf_xdp_query_opts q{};
  q.sz = sizeof q;
  if (bpf_xdp_query(static_cast<int>(ifindex), 0, &q) != 0) return "unknown";
  switch (q.attach_mode) {
    case XDP_ATTACHED_DRV:
      return "native";
    case XDP_ATTACHED_SKB:
      return "generic";
    case XDP_ATTACHED_HW:
      return "offload";
    case XDP_ATTACHED_MULTI:
      return "multi";
    default:
      return "none";
  }
}

uint32_t map_max_entries(int map_fd) {
  bpf_map_info mi{};
  uint32_t len = sizeof mi;
  return bpf_obj_get_info_by_fd(map_fd, &mi, &len) == 0 ? mi.max_entries : 0;
}

void set_libbpf_verbose(bool verbose) {
  g_verbose = verbose;
  libbpf_set_print(libbpf_print);
}

std::string libbpf_last_warnings() {
  std::lock_guard lock(g_log_mu);
  return g_log;
}

}  // namespace levee
