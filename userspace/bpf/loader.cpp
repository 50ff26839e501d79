#include "bpf/loader.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <linux/if_link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "bpf/kernel.hpp"
#include "bpf/maps.hpp"
#include "bpf/policy_map.hpp"
#include "core/lock.hpp"
#include "levee_bpf.skel.h"

namespace fs = std::filesystem;

namespace levee {
namespace {

struct SkelDeleter {
  void operator()(levee_bpf* s) const { levee_bpf__destroy(s); }
};
using SkelPtr = std::unique_ptr<levee_bpf, SkelDeleter>;

// Removes a staging directory unless committed.
class StagingDir {
 public:
  explicit StagingDir(std::string path) : path_(std::move(path)) {}
  ~StagingDir() {
    if (!committed_) (void)remove_pin_dir(path_);
  }
  const std::string& path() const { return path_; }
  void commit() { committed_ = true; }

 private:
  std::string path_;
  bool committed_ = false;
};

std::string last_line(const std::string& s) {
  size_t end = s.find_last_not_of("\n ");
  if (end == std::string::npos) return {};
  size_t start = s.rfind('\n', end);
  return s.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

uint32_t prog_id_of(int prog_fd) {
  bpf_prog_info info{};
  uint32_t len = sizeof info;
  return bpf_obj_get_info_by_fd(prog_fd, &info, &len) == 0 ? info.id : 0;
}

std::string attached_mode(unsigned ifindex) {
  bpf_xdp_query_opts q{};
  q.sz = sizeof q;
  if (bpf_xdp_query(static_cast<int>(ifindex), 0, &q) != 0) return "unknown";
  switch (q.attach_mode) {
    case XDP_ATTACHED_DRV: return "native";
    case XDP_ATTACHED_SKB: return "generic";
    case XDP_ATTACHED_HW: return "offload";
    case XDP_ATTACHED_MULTI: return "multi";
    default: return "none";
  }
}

Result<Fd> create_link(int prog_fd, unsigned ifindex, uint32_t flags) {
  bpf_link_create_opts lo{};
  lo.sz = sizeof lo;
  lo.flags = flags;
  int fd = bpf_link_create(prog_fd, static_cast<int>(ifindex), BPF_XDP, &lo);
  if (fd < 0) return sys_error("create XDP link", -fd);
  return Fd(fd);
}

lv_policy one_class_policy(const Limits& l) {
  lv_policy p{};
  p.nr_classes = 1;
  p.classes[0] = compile_class(l, clock_tick_ns());
  return p;
}

Status preflight(const std::string& action) {
  LV_TRY(check_privileges(action));
  LV_TRY(check_bpffs());
  return {};
}

}  // namespace

const char* mode_name(lv_attach_mode m) {
  switch (m) {
    case LV_MODE_NATIVE: return "native";
    case LV_MODE_GENERIC: return "generic";
    default: return "auto";
  }
}

Result<AttachResult> attach(const AttachOptions& o) {
  LV_TRY(validate(o.limits));
  LV_TRY(preflight("attach"));
  auto ifindex = iface_index(o.iface);
  if (!ifindex) return ifindex.error();
  auto lock = IfaceLock::acquire(o.iface);
  if (!lock) return lock.error();

  const std::string dir = pin_dir(o.iface);
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    auto p = open_pinned(o.iface);
    if (p) {
      auto st = query_status(p.value());
      if (st && st->defunct)
        return Error{fmt::format("{} has levee pins left from an interface that is gone", o.iface), 0,
                     fmt::format("clear them with: levee detach {}", o.iface)};
      if (st)
        return Error{fmt::format("{} is already attached (program {}, {} mode, {} pps, burst {})",
                                 o.iface, st->prog_id, st->mode, st->limits.rate, st->limits.burst),
                     0, fmt::format("change limits with levee set {0}, or detach first: levee detach {0}", o.iface)};
    }
    return Error{fmt::format("{} is already attached", o.iface), 0,
                 fmt::format("detach first: levee detach {}", o.iface)};
  }

