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
#include "export/render_policy.hpp"
#include "export/render_stats.hpp"
#include "export/render_status.hpp"
#include "export/render_units.hpp"
#include "policy/config.hpp"

namespace levee::cli {
namespace {

std::string join_names(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& n : v) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Result<uint64_t> count_arg(const std::string& opt, const std::string& text) {
  auto v = parse_count(text);
  if (!v) return usage_error(fmt::format("{} '{}' is not a count", opt, text), "give e.g. 500, 10k or 1.5M");
  return *v;
}

// A duration option ("500ms", "2s", "1h30m"), positive.
Result<uint64_t> duration_arg(const std::string& opt, const std::string& text) {
  auto v = parse_duration_ns(text);
  if (!v) return usage_error(fmt::format("{} '{}' is not a duration", opt, text), "give e.g. 500ms, 2s, 10m or 1h");
  if (*v == 0) return usage_error(fmt::format("{} {} is no time at all", opt, text), "give a positive duration");
  return *v;
}

// A count or a duration that may be "off" (0).
Result<uint64_t> count_or_off(const std::string& opt, const std::string& text) {
  if (text == "off") return uint64_t{0};
  auto v = count_arg(opt, text);
  if (v && *v == 0) return usage_error(fmt::format("{} 0 is out of range", opt), "give 1 or more, or off");
  return v;
}
Result<uint64_t> duration_or_off(const std::string& opt, const std::string& text) {
  if (text == "off") return uint64_t{0};
  return duration_arg(opt, text);
}

// attach --rate's extras: the class's new-source budget and bans.
Status shorthand_extras(const AttachArgs& a, ClassSpec& c) {
  struct Count {
    const char* name;
    const std::string& text;
    uint64_t max;
    uint64_t Rate::*field;
  };
  for (Count o : {Count{"--new-sources", a.new_sources, kMaxRatePps, &Rate::rate},
                  Count{"--new-sources-burst", a.new_sources_burst, kMaxBurst, &Rate::burst}}) {
    if (o.text.empty()) continue;
    LV_TRY_ASSIGN(auto v, count_arg(o.name, o.text));
    if (v < 1 || v > o.max)
      return usage_error(fmt::format("{} {} is out of range", o.name, v),
                         fmt::format("give 1 to {}", format_count(o.max)));
    c.new_sources.*o.field = v;
  }
  if (c.new_sources.rate && a.new_sources_burst.empty())
    c.new_sources.burst = default_new_sources_burst(c.new_sources.rate);
  struct Opt {
    const char* name;
    const std::string& text;
    uint64_t BanSpec::*field;
  };
  for (Opt o : {Opt{"--ban", a.ban, &BanSpec::ban_ns}, Opt{"--ban-max", a.ban_max, &BanSpec::max_ns},
                Opt{"--forget-after", a.forget_after, &BanSpec::forget_ns}}) {
    if (o.text.empty()) continue;
    LV_TRY_ASSIGN(auto v, duration_arg(o.name, o.text));
    c.ban.*o.field = v;
  }
  if (c.ban.set() && c.ban.max_or_default() < c.ban.ban_ns)
    return usage_error(fmt::format("--ban-max {} is shorter than --ban {}", a.ban_max, a.ban),
                       "give --ban-max at least as long as --ban");
  if ((!a.ban_max.empty() || !a.forget_after.empty()) && !c.ban.set())
    return usage_error("--ban-max and --forget-after need --ban", "give --ban DURATION");
  return {};
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
  const lv_attach_mode mode = parse_attach_mode(a.mode).value_or(LV_MODE_AUTO);  // CLI11 checked it
  o.mode = mode;
  std::optional<Limits> shorthand;
  if (!a.config.empty()) {
    if (!a.rate.empty() || !a.burst.empty())
      return usage_error("--config and --rate/--burst exclude each other", "the file's classes hold the limits");
    LV_TRY_ASSIGN(auto p, load_config(a.config, a.iface));
    // The file's [interface] settings, unless the command line says otherwise.
    o = attach_options(a.iface, std::move(p));
    if (a.mode_given) o.mode = mode;
  } else {
    if (a.rate.empty() && a.burst.empty())
      return usage_error("levee attach needs a policy", "give --config FILE, or --rate PPS and --burst PKTS");
    LV_TRY_ASSIGN(auto rate, count_arg("--rate", a.rate));
    LV_TRY_ASSIGN(auto burst, count_arg("--burst", a.burst));
    shorthand = Limits{rate, burst, a.prefix4, a.prefix6};
    LV_TRY(validate(*shorthand));
    o.policy = one_class_policy(*shorthand);
    LV_TRY(shorthand_extras(a, o.policy.classes[0]));
  }
  o.policy.monitor = a.monitor;
  if (!a.max_sources.empty()) {
    LV_TRY_ASSIGN(auto m, count_arg("--max-sources", a.max_sources));
    if (m < 1 || m > 100'000'000)
      return usage_error(fmt::format("--max-sources {} is out of range", m), "give 1 to 100M");
    o.max_sources = static_cast<uint32_t>(m);
  }
  LV_TRY_ASSIGN(auto r, levee::attach(o));
  if (!r.fallback.empty()) fmt::print("{}; using generic mode\n", r.fallback);
  if (shorthand) {
    std::string extras = describe_extras(o.policy.classes[0]);
    fmt::print("attached to {} in {} mode (program {}): {} pps, burst {} per source (IPv4 /{}, IPv6 /{}){}{}\n",
               a.iface, r.mode, r.prog_id, format_count(shorthand->rate), format_count(shorthand->burst),
               shorthand->prefix4, shorthand->prefix6, extras.empty() ? "" : "; " + extras,
               a.monitor ? "; monitor mode: nothing is dropped, would-be drops are counted" : "");
  } else {
    fmt::print("attached to {} in {} mode (program {}): policy from {}, {} sources at most\n{}", a.iface, r.mode,
               r.prog_id, o.policy.source, format_count(o.max_sources), policy_text(o.policy));
    if (a.monitor)
      fmt::print("  mode     monitor: nothing is dropped by a limit, would-be drops are counted (levee stats)\n");
  }
  return {};
}

Status reload(const ReloadArgs& a) {
  LV_TRY_ASSIGN(auto p, load_config(a.config, a.iface));  // a bad file fails here, before anything is touched
  LV_TRY_ASSIGN(auto r, levee::reload(a.iface, p));
  fmt::print("{}: policy generation {} from {}: {} classes, {} list entries ({} of them added at run time, kept)\n{}",
             a.iface, r.generation, p.source, r.classes, group_digits(r.list_entries), group_digits(r.kept_runtime),
             policy_text(p, false));
  for (const auto& d : r.dropped) fmt::print("  dropped  {}\n", d);
  for (const auto& n : r.notes) fmt::print("  note     {}\n", n);
  return {};
}

Status set(const SetArgs& a) {
  LimitChange ch;
  struct Opt {
    const char* name;
    const std::string& text;
    std::optional<uint64_t>& out;
  };
  for (Opt o : {Opt{"--rate", a.rate, ch.rate}, Opt{"--burst", a.burst, ch.burst},
                Opt{"--bytes-rate", a.bytes_rate, ch.bytes_rate}, Opt{"--bytes-burst", a.bytes_burst, ch.bytes_burst},
                Opt{"--new-sources-burst", a.new_sources_burst, ch.new_sources_burst}}) {
    if (o.text.empty()) continue;
    LV_TRY_ASSIGN(auto v, count_arg(o.name, o.text));
    o.out = v;
  }
  if (!a.new_sources.empty()) {
    LV_TRY_ASSIGN(auto v, count_or_off("--new-sources", a.new_sources));
    ch.new_sources = v;
  }
  for (Opt o : {Opt{"--ban", a.ban, ch.ban_ns}, Opt{"--ban-max", a.ban_max, ch.ban_max_ns},
                Opt{"--forget-after", a.forget_after, ch.forget_ns}}) {
    if (o.text.empty()) continue;
    LV_TRY_ASSIGN(auto v, &o.out == &ch.ban_ns ? duration_or_off(o.name, o.text) : duration_arg(o.name, o.text));
    o.out = v;
  }
  if (ch.ban_ns && *ch.ban_ns == 0 && (ch.ban_max_ns || ch.forget_ns))
    return usage_error("--ban off with --ban-max or --forget-after", "turn bans off alone, or give --ban a duration");
  if (ch.new_sources && *ch.new_sources == 0 && ch.new_sources_burst)
    return usage_error("--new-sources off with --new-sources-burst", "turn the budget off alone, or give it a rate");
  if (!a.mode.empty()) {
    if (a.mode != "monitor" && a.mode != "enforce")
      return usage_error(fmt::format("--mode '{}' is not a mode", a.mode), "give monitor or enforce");
    ch.monitor = a.mode == "monitor";
  }
  ch.prefix4 = a.prefix4;
  ch.prefix6 = a.prefix6;
  if (!a.class_name.empty()) ch.class_name = a.class_name;
  if (ch.empty())
    return usage_error("levee set needs something to change",
                       "give --rate, --burst, --bytes-rate, --bytes-burst, --prefix4, --prefix6, --new-sources, "
                       "--new-sources-burst, --ban, --ban-max, --forget-after or --mode");
  LV_TRY_ASSIGN(auto r, set_limits(a.iface, ch));
  if (r.changed) fmt::print("{}: class {}: {}\n", a.iface, r.changed->name, describe_limits(*r.changed));
  if (ch.monitor) {
    if (r.monitor)
      fmt::print("{}: monitor mode: nothing is dropped by a limit, would-be drops are counted (levee stats)\n",
                 a.iface);
    else if (r.monitoring.empty())
      fmt::print("{}: enforce mode\n", a.iface);
    else
      fmt::print("{}: enforce mode; by their own mode, class{} {} still monitor{}\n", a.iface,
                 r.monitoring.size() == 1 ? "" : "es", join_names(r.monitoring), r.monitoring.size() == 1 ? "s" : "");
  }
  return {};
}

Status stats(const StatsArgs& a) {
  LV_TRY(readers_preflight("stats"));
  LV_TRY_ASSIGN(auto p, open_pinned(a.iface));
  LV_TRY_ASSIGN(auto c, interface_counters(p));
  ClassNames names;
  LV_TRY_ASSIGN(auto cc, class_counters(p));
  bool monitoring = false;
  for (const auto& k : cc) names.emplace_back(k.name, k.id), monitoring |= k.monitor;
  if (!a.watch) {
    if (a.json)
      fmt::print("{}\n", stats_json(a.iface, c, names).dump());
    else
      fmt::print("{}", stats_text(a.iface, c, names, monitoring));
    return {};
  }
  using clock = std::chrono::steady_clock;
  auto interval = std::chrono::duration<double>(a.interval > 0 ? a.interval : 1.0);
  auto next = clock::now();
  Counters prev = c;
  auto prev_t = clock::now();
  for (unsigned i = 0; a.count == 0 || i < a.count; ++i) {
    next += std::chrono::duration_cast<clock::duration>(interval);
    std::this_thread::sleep_until(next);
    LV_TRY_ASSIGN(auto cur, interface_counters(p));
    auto now = clock::now();
    if (a.json)
      fmt::print("{}\n", stats_json(a.iface, cur, names).dump());
    else
      fmt::print("{}  {}\n", a.iface, rates_line(prev, cur, std::chrono::duration<double>(now - prev_t).count()));
    std::fflush(stdout);
    prev = cur;
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
    // One interface levee cannot read (pins of another version, half removed) must not
    // hide the others: it is shown with what is wrong.
    auto s = p ? query_status(*p) : Result<IfaceStatus>(p.error());
    if (!s) {
      IfaceStatus broken;
      broken.iface = iface;
      broken.problem = s.error().message();
      all.push_back(std::move(broken));
      continue;
    }
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
