#include "bpf/loader.hpp"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <linux/if_link.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <tuple>

#include "bpf/kernel.hpp"
#include "core/lock.hpp"
#include "levee_bpf.skel.h"
#include "limiter.h"
#include "policy/class_ids.hpp"
#include "policy/compile.hpp"
#include "policy/keys.hpp"
#include "policy/lists.hpp"
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

Result<Fd> create_link(int prog_fd, unsigned ifindex, uint32_t flags) {
  bpf_link_create_opts lo{};
  lo.sz = sizeof lo;
  lo.flags = flags;
  int fd = bpf_link_create(prog_fd, static_cast<int>(ifindex), BPF_XDP, &lo);
  if (fd < 0) return sys_error("create XDP link", -fd);
  return Fd(fd);
}

Status preflight(const std::string& action) {
  LV_TRY(check_privileges(action));
  LV_TRY(check_bpffs());
  return {};
}

Lists lists_of(CompiledPolicy& c) { return Lists{std::move(c.list4), std::move(c.list6)}; }

// An attached interface opened for a change: preflight done, lock held, policy mapped.
struct Session {
  IfaceLock lock;
  Pinned pins;
  PolicyMap policy;
  SharedMap shared;

  static Result<Session> open(const std::string& iface, const std::string& action) {
    LV_TRY(preflight(action));
    LV_TRY_ASSIGN(auto lock, IfaceLock::acquire(iface));
    LV_TRY_ASSIGN(auto p, open_pinned(iface));
    LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
    LV_TRY_ASSIGN(auto sh, SharedMap::map(p.shared.get()));
    return Session{std::move(lock), std::move(p), std::move(pm), std::move(sh)};
  }

  uint32_t max_sources() const {
    bpf_map_info mi{};
    uint32_t len = sizeof mi;
    return bpf_obj_get_info_by_fd(pins.state.get(), &mi, &len) == 0 ? mi.max_entries : LV_DEFAULT_MAX_SOURCES;
  }
};

// The per-CPU hot entries remember a rejected source's ready time for the current
// generation: after lowering one (an unban), publish the same policy to forget them.
Status republish(Session& sess) {
  LV_TRY_ASSIGN(auto lists, sess.policy.active_lists());
  return sess.policy.publish(sess.policy.active(), lists);
}

// The most a limit can push a source's ready time past now by itself: one packet's cost
// (a byte limit: the cost of the largest frame). Further ahead, a ban pushed it.
uint64_t limit_reach(const lv_limit& l, bool bytes) {
  constexpr uint64_t kMaxFrame = 65536;
  return bytes ? static_cast<uint64_t>((static_cast<unsigned __int128>(l.cost) * kMaxFrame) >> LV_BYTE_SHIFT) : l.cost;
}

// A list entry in the form both families share, for merging and display.
struct AnyEntry {
  Cidr cidr;
  lv_list_value value;
};

template <typename Key>
Cidr cidr_of(const Key& k);
template <>
Cidr cidr_of(const lv_lpm4& k) {
  Cidr c;
  c.family = 4;
  c.len = k.prefixlen;
  std::memcpy(c.addr.data(), &k.addr, 4);
  return c;
}
template <>
Cidr cidr_of(const lv_lpm6& k) {
  Cidr c;
  c.family = 6;
  c.len = k.prefixlen;
  std::memcpy(c.addr.data(), k.addr, 16);
  return c;
}

std::vector<AnyEntry> flatten(const Lists& l) {
  std::vector<AnyEntry> out;
  for (const auto& [k, v] : l.v4) out.push_back({cidr_of(k), v});
  for (const auto& [k, v] : l.v6) out.push_back({cidr_of(k), v});
  return out;
}

int precedence(uint8_t kind) {
  return kind == LV_LIST_ALLOW ? 3 : kind == LV_LIST_DENY ? 2 : kind == LV_LIST_OVERRIDE ? 1 : 0;
}