  bpf_xdp_query_opts q{};
  q.sz = sizeof q;
  if (bpf_xdp_query(static_cast<int>(*ifindex), 0, &q) == 0 && q.attach_mode != XDP_ATTACHED_NONE)
    return Error{fmt::format("{} already has an XDP program (id {}) that levee does not manage", o.iface,
                             q.prog_id ? q.prog_id : (q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id)),
                 0, fmt::format("remove it first: ip link set dev {} xdp off", o.iface)};

  SkelPtr skel(levee_bpf__open());
  if (!skel) return sys_error("open the embedded XDP program");
  if (int err = bpf_map__set_max_entries(skel->maps.lv_state, o.max_sources); err)
    return sys_error("size the per-source map", -err);
  if (int err = levee_bpf__load(skel.get()); err) {
    std::string why = last_line(libbpf_last_warnings());
    if (-err == ENOMEM || -err == E2BIG)
      return sys_error(fmt::format("load the XDP program with --max-sources {}", o.max_sources), -err,
                       "the kernel could not allocate the per-source map; lower --max-sources");
    return sys_error("load the XDP program", -err,
                     why.empty() ? "the kernel refused it; run with --verbose for the verifier log"
                                 : fmt::format("the kernel refused it ({}); run with --verbose for the verifier log", why));
  }

  auto policy = PolicyMap::map(bpf_map__fd(skel->maps.lv_policy));
  if (!policy) return policy.error();
  policy->init(one_class_policy(o.limits), *ifindex, o.mode);

  // Attach. auto: native first, generic if the driver cannot.
  const int prog_fd = bpf_program__fd(skel->progs.levee_xdp);
  AttachResult res;
  Result<Fd> link = Error{};
  if (o.mode == LV_MODE_GENERIC) {
    link = create_link(prog_fd, *ifindex, XDP_FLAGS_SKB_MODE);
  } else {
    link = create_link(prog_fd, *ifindex, XDP_FLAGS_DRV_MODE);
    if (!link && o.mode == LV_MODE_AUTO && link.error().err != EBUSY && link.error().err != EEXIST) {
      res.fallback = fmt::format("native XDP refused ({})", std::strerror(link.error().err));
      link = create_link(prog_fd, *ifindex, XDP_FLAGS_SKB_MODE);
    }
  }
  if (!link) {
    Error e = link.error();
    e.what = fmt::format("attach to {} in {} mode", o.iface, mode_name(o.mode));
    if (e.err == EBUSY || e.err == EEXIST)
      e.hint = fmt::format("another XDP program is attached; see: ip link show dev {}", o.iface);
    else if (o.mode == LV_MODE_NATIVE)
      e.hint = "the driver may not support native XDP; retry with --mode generic";
    return e;
  }

  // Pin into a staging directory, then rename it into place.
  if (mkdir(kPinRoot, 0700) != 0 && errno != EEXIST) return sys_error(fmt::format("create {}", kPinRoot));
  remove_leftovers(o.iface);  // of a controller killed mid-attach or mid-detach
  StagingDir staging(work_dir(o.iface, "staging", getpid()));
  if (mkdir(staging.path().c_str(), 0700) != 0) return sys_error(fmt::format("create {}", staging.path()));
  struct Obj { int fd; const char* name; };
  for (Obj obj : {Obj{link->get(), LV_PIN_LINK}, Obj{bpf_map__fd(skel->maps.lv_state), LV_MAP_STATE},
                  Obj{bpf_map__fd(skel->maps.lv_policy), LV_MAP_POLICY},
                  Obj{bpf_map__fd(skel->maps.lv_percpu), LV_MAP_PERCPU}}) {
    std::string path = fmt::format("{}/{}", staging.path(), obj.name);
    if (int err = bpf_obj_pin(obj.fd, path.c_str()); err) return sys_error(fmt::format("pin {}", path), -err);
  }
  if (rename(staging.path().c_str(), dir.c_str()) != 0) return sys_error(fmt::format("create {}", dir));
  staging.commit();

