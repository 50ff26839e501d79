#include "cli/commands.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "bpf/kernel.hpp"
#include "bpf/loader.hpp"
#include "bpf/maps.hpp"
#include "bpf/pins.hpp"
#include "core/units.hpp"
#include "export/format.hpp"
#include "policy/config.hpp"

namespace levee::cli {
namespace {

Result<uint64_t> count_arg(const std::string& opt, const std::string& text) {
  auto v = parse_count(text);
  if (!v) return usage_error(fmt::format("{} '{}' is not a count", opt, text), "give e.g. 500, 10k or 1.5M");
  return *v;
}

Status readers_preflight(const char* action) {
  LV_TRY(check_privileges(action));
  LV_TRY(check_bpffs());
  return {};
}

}  // namespace

Status attach(const AttachArgs& a) {
  AttachOptions o;
  o.iface = a.iface;
  o.mode = a.mode == "native" ? LV_MODE_NATIVE : a.mode == "generic" ? LV_MODE_GENERIC : LV_MODE_AUTO;
  std::optional<Limits> shorthand;
  if (!a.config.empty()) {
    if (!a.rate.empty() || !a.burst.empty())
      return usage_error("--config and --rate/--burst exclude each other", "the file's classes hold the limits");
    auto p = load_config(a.config);
    if (!p) return p.error();
    o.policy = std::move(p.value());
    if (o.policy.source.empty()) o.policy.source = a.config;
    // The file's [interface] settings, unless the command line says otherwise.
    if (o.policy.iface.mode && !a.mode_given) o.mode = *o.policy.iface.mode;
    if (o.policy.iface.max_sources) o.max_sources = *o.policy.iface.max_sources;
  } else {
    if (a.rate.empty() && a.burst.empty())
      return usage_error("levee attach needs a policy", "give --config FILE, or --rate PPS and --burst PKTS");
    auto rate = count_arg("--rate", a.rate);
    if (!rate) return rate.error();
    auto burst = count_arg("--burst", a.burst);
    if (!burst) return burst.error();
    shorthand = Limits{*rate, *burst, a.prefix4, a.prefix6};
    LV_TRY(validate(*shorthand));
    o.policy = one_class_policy(*shorthand);
  }
  if (!a.max_sources.empty()) {
    auto m = count_arg("--max-sources", a.max_sources);
    if (!m) return m.error();
    if (*m < 1 || *m > 100'000'000)
      return usage_error(fmt::format("--max-sources {} is out of range", *m), "give 1 to 100M");
    o.max_sources = static_cast<uint32_t>(*m);
  }
  auto r = levee::attach(o);
  if (!r) return r.error();
  if (!r->fallback.empty()) fmt::print("{}; using generic mode\n", r->fallback);
  if (shorthand) {
    fmt::print("attached to {} in {} mode (program {}): {} pps, burst {} per source (IPv4 /{}, IPv6 /{})\n",
               a.iface, r->mode, r->prog_id, format_count(shorthand->rate), format_count(shorthand->burst),
               shorthand->prefix4, shorthand->prefix6);
  } else {
    fmt::print("attached to {} in {} mode (program {}): policy from {}, {} sources at most\n{}", a.iface, r->mode,
               r->prog_id, o.policy.source, format_count(o.max_sources), policy_text(o.policy));
  }
  return {};
}

Status reload(const ReloadArgs& a) {
  auto p = load_config(a.config);  // a bad file fails here, before anything is touched
  if (!p) return p.error();
  if (p->source.empty()) p->source = a.config;
  auto r = levee::reload(a.iface, *p);
  if (!r) return r.error();
  fmt::print("{}: policy generation {} from {}: {} classes, {} list entries ({} of them added at run time, kept)\n{}",
             a.iface, r->generation, p->source, r->classes, group_digits(r->list_entries),
             group_digits(r->kept_runtime), policy_text(*p, false));
  for (const auto& d : r->dropped) fmt::print("  dropped  {}\n", d);
  for (const auto& n : r->notes) fmt::print("  note     {}\n", n);
  return {};
}

Status set(const SetArgs& a) {
  LimitChange ch;
  struct Opt { const char* name; const std::string& text; std::optional<uint64_t>& out; };
  for (Opt o : {Opt{"--rate", a.rate, ch.rate}, Opt{"--burst", a.burst, ch.burst},
                Opt{"--bytes-rate", a.bytes_rate, ch.bytes_rate}, Opt{"--bytes-burst", a.bytes_burst, ch.bytes_burst}}) {
    if (o.text.empty()) continue;
    auto v = count_arg(o.name, o.text);
    if (!v) return v.error();
    o.out = *v;
  }
  ch.prefix4 = a.prefix4;
  ch.prefix6 = a.prefix6;
  if (!a.class_name.empty()) ch.class_name = a.class_name;
  if (ch.empty())
    return usage_error("levee set needs something to change",
                       "give --rate, --burst, --bytes-rate, --bytes-burst, --prefix4 or --prefix6");
  auto c = set_limits(a.iface, ch);
  if (!c) return c.error();
  fmt::print("{}: class {}: {}\n", a.iface, c->name, describe_limits(*c));
  return {};
}

Status stats(const StatsArgs& a) {
  LV_TRY(readers_preflight("stats"));
  auto p = open_pinned(a.iface);
  if (!p) return p.error();
  auto c = interface_counters(*p);
  if (!c) return c.error();
  ClassNames names;
  auto cc = class_counters(*p);
  if (!cc) return cc.error();
  bool monitoring = false;
  for (const auto& k : *cc) names.emplace_back(k.name, k.id), monitoring |= k.monitor;
  if (!a.watch) {
    if (a.json)
      fmt::print("{}\n", stats_json(a.iface, *c, names).dump());
    else
      fmt::print("{}", stats_text(a.iface, *c, names, monitoring));
    return {};
  }
  using clock = std::chrono::steady_clock;
  auto interval = std::chrono::duration<double>(a.interval > 0 ? a.interval : 1.0);
  auto next = clock::now();
  Counters prev = *c;
  auto prev_t = clock::now();
  for (unsigned i = 0; a.count == 0 || i < a.count; ++i) {
    next += std::chrono::duration_cast<clock::duration>(interval);
    std::this_thread::sleep_until(next);
    auto cur = interface_counters(*p);
    if (!cur) return cur.error();
    auto now = clock::now();
    if (a.json)
      fmt::print("{}\n", stats_json(a.iface, *cur, names).dump());
    else
      fmt::print("{}  {}\n", a.iface, rates_line(prev, *cur, std::chrono::duration<double>(now - prev_t).count()));
    std::fflush(stdout);
    prev = *cur;
    prev_t = now;
  }
  return {};
}

Status status(bool json) {
  LV_TRY(readers_preflight("status"));
  std::vector<IfaceStatus> all;
  for (const auto& iface : list_pinned()) {
    auto p = open_pinned(iface);
    // Detached by someone else since the listing: it is simply not attached any more.
    if (!p && !pin_dir_exists(iface)) continue;
    if (!p) return p.error();
    auto s = query_status(*p);
    if (!s) return s.error();
    all.push_back(std::move(s.value()));
  }
  if (json)
    fmt::print("{}\n", status_json(all).dump());
  else
    fmt::print("{}", status_text(all));
  return {};
}

Status detach(const std::string& iface) {
  LV_TRY(levee::detach(iface));
  fmt::print("detached from {}\n", iface);
  return {};
}

}  // namespace levee::cli