// Back to tries: one value per prefix (the higher precedence wins), fallbacks computed.
Lists rebuild(const std::vector<AnyEntry>& entries) {
  std::map<std::pair<uint8_t, std::pair<unsigned, std::array<uint8_t, 16>>>, lv_list_value> merged;
  for (const AnyEntry& e : entries) {
    auto key = std::make_pair(e.cidr.family, std::make_pair(e.cidr.len, e.cidr.addr));
    auto [it, fresh] = merged.emplace(key, e.value);
    if (!fresh && precedence(e.value.kind) >= precedence(it->second.kind)) it->second = e.value;
  }
  Lists out;
  for (const auto& [k, v] : merged) {
    const auto& [family, pk] = k;
    if (family == 4) {
      lv_lpm4 key{pk.first, 0};
      std::memcpy(&key.addr, pk.second.data(), 4);
      out.v4.emplace_back(key, v);
    } else {
      lv_lpm6 key{pk.first, {}};
      std::memcpy(key.addr, pk.second.data(), 16);
      out.v6.emplace_back(key, v);
    }
  }
  compute_fallbacks(out.v4);
  compute_fallbacks(out.v6);
  return out;
}

uint64_t mono_to_unix(uint64_t mono, const Clocks& c) { return mono ? c.to_unix(mono) : 0; }

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
  LV_TRY(preflight("attach"));
  LV_TRY_ASSIGN(auto ifindex, iface_index(o.iface));
  LV_TRY_ASSIGN(auto lock, IfaceLock::acquire(o.iface));

  const std::string dir = pin_dir(o.iface);
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    auto p = open_pinned(o.iface);
    if (p) {
      auto st = query_status(p.value(), false);
      if (st && st->defunct)
        return Error{fmt::format("{} has levee pins left from an interface that is gone", o.iface), 0,
                     fmt::format("clear them with: levee detach {}", o.iface)};
      if (st)
        return Error{
            fmt::format("{} is already attached (program {}, {} mode, policy from {})", o.iface, st->prog_id, st->mode,
                        st->source),
            0, fmt::format("change it with levee set or levee reload, or detach first: levee detach {}", o.iface)};
    }
    return Error{fmt::format("{} is already attached", o.iface), 0,
                 fmt::format("detach first: levee detach {}", o.iface)};
  }

  bpf_xdp_query_opts q{};
  q.sz = sizeof q;
  if (bpf_xdp_query(static_cast<int>(ifindex), 0, &q) == 0 && q.attach_mode != XDP_ATTACHED_NONE)
    return Error{fmt::format("{} already has an XDP program (id {}) that levee does not manage", o.iface,
                             q.prog_id ? q.prog_id : (q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id)),
                 0, fmt::format("remove it first: ip link set dev {} xdp off", o.iface)};

  CompiledPolicy compiled = compile(o.policy, clocks);

  SkelPtr skel(levee_bpf__open());
  if (!skel) return sys_error("open the embedded XDP program");
  if (int err = bpf_map__set_max_entries(skel->maps.lv_state, o.max_sources); err)
    return sys_error("size the per-source map", -err);
  if (int err = bpf_map__set_max_entries(skel->maps.lv_bans, o.max_bans); err)
    return sys_error("size the ban records map", -err);
  // The file's max_sources may have been overridden by --max-sources.
  compiled.slot.full_at = refuse_full_at(o.max_sources, possible_cpus());
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

  const ListFds lists = list_fds_of(skel.get());
  LV_TRY_ASSIGN(auto policy, PolicyMap::map(bpf_map__fd(skel->maps.lv_policy), lists));
  // lv_shared starts zeroed: every class's budgets full, and the source count that
  // LV_POL_REFUSE_FULL compares with full_at right for an empty lv_state.
  LV_TRY(policy.init(compiled.slot, lists_of(compiled), ifindex, o.mode));
  uint32_t seed = 0;
  if (getrandom(&seed, sizeof seed, 0) != sizeof seed) return sys_error("draw a seed for the known-source filter");
  policy.seed_filter(seed);

  // Attach. auto: native first, generic if the driver cannot.
  const int prog_fd = bpf_program__fd(skel->progs.levee_xdp);
  AttachResult res;
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
  struct Obj {
    int fd;
    const char* name;
  };
  std::vector<Obj> objs{Obj{link->get(), LV_PIN_LINK},
                        Obj{bpf_map__fd(skel->maps.lv_state), LV_MAP_STATE},
                        Obj{bpf_map__fd(skel->maps.lv_policy), LV_MAP_POLICY},
                        Obj{bpf_map__fd(skel->maps.lv_percpu), LV_MAP_PERCPU},
                        Obj{bpf_map__fd(skel->maps.lv_shared), LV_MAP_SHARED},
                        Obj{bpf_map__fd(skel->maps.lv_bans), LV_MAP_BANS},
                        Obj{bpf_map__fd(skel->maps.lv_seen), LV_MAP_SEEN},
                        Obj{bpf_map__fd(skel->maps.lv_events), LV_MAP_EVENTS}};
  for (unsigned slot = 0; slot < 2; ++slot)
    for (unsigned m = 0; m < kListMaps; ++m) objs.push_back(Obj{lists[slot][m], kListPins[slot][m]});
  for (Obj obj : objs) {
    std::string path = fmt::format("{}/{}", staging.path(), obj.name);
    if (int err = bpf_obj_pin(obj.fd, path.c_str()); err) return sys_error(fmt::format("pin {}", path), -err);
  }
  if (rename(staging.path().c_str(), dir.c_str()) != 0) return sys_error(fmt::format("create {}", dir));
  staging.commit();

  res.mode = attached_mode(ifindex);
  res.prog_id = prog_id_of(prog_fd);
  return res;
}

