#include "datapath/attach.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <linux/if_link.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.hpp"
#include "core/iface.hpp"
#include "core/lock.hpp"
#include "core/quote.hpp"
#include "datapath/cookie_file.hpp"
#include "datapath/handoff.hpp"
#include "datapath/inspect.hpp"
#include "datapath/kernel.hpp"
#include "datapath/local_routes.hpp"
#include "datapath/pins.hpp"
#include "datapath/policy_map.hpp"
#include "datapath/same_filter.hpp"
#include "levee_bpf.skel.h"
#include "policy/compile.hpp"
#include "policy/map_memory.hpp"
#include "policy/validate.hpp"

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
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;
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
  start = start == std::string::npos ? 0 : start + 1;
  return s.substr(start, end - start + 1);
}

uint32_t prog_id_of(int prog_fd) {
  bpf_prog_info info{};
  uint32_t len = sizeof info;
  return bpf_obj_get_info_by_fd(prog_fd, &info, &len) == 0 ? info.id : 0;
}

Result<Fd> create_link(int prog_fd, unsigned ifindex, uint32_t flags) {
  bpf_link_create_opts lo{};
  lo.sz = sizeof lo;
  lo.flags = flags;
  int fd = bpf_link_create(prog_fd, static_cast<int>(ifindex), BPF_XDP, &lo);
  if (fd < 0) return sys_error("create XDP link", -fd);
  return Fd(fd);
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Neither another XDP program nor levee's pins may be there already, unless those pins
// hold the very filter asked for: then there is nothing to do, and that is no error
// (a tool that makes sure of a state, such as Ansible, runs the same attach again).
Result<std::optional<AttachResult>> check_free(const AttachOptions& o, unsigned ifindex, const Clocks& clk) {
  const std::string& iface = o.iface;
  std::error_code ec;
  if (fs::exists(pin_dir(iface), ec)) {
    auto p = open_pinned(iface);
    if (p) {
      LV_TRY(refuse_orphaned(p.value()));
      auto st = query_status(p.value(), false);
      if (st) {
        LV_TRY_ASSIGN(const auto differ, attach_differences(p.value(), o, clk));
        if (differ.empty()) {
          AttachResult same;
          same.mode = st->mode;
          same.prog_id = st->prog_id;
          same.already = true;
          return std::optional<AttachResult>(same);
        }
        return Error{fmt::format("{} is already attached (program {}, {} mode, policy from {}) with other settings: {}",
                                 iface, st->prog_id, st->mode, st->source, joined(differ)),
                     0,
                     fmt::format("change its policy with levee reload or levee set; the XDP mode and map sizes only "
                                 "by attaching again: levee detach {} first",
                                 iface)};
      }
    }
    return Error{fmt::format("{} is already attached", iface), 0, fmt::format("detach first: levee detach {}", iface)};
  }
  bpf_xdp_query_opts q{};
  q.sz = sizeof q;
  if (bpf_xdp_query(static_cast<int>(ifindex), 0, &q) == 0 && q.attach_mode != XDP_ATTACHED_NONE)
    return Error{fmt::format("{} already has an XDP program (id {}) that levee does not manage", iface,
                             q.prog_id ? q.prog_id : (q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id)),
                 0, fmt::format("remove it first: ip link set dev {} xdp off", iface)};
  return std::optional<AttachResult>{};
}

// The embedded program, its maps sized as the options say, loaded (verified); the tc
// program only where the kernel can run it.
Result<SkelPtr> load_program(const AttachOptions& o, bool handoff) {
  SkelPtr skel(levee_bpf__open());
  if (!skel) return sys_error("open the embedded XDP program");
  if (!handoff) bpf_program__set_autoload(skel->progs.levee_handoff, false);
  if (int err = bpf_map__set_max_entries(skel->maps.lv_state, o.max_sources); err)
    return sys_error("size the per-source map", -err);
  if (int err = bpf_map__set_max_entries(skel->maps.lv_bans, o.max_bans); err)
    return sys_error("size the ban records map", -err);
  if (int err = levee_bpf__load(skel.get()); err) {
    std::string why = last_line(libbpf_last_warnings());
    if (-err == ENOMEM || -err == E2BIG)
      return sys_error(
          fmt::format("load the XDP program with --max-sources {} and max_bans {}", o.max_sources, o.max_bans), -err,
          "the kernel could not allocate the per-source or ban map; lower --max-sources or max_bans");
    return sys_error("load the XDP program", -err,
                     why.empty()
                         ? "the kernel refused it; run with --verbose for the verifier log"
                         : fmt::format("the kernel refused it ({}); run with --verbose for the verifier log", why));
  }
  return skel;
}

// The SYN cookies' keys: those a detach of the interface left within a cookie's life
// (cookie_file.hpp), else fresh ones. `kept` says which.
Status cookie_keys_for(const std::string& iface, uint64_t (&keys)[2][2], bool& kept) {
  if (auto saved = take_cookie_keys(iface)) {
    for (unsigned s = 0; s < 2; ++s)
      for (unsigned i = 0; i < 2; ++i) keys[s][i] = saved->keys[s][i];
    kept = true;
    return {};
  }
  kept = false;
  if (getrandom(keys, sizeof keys, 0) != sizeof keys) return sys_error("draw the SYN cookies' keys");
  return {};
}

// Takes levee's tc filter off again unless the attach got through.
class HandoffGuard {
 public:
  explicit HandoffGuard(unsigned ifindex) : ifindex_(ifindex) {}
  HandoffGuard(const HandoffGuard&) = delete;
  HandoffGuard& operator=(const HandoffGuard&) = delete;
  ~HandoffGuard() {
    if (on_ && !committed_) (void)detach_handoff(ifindex_, at_.place, at_.own_hook, prog_);
  }
  void on(const TcAttached& at, int prog_fd) {
    at_ = at;
    prog_ = prog_identity(prog_fd);
    on_ = true;
  }
  bool is_on() const { return on_; }
  const TcAttached& at() const { return at_; }
  void commit() { committed_ = true; }

 private:
  unsigned ifindex_;
  TcAttached at_;
  ProgIdentity prog_;
  bool on_ = false, committed_ = false;
};

// The policy and lists into both slots, the known-source filter's seed and the cookie
// keys, whether SYN authentication proxies (and where its tc filter is), and the options
// the listener's namespace turned off, before any packet can read them.
Status write_policy(levee_bpf* skel, CompiledPolicy& compiled, unsigned ifindex, const AttachOptions& o,
                    const HandoffGuard& handoff, AttachResult& res) {
  const lv_attach_mode mode = o.mode;
  const ListFds lists = list_fds_of(skel);
  LV_TRY_ASSIGN(auto policy, PolicyMap::map(bpf_map__fd(skel->maps.lv_policy), lists));
  // lv_shared starts zeroed: every class's budgets full, and the source count that
  // LV_POL_REFUSE_FULL compares with full_at right for an empty lv_state.
  LV_TRY(policy.init(compiled.slot, Lists{std::move(compiled.list4), std::move(compiled.list6)}, ifindex, mode));
  uint32_t seed = 0;
  uint64_t cookie_keys[2][2] = {};
  if (getrandom(&seed, sizeof seed, 0) != sizeof seed) return sys_error("draw a seed for the known-source filter");
  LV_TRY(cookie_keys_for(o.iface, cookie_keys, res.kept_cookie_keys));
  policy.seed_filter(seed, cookie_keys);
  const HandoffMss mss = handoff_mss(o.iface);
  policy.set_handoff(handoff.is_on(), mss.v4, mss.v6);
  if (handoff.is_on())
    policy.set_tc_place(handoff.at().place.handle, handoff.at().place.priority,
                        handoff.at().own_hook ? LV_TC_OWN_HOOK : 0);
  res.tcp_off = tcp_off_of(read_tcp_sysctls());
  policy.set_tcp_off(res.tcp_off);
  // The host's own addresses, which SYN authentication answers for.
  LV_TRY_ASSIGN(auto local, local_routes());
  LV_TRY(sync_local(bpf_map__fd(skel->maps.lv_local), local));
  policy.set_local_known();
  return {};
}

// The tc program on the interface where the kernel can run it. A class that asked for
// "proxy" needs it; "cookie" falls back to reset (the reason in `no_proxy`).
Status put_handoff(levee_bpf* skel, const AttachOptions& o, const HandoffSupport& support, unsigned ifindex,
                   HandoffGuard& guard, AttachResult& res) {
  const int prog_fd = bpf_program__fd(skel->progs.levee_handoff);
  Result<TcAttached> at = support.ok ? attach_handoff(prog_fd, ifindex) : Result<TcAttached>(Error{support.why, 0, ""});
  if (at) {
    guard.on(*at, prog_fd);
    res.tc_place = at->place;
    return {};
  }
  res.no_proxy = at.error().message();
  return require_handoff(o.policy, res.no_proxy);
}

// The XDP link in the mode asked for; auto: native first, generic if the driver cannot.
Result<Fd> link_program(int prog_fd, unsigned ifindex, const AttachOptions& o, AttachResult& res) {
  Result<Fd> link = Error{};
  if (o.mode == LV_MODE_GENERIC) {
    link = create_link(prog_fd, ifindex, XDP_FLAGS_SKB_MODE);
  } else {
    link = create_link(prog_fd, ifindex, XDP_FLAGS_DRV_MODE);
    if (!link && o.mode == LV_MODE_AUTO && link.error().err != EBUSY && link.error().err != EEXIST) {
      res.fallback = fmt::format("native XDP refused ({})", std::strerror(link.error().err));
      link = create_link(prog_fd, ifindex, XDP_FLAGS_SKB_MODE);
    }
  }
  if (link) return link;
  Error e = link.error();
  e.what = fmt::format("attach to {} in {} mode", o.iface, mode_name(o.mode));
  if (e.err == EBUSY || e.err == EEXIST)
    e.hint = fmt::format("another XDP program is attached; see: ip link show dev {}", o.iface);
  else if (o.mode == LV_MODE_NATIVE)
    e.hint = "the driver may not support native XDP; retry with --mode generic";
  return e;
}

// An object to pin: its fd and its name in the pin directory.
struct PinObj {
  int fd;
  const char* name;
};

// Pin the objects into a staging directory, then rename it into place.
Status pin_into_place(const std::vector<PinObj>& objs, const std::string& iface) {
  LV_TRY(make_pin_root());
  remove_leftovers(iface);  // of a controller killed mid-attach or mid-detach
  StagingDir staging(work_dir(iface, "staging", getpid()));
  if (mkdir(staging.path().c_str(), 0700) != 0) return sys_error(fmt::format("create {}", staging.path()));
  for (PinObj obj : objs) {
    std::string path = fmt::format("{}/{}", staging.path(), obj.name);
    if (int err = bpf_obj_pin(obj.fd, path.c_str()); err) return sys_error(fmt::format("pin {}", path), -err);
  }
  const std::string dir = pin_dir(iface);
  if (rename(staging.path().c_str(), dir.c_str()) != 0) return sys_error(fmt::format("create {}", dir));
  staging.commit();
  return {};
}

// The link and every map of a freshly loaded program, and its tc program where the
// attach put it on the interface: for_each_pin()'s list, its fds from the skeleton.
std::vector<PinObj> pin_objects(levee_bpf* skel, const Fd& link, bool handoff) {
  const Pinned names;  // only for_each_pin()'s names are read
  std::vector<PinObj> objs;
  for_each_pin(names, [&](const Fd&, const char* name, bool) {
    const std::string_view n = name;
    if (n == LV_PIN_LINK)
      objs.push_back(PinObj{link.get(), name});
    else if (n == kPinHandoff) {
      if (handoff) objs.push_back(PinObj{bpf_program__fd(skel->progs.levee_handoff), name});
    } else
      objs.push_back(PinObj{bpf_object__find_map_fd_by_name(skel->obj, name), name});
  });
  return objs;
}

}  // namespace