  res.mode = attached_mode(*ifindex);
  res.prog_id = prog_id_of(prog_fd);
  return res;
}

Status detach(const std::string& iface) {
  LV_TRY(preflight("detach"));
  if (iface.empty() || iface.size() >= 16 || iface.find_first_of("/: \t") != std::string::npos)
    return usage_error(fmt::format("'{}' is not a valid interface name", iface));
  auto lock = IfaceLock::acquire(iface);
  if (!lock) return lock.error();
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
  // Detach explicitly: closing the last reference would also do it, but a reader
  // (a running `levee stats`) may hold one.
  if (auto link = open_pin(fmt::format("{}/{}", gone, LV_PIN_LINK)); link) {
    int err = bpf_link_detach(link->get());
    if (err && -err != ENOLINK && -err != EINVAL && -err != ENODEV)
      return sys_error(fmt::format("detach the XDP program from {}", iface), -err,
                       fmt::format("its pins are in {}; retry: levee detach {}", gone, iface));
  }
  LV_TRY(remove_pin_dir(gone));
  rmdir(kPinRoot);  // only succeeds when no interface is left
  return {};
}

Result<IfaceStatus> query_status(const Pinned& p) {
  IfaceStatus s;
  s.iface = p.iface;
  bpf_link_info li{};
  uint32_t len = sizeof li;
  if (bpf_obj_get_info_by_fd(p.link.get(), &li, &len) != 0) return sys_error(fmt::format("inspect {} link", p.iface));
  s.link_id = li.id;
  s.prog_id = li.prog_id;
  s.ifindex = li.xdp.ifindex;
  s.defunct = s.ifindex == 0;
  // Pins are shared by every network namespace, interface indexes are not: the index
  // means our interface only if it carries the pinned name here.
  s.other_netns = !s.defunct && iface_name(s.ifindex) != p.iface;
  s.mode = s.defunct || s.other_netns ? "" : attached_mode(s.ifindex);

  auto pm = PolicyMap::map(p.policy.get());
  if (!pm) return pm.error();
  if (pm->control().abi_version != LV_ABI_VERSION)
    return Error{fmt::format("{} was attached by a levee with state layout {}, this one uses {}", p.iface,
                             pm->control().abi_version, LV_ABI_VERSION),
                 0, fmt::format("detach and attach again: levee detach {}", p.iface)};
  const lv_policy& pol = pm->active();
  s.limits = limits_of(pol.classes[0]);
  s.effective_rate = effective_rate(pol.classes[0]);
  s.fast_reject = pol.classes[0].flags & LV_CLASS_FAST_REJECT;
  s.generation = pol.generation;

  bpf_map_info mi{};
  len = sizeof mi;
  if (bpf_obj_get_info_by_fd(p.state.get(), &mi, &len) == 0) s.max_sources = mi.max_entries;
  auto n = count_sources(p.state.get());
  if (!n) return n.error();
  s.sources = *n;
  return s;
}

Result<Limits> set_limits(const std::string& iface, const Limits& req, bool rate_given, bool burst_given,
                          bool prefix4_given, bool prefix6_given) {
  LV_TRY(preflight("set"));
  auto lock = IfaceLock::acquire(iface);
  if (!lock) return lock.error();
  auto p = open_pinned(iface);
  if (!p) return p.error();
  auto pm = PolicyMap::map(p->policy.get());
  if (!pm) return pm.error();
  if (pm->control().abi_version != LV_ABI_VERSION)
    return Error{fmt::format("{} was attached by a levee with a different state layout", iface), 0,
                 fmt::format("detach and attach again: levee detach {}", iface)};

  lv_policy next = pm->active();
  Limits l = limits_of(next.classes[0]);
  if (rate_given) l.rate = req.rate;
  if (burst_given) l.burst = req.burst;
  if (prefix4_given) l.prefix4 = req.prefix4;
  if (prefix6_given) l.prefix6 = req.prefix6;
  LV_TRY(validate(l));
  next.classes[0] = compile_class(l, clock_tick_ns());
  LV_TRY(pm->publish(next));
  return l;
}

}  // namespace levee