Status detach(const std::string& iface) {
  LV_TRY(preflight("detach"));
  if (!valid_iface_name(iface)) return usage_error(fmt::format("'{}' is not a valid interface name", iface));
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

Result<IfaceStatus> query_status(const Pinned& p, bool walk) {
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

  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  const lv_policy& pol = pm.active();
  s.source = name_of(pol.source);
  s.class_ids = class_order(pol);
  for (uint8_t id : s.class_ids) s.classes.push_back(pol.classes[id]);
  s.overrides.assign(pol.overrides, pol.overrides + std::min<uint32_t>(pol.nr_overrides, LV_MAX_OVERRIDES));
  s.generation = pol.generation;
  LV_TRY_ASSIGN(auto lists, pm.active_lists());
  for (const AnyEntry& e : flatten(lists)) {
    if (e.value.kind == LV_LIST_ALLOW)
      ++s.allow;
    else if (e.value.kind == LV_LIST_DENY)
      ++s.deny;
    else if (e.value.kind == LV_LIST_OVERRIDE)
      ++s.override_entries;
  }

  s.policy_flags = pol.flags;
  s.full_at = pol.full_at;
  bpf_map_info mi{};
  len = sizeof mi;
  if (bpf_obj_get_info_by_fd(p.state.get(), &mi, &len) == 0) s.max_sources = mi.max_entries;
  mi = {};
  len = sizeof mi;
  if (bpf_obj_get_info_by_fd(p.bans.get(), &mi, &len) == 0) s.max_bans = mi.max_entries;
  if (walk) {
    LV_TRY_ASSIGN(auto n, count_state(p.state.get()));
    s.sources = n.sources;
    s.networks = n.networks;
    const uint64_t now = Clocks::read().now_mono_ns;
    LV_TRY(for_each_ban(p.bans.get(), [&](const lv_key&, const lv_ban& b) {
      ++s.ban_records;
      if (b.until_ns > now) ++s.bans_active;
    }));
  }
  LV_TRY_ASSIGN(auto shared, SharedMap::map(p.shared.get()));
  for (uint8_t id : s.class_ids) s.admitted.push_back(shared.admitted(id));
  return s;
}

Result<SetResult> set_limits(const std::string& iface, const LimitChange& ch) {
  LV_TRY_ASSIGN(auto sess, Session::open(iface, "set"));
  lv_policy next = sess.policy.active();
  const std::vector<uint8_t> order = class_order(next);
  std::string names;
  for (uint8_t i : order) names += (names.empty() ? "" : ", ") + name_of(next.classes[i].name);
  unsigned id = order.empty() ? 0 : order[0];
  if (ch.class_name) {
    auto it = std::find_if(order.begin(), order.end(),
                           [&](uint8_t i) { return name_of(next.classes[i].name) == *ch.class_name; });
    if (it == order.end())
      return usage_error(fmt::format("{} has no class '{}'", iface, *ch.class_name),
                         fmt::format("its classes: {}", names));
    id = *it;
  } else if (order.size() > 1 && ch.class_changes()) {
    return usage_error(fmt::format("{} has {} classes: say which with --class NAME", iface, order.size()),
                       fmt::format("its classes: {}", names));
  }
  SetResult r;
  if (ch.class_changes()) {
    const ClassSpec before = class_of(next.classes[id]);
    ClassSpec c = before;
    if (ch.rate) c.packets.rate = *ch.rate;
    if (ch.burst) c.packets.burst = *ch.burst;
    if (ch.bytes_rate) c.bytes.rate = *ch.bytes_rate;
    if (ch.bytes_burst) c.bytes.burst = *ch.bytes_burst;
    if (ch.prefix4) c.prefix4 = *ch.prefix4;
    if (ch.prefix6) c.prefix6 = *ch.prefix6;
    // A default given by the file follows the value it derives from; one chosen stays.
    if (ch.new_sources) {
      const bool default_burst =
          !before.new_sources.set() || before.new_sources.burst == default_new_sources_burst(before.new_sources.rate);
      c.new_sources.rate = *ch.new_sources;
      if (*ch.new_sources == 0)
        c.new_sources = {};
      else if (default_burst)
        c.new_sources.burst = default_new_sources_burst(*ch.new_sources);
    }
    if (ch.new_sources_burst) {
      if (!c.new_sources.set())
        return usage_error(fmt::format("class '{}' has no new-source limit for --new-sources-burst", c.name),
                           "give --new-sources too");
      c.new_sources.burst = *ch.new_sources_burst;
    }
    if (ch.ban_ns) {
      if (*ch.ban_ns == 0) {
        c.ban = {};
      } else {
        if (!before.ban.set() || before.ban.max_ns == std::max(before.ban.ban_ns, kHourNs)) c.ban.max_ns = 0;
        c.ban.ban_ns = *ch.ban_ns;
      }
    }
    for (auto [given, field, opt] : {std::tuple{&ch.ban_max_ns, &BanSpec::max_ns, "--ban-max"},
                                     std::tuple{&ch.forget_ns, &BanSpec::forget_ns, "--forget-after"}}) {
      if (!*given) continue;
      if (!c.ban.set())
        return usage_error(fmt::format("class '{}' bans no source: {} needs a ban", c.name, opt), "give --ban too");
      c.ban.*field = **given;
    }
    // The class as a policy of its own (its match is kept as compiled), then what
    // concerns every class.
    Policy check;
    check.classes.push_back(c);
    LV_TRY(validate(check, Clocks::read().now_unix_ns));
    std::vector<ClassSpec> all;
    for (uint8_t i : order) all.push_back(i == id ? c : class_of(next.classes[i]));
    LV_TRY(check_ban_scopes(all));
    const uint8_t epoch = next.classes[id].epoch;  // the same class: its sources keep their state
    next.classes[id] = compile_class(c, clock_tick_ns());
    next.classes[id].epoch = epoch;
    r.changed = c;
  }
  if (ch.monitor) {
    next.flags &= ~uint32_t{LV_POL_MONITOR};
    if (*ch.monitor) next.flags |= LV_POL_MONITOR;
  }
  apply_interface(next);
  LV_TRY_ASSIGN(auto lists, sess.policy.active_lists());
  LV_TRY(sess.policy.publish(next, lists));
  r.monitor = next.flags & LV_POL_MONITOR;
  r.classes = order.size();
  for (uint8_t i : order)
    if (next.classes[i].flags & LV_CLASS_MONITOR) r.monitoring.push_back(name_of(next.classes[i].name));
  return r;
}

Result<ReloadResult> reload(const std::string& iface, const Policy& p) {
  const Clocks clocks = Clocks::read();
  LV_TRY(validate(p, clocks.now_unix_ns));
  LV_TRY_ASSIGN(auto sess, Session::open(iface, "reload"));
  const lv_policy& cur = sess.policy.active();
  const uint32_t prior_flags = cur.flags;
  CompiledPolicy next = compile(p, clocks, &cur);  // classes keep their ids and state
  // The interface's monitor switch is `levee set --mode`'s, not the file's: it stays.
  next.slot.flags = (next.slot.flags & ~uint32_t{LV_POL_MONITOR}) | (prior_flags & LV_POL_MONITOR);
  apply_interface(next.slot);
  next.slot.full_at = refuse_full_at(sess.max_sources(), possible_cpus());  // the map as it is
  if (!next.new_ids.empty()) {
    // A new class starts counting from what its id counted before it.
    LV_TRY_ASSIGN(auto counters, read_counters(sess.pins.percpu.get()));
    for (uint8_t id : next.new_ids) next.slot.class_base[id] = counters.by_class[id];
  }
  LV_TRY_ASSIGN(auto cur_lists, sess.policy.active_lists());

  ReloadResult r;
  std::vector<AnyEntry> entries = flatten(Lists{next.list4, next.list6});
  for (const AnyEntry& e : flatten(cur_lists)) {
    if (e.value.origin == LV_ORIGIN_CONFIG) continue;
    AnyEntry kept = e;
    if (e.value.kind == LV_LIST_OVERRIDE) {
      const std::string name =
          e.value.override_id < LV_MAX_OVERRIDES ? name_of(cur.overrides[e.value.override_id].name) : "";
      auto it =
          std::find_if(p.overrides.begin(), p.overrides.end(), [&](const OverrideSpec& o) { return o.name == name; });
      if (it == p.overrides.end()) {
        r.dropped.push_back(fmt::format("{} (override '{}' is no longer defined)", e.cidr.to_string(), name));
        continue;
      }
      kept.value.override_id = static_cast<uint16_t>(it - p.overrides.begin());
    }
    if (e.value.expires_ns && e.value.expires_ns <= clocks.now_mono_ns) continue;  // over
    entries.push_back(kept);
    ++r.kept_runtime;
  }
  Lists lists = rebuild(entries);
  if (p.iface.attach_only())
    r.notes.push_back(
        "the interface settings (mode, max_sources, max_bans) apply at attach; a reload keeps the current ones");
  if ((next.slot.flags & LV_POL_REFUSE_FULL) && !(prior_flags & LV_POL_REFUSE_FULL)) {
    // The datapath counts the states it creates only while it refuses: start it from
    // what the map holds, before the first packet compares it with full_at.
    LV_TRY_ASSIGN(auto n, count_sources(sess.pins.state.get()));
    sess.shared.set_sources(n);
  }
  LV_TRY(sess.policy.publish(next.slot, lists));
  // A class given an id another class held: its shared budgets start full. Packets
  // still in flight under the old policy may touch the entry a moment longer.
  for (uint8_t id : next.new_ids) sess.shared.reset_class(id);
  r.generation = sess.policy.active().generation;
  r.classes = p.classes.size();
  r.list_entries = lists.v4.size() + lists.v6.size();
  return r;
}

Result<ListEditResult> edit_lists(const std::string& iface, const ListEdit& ed) {
  LV_TRY_ASSIGN(auto sess, Session::open(iface, "change the lists of"));
  const Clocks clocks = Clocks::read();
  const lv_policy& pol = sess.policy.active();
  uint16_t override_id = 0;
  if (ed.kind == LV_LIST_OVERRIDE && !ed.add.empty()) {
    const uint32_t n = std::min<uint32_t>(pol.nr_overrides, LV_MAX_OVERRIDES);
    auto it = std::find_if(pol.overrides, pol.overrides + n,
                           [&](const lv_override& o) { return name_of(o.name) == ed.override_name; });
    if (it == pol.overrides + n)
      return usage_error(fmt::format("{} has no override named '{}'", iface, ed.override_name),
                         "overrides are defined in the config file ([[override]])");
    override_id = static_cast<uint16_t>(it - pol.overrides);
  }
  if (ed.expires_unix_ns && ed.expires_unix_ns <= clocks.now_unix_ns)
    return usage_error("the expiry time is in the past");
  LV_TRY_ASSIGN(auto cur, sess.policy.active_lists());
  // One value per prefix, as in the tries; indexed, so a file of 100k entries is not
  // quadratic.
  using PrefixKey = std::tuple<uint8_t, unsigned, std::array<uint8_t, 16>>;
  std::map<PrefixKey, AnyEntry> entries;
  for (AnyEntry& e : flatten(cur)) entries.emplace(PrefixKey{e.cidr.family, e.cidr.len, e.cidr.addr}, e);
  auto expired = [&](const lv_list_value& v) { return v.expires_ns && v.expires_ns <= clocks.now_mono_ns; };

  ListEditResult r;
  for (const Cidr& c : ed.del) {
    auto it = entries.find({c.family, c.len, c.addr});
    if (it == entries.end() || it->second.value.kind != ed.kind) {
      ++r.missing;
      continue;
    }
    entries.erase(it);
    ++r.deleted;
  }
  for (const Cidr& c : ed.add) {
    lv_list_value v{};
    v.kind = static_cast<uint8_t>(ed.kind);
    v.origin = static_cast<uint8_t>(ed.origin);
    v.override_id = override_id;
    if (ed.expires_unix_ns) v.expires_ns = clocks.to_mono(ed.expires_unix_ns);
    auto [it, fresh] = entries.emplace(PrefixKey{c.family, c.len, c.addr}, AnyEntry{c, v});
    if (fresh) {
      ++r.added;
      continue;
    }
    // A prefix holds one entry: taking it from another list would lose that entry.
    const lv_list_value& old = it->second.value;
    if (old.kind != ed.kind && !expired(old)) {
      const char* on = old.kind == LV_LIST_ALLOW ? "allow" : old.kind == LV_LIST_DENY ? "deny" : "override";
      return Error{fmt::format("{} is on the {} list of {}", c.to_string(), on, iface), 0,
                   fmt::format("delete it there first: levee {} del {} {}", on, iface, c.to_string())};
    }
    it->second.value = v;
    ++r.replaced;
  }
  if (r.added + r.replaced + r.deleted == 0) return r;  // nothing to publish
  std::vector<AnyEntry> next;
  for (const auto& [k, e] : entries)
    if (!expired(e.value)) next.push_back(e);  // over: matches nothing any more (as reload)
  Lists lists = rebuild(next);
  if (lists.v4.size() > LV_MAX_LIST_ENTRIES || lists.v6.size() > LV_MAX_LIST_ENTRIES)
    return usage_error(fmt::format("more than {} list entries for one family", LV_MAX_LIST_ENTRIES));
  LV_TRY(sess.policy.publish(pol, lists));
  return r;
}

Result<std::vector<ListRow>> list_rows(const std::string& iface) {
  LV_TRY(preflight("list"));
  LV_TRY_ASSIGN(auto p, open_pinned(iface));
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  LV_TRY_ASSIGN(auto lists, pm.active_lists());
  const lv_policy& pol = pm.active();
  const Clocks clocks = Clocks::read();
  std::vector<ListRow> rows;
  for (const AnyEntry& e : flatten(lists)) {
    ListRow r{e.cidr, static_cast<lv_list_kind>(e.value.kind), "", mono_to_unix(e.value.expires_ns, clocks),
              static_cast<lv_list_origin>(e.value.origin)};
    if (r.kind == LV_LIST_OVERRIDE && e.value.override_id < LV_MAX_OVERRIDES)
      r.override_name = name_of(pol.overrides[e.value.override_id].name);
    rows.push_back(std::move(r));
  }
  return rows;
}

Result<ShowResult> show(const std::string& iface, const std::string& address) {
  LV_TRY_ASSIGN(auto addr, Cidr::parse(address));
  if ((addr.family == 4 && addr.len != 32) || (addr.family == 6 && addr.len != 128))
    return usage_error(fmt::format("'{}' is a network; levee show takes one address", address));
  LV_TRY(preflight("show"));
  LV_TRY_ASSIGN(auto p, open_pinned(iface));
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  const lv_policy& pol = pm.active();
  const Clocks clocks = Clocks::read();

  ShowResult out;
  out.address = address;
  LV_TRY_ASSIGN(auto rows, list_rows(iface));
  const ListRow* best = nullptr;
  for (const ListRow& r : rows)
    if (r.cidr.contains(addr) && (!best || r.cidr.len > best->cidr.len ||
                                  (r.cidr.len == best->cidr.len && precedence(r.kind) > precedence(best->kind))))
      best = &r;
  // An expired deny entry stays in the trie until the lists next change; the datapath
  // then uses the most specific entry without an expiry that covers it.
  if (best && best->expires_unix_ns && best->expires_unix_ns <= clocks.now_unix_ns) {
    const ListRow* after = nullptr;
    for (const ListRow& r : rows)
      if (!r.expires_unix_ns && r.cidr.len < best->cidr.len && r.cidr.contains(addr) &&
          (!after || r.cidr.len > after->cidr.len))
        after = &r;
    best = after;
  }
  if (best) out.list = *best;
  const lv_override* ov = nullptr;
  if (best && best->kind == LV_LIST_OVERRIDE) {
    for (uint32_t i = 0; i < std::min<uint32_t>(pol.nr_overrides, LV_MAX_OVERRIDES); ++i)
      if (name_of(pol.overrides[i].name) == best->override_name) ov = &pol.overrides[i];
  }

  out.now_ns = clocks.now_mono_ns;
  if (pol.flags & LV_POL_BAN_ALL) {
    const lv_key k = ban_all_key(addr, pol);
    lv_ban b{};
    if (bpf_map_lookup_elem(p.bans.get(), &k, &b) == 0) out.ban_all = b;
  }
  for (uint8_t id : class_order(pol)) {
    const lv_class& c = pol.classes[id];
    const lv_key key = source_key(addr, c, id);
    lv_state st{};
    const bool has_state = bpf_map_lookup_elem(p.state.get(), &key, &st) == 0;
    std::optional<lv_state> network;
    if (c.flags & LV_CLASS_NETWORK) {
      const lv_key nk = network_key(addr, c, id);
      lv_state ns{};
      if (bpf_map_lookup_elem(p.state.get(), &nk, &ns) == 0) network = ns;
    }
    std::optional<lv_ban> ban;
    lv_ban b{};
    if (bpf_map_lookup_elem(p.bans.get(), &key, &b) == 0) ban = b;
    if (!has_state && !network && !ban) continue;
    ShowClass sc;
    sc.has_state = has_state;
    sc.network = network;
    sc.ban = ban;
    sc.ban_all = out.ban_all;
    sc.name = name_of(c.name);
    sc.class_id = id;
    sc.cls = c;
    sc.pkt = c.pkt;
    sc.bytes = c.bytes;
    if (ov && ((ov->classes >> id) & 1)) {
      sc.override_name = name_of(ov->name);
      sc.pkt = ov->pkt;
      sc.bytes = ov->bytes;
    }
    sc.state = st;
    sc.now_ns = Clocks::read().now_mono_ns;
    out.classes.push_back(sc);
  }
  return out;
}

Result<UnbanResult> unban(const std::string& iface, const std::string& address,
                          const std::optional<std::string>& class_name) {
  LV_TRY_ASSIGN(auto addr, Cidr::parse(address));
  if ((addr.family == 4 && addr.len != 32) || (addr.family == 6 && addr.len != 128))
    return usage_error(fmt::format("'{}' is a network; levee unban takes one address", address),
                       "give the address of a banned source, e.g. 198.18.0.7");
  LV_TRY_ASSIGN(auto sess, Session::open(iface, "unban"));
  const lv_policy& pol = sess.policy.active();
  std::vector<uint8_t> ids = class_order(pol);
  if (class_name) {
    std::string names;
    for (uint8_t i : ids) names += (names.empty() ? "" : ", ") + name_of(pol.classes[i].name);
    auto it =
        std::find_if(ids.begin(), ids.end(), [&](uint8_t i) { return name_of(pol.classes[i].name) == *class_name; });
    if (it == ids.end())
      return usage_error(fmt::format("{} has no class '{}'", iface, *class_name),
                         fmt::format("its classes: {}", names));
    ids = {*it};
  }
  const uint64_t now = Clocks::read().now_mono_ns;
  const int bans = sess.pins.bans.get();
  UnbanResult r;
  // Take a record out; what it held is reported.
  auto take = [&](const lv_key& k, std::string scope) -> Result<std::optional<lv_ban>> {
    lv_ban b{};
    if (bpf_map_lookup_elem(bans, &k, &b) != 0) return std::optional<lv_ban>{};
    if (bpf_map_delete_elem(bans, &k) != 0 && errno != ENOENT)
      return sys_error(fmt::format("delete the ban record of {}", address));
    r.lifted.push_back({std::move(scope), b.until_ns > now, b.until_ns > now ? b.until_ns - now : 0, b.offences});
    return std::optional<lv_ban>{b};
  };
  // The every-class record bans the address in each class: lifted whichever class is
  // named. The class that imposed it holds the source back through its state too.
  std::optional<uint16_t> imposed_by;
  if (pol.flags & LV_POL_BAN_ALL) {
    LV_TRY_ASSIGN(auto b, take(ban_all_key(addr, pol), ""));
    if (b && (b)->until_ns > now) imposed_by = (b)->class_id;
  }
  if (imposed_by && *imposed_by < LV_MAX_CLASSES && std::find(ids.begin(), ids.end(), *imposed_by) == ids.end())
    ids.push_back(static_cast<uint8_t>(*imposed_by));
  for (uint8_t id : ids) {
    const lv_class& c = pol.classes[id];
    const lv_key key = source_key(addr, c, id);
    LV_TRY_ASSIGN(auto b, take(key, name_of(c.name)));
    const bool banned = imposed_by == id || (b && (b)->until_ns > now);
    // A ban holds the source back through its state's ready times. A record the LRU
    // evicted leaves no trace but those: ready times beyond what the limits can push.
    lv_state st{};
    if (bpf_map_lookup_elem(sess.pins.state.get(), &key, &st) != 0) continue;
    uint64_t pkt_reach = limit_reach(c.pkt, false), byte_reach = limit_reach(c.bytes, true);
    for (uint32_t o = 0; o < std::min<uint32_t>(pol.nr_overrides, LV_MAX_OVERRIDES); ++o)
      if ((pol.overrides[o].classes >> id) & 1) {
        pkt_reach = std::max(pkt_reach, limit_reach(pol.overrides[o].pkt, false));
        byte_reach = std::max(byte_reach, limit_reach(pol.overrides[o].bytes, true));
      }
    bool released = false;
    for (auto [ready, reach] : {std::pair{&st.ready_ns, pkt_reach}, std::pair{&st.ready_bytes_ns, byte_reach}})
      if (*ready > now && (banned || *ready - now > reach)) *ready = now, released = true;
    if (!released) continue;
    // The datapath may update the state meanwhile (a CAS on the replaced element is
    // lost): at worst a packet's charge or a count, never a ban kept.
    if (bpf_map_update_elem(sess.pins.state.get(), &key, &st, BPF_EXIST) != 0 && errno != ENOENT)
      return sys_error(fmt::format("release the state of {} in class {}", address, name_of(c.name)));
    ++r.states_released;
  }
  if (!r.lifted.empty() || r.states_released) LV_TRY(republish(sess));
  return r;
}

Result<Counters> interface_counters(const Pinned& p) {
  LV_TRY_ASSIGN(auto c, read_counters(p.percpu.get()));
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  const lv_policy& pol = pm.active();
  for (uint8_t id : class_order(pol)) {
    // What this class counted: the id's counters less what they held when it got the id.
    lv_class_counters& k = c.by_class[id];
    const lv_class_counters& b = pol.class_base[id];
    k.passed.packets -= b.passed.packets;
    k.passed.bytes -= b.passed.bytes;
    k.dropped.packets -= b.dropped.packets;
    k.dropped.bytes -= b.dropped.bytes;
  }
  return c;
}

Result<std::vector<ClassCounters>> class_counters(const Pinned& p) {
  LV_TRY_ASSIGN(auto c, interface_counters(p));
  LV_TRY_ASSIGN(auto s, query_status(p, false));
  return class_counters(s, c);
}

std::vector<ClassCounters> class_counters(const IfaceStatus& s, const Counters& c) {
  std::vector<ClassCounters> out;
  for (size_t i = 0; i < s.classes.size() && i < s.class_ids.size(); ++i) {
    const lv_class& k = s.classes[i];
    const uint8_t id = s.class_ids[i];
    out.push_back({name_of(k.name), id, c.by_class[id], (k.flags & LV_CLASS_MONITOR) != 0});
  }
  return out;
}

}  // namespace levee