AttachOptions attach_options(const std::string& iface, Policy p) {
  AttachOptions o;
  o.iface = iface;
  if (p.iface.mode) o.mode = *p.iface.mode;
  if (p.iface.max_sources) o.max_sources = *p.iface.max_sources;
  if (p.iface.max_bans) o.max_bans = *p.iface.max_bans;
  o.policy = std::move(p);
  return o;
}

Result<AttachResult> attach(const AttachOptions& o) {
  const Clocks clocks = Clocks::read();
  LV_TRY(validate(o.policy, clocks.now_unix_ns));
  // The maps are allocated whole at load: refuse before anything is asked of the kernel.
  LV_TRY(check_map_memory(o.max_sources, o.max_bans, read_mem_total(), o.exceed_memory_cap));
  LV_TRY(preflight("attach"));
  LV_TRY_ASSIGN(auto ifindex, iface_index(o.iface));
  LV_TRY_ASSIGN(auto lock, IfaceLock::acquire(o.iface));
  LV_TRY_ASSIGN(auto already, check_free(o, ifindex, clocks));
  if (already) return *already;

  CompiledPolicy compiled = compile(o.policy, clocks);
  // The file's max_sources may have been overridden by --max-sources.
  compiled.slot.full_at = refuse_full_at(o.max_sources, possible_cpus());
  const HandoffSupport support = handoff_support();
  if (!support.ok) LV_TRY(require_handoff(o.policy, support.why));
  LV_TRY_ASSIGN(auto skel, load_program(o, support.ok));
  AttachResult res;
  // The tc program first: it acts only on frames the XDP program marks.
  HandoffGuard handoff(ifindex);
  LV_TRY(put_handoff(skel.get(), o, support, ifindex, handoff, res));
  LV_TRY(write_policy(skel.get(), compiled, ifindex, o, handoff, res));

  const int prog_fd = bpf_program__fd(skel->progs.levee_xdp);
  LV_TRY_ASSIGN(auto link, link_program(prog_fd, ifindex, o, res));
  LV_TRY(pin_into_place(pin_objects(skel.get(), link, handoff.is_on()), o.iface));
  handoff.commit();
  res.mode = attached_mode(ifindex);
  res.prog_id = prog_id_of(prog_fd);
  return res;
}

bool link_attached(const Pinned& p) {
  bpf_link_info li{};
  uint32_t len = sizeof li;
  // Unreadable counts as attached: only the kernel's own "ifindex 0" says it ended.
  if (bpf_obj_get_info_by_fd(p.link.get(), &li, &len) != 0) return true;
  return li.xdp.ifindex != 0;
}

Status repin(const Pinned& p) {
  LV_TRY(check_bpffs());
  LV_TRY_ASSIGN(auto lock, IfaceLock::acquire(p.iface));
  std::error_code ec;
  if (fs::exists(pin_dir(p.iface), ec))
    return Error{fmt::format("{} exists already", pin_dir(p.iface)), 0,
                 fmt::format("see what it holds with: levee status {}", p.iface)};
  std::vector<PinObj> objs;
  for_each_pin(p, [&](const Fd& fd, const char* name, bool) {
    if (fd.valid()) objs.push_back(PinObj{fd.get(), name});
  });
  return pin_into_place(objs, p.iface);
}

}  // namespace levee
