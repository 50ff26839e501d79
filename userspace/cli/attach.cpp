#include "cli/attach.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <optional>

#include "cli/options.hpp"
#include "core/units.hpp"
#include "datapath/attach.hpp"
#include "export/render_policy.hpp"
#include "export/render_synauth.hpp"
#include "policy/config.hpp"

namespace levee::cli {
namespace {

// attach --rate's extras: the class's admission of new sources (the autopilot, a
// budget, or neither), its escalation, and bans.
Status shorthand_extras(const AttachArgs& a, ClassSpec& c) {
  struct Count {
    const char* name;
    const std::string& text;
    uint64_t max;
    uint64_t Rate::*field;
  };
  if (a.new_sources == "auto" || a.new_sources == "off") {
    if (!a.new_sources_burst.empty())
      return usage_error(fmt::format("--new-sources {} with --new-sources-burst", a.new_sources),
                         "a burst goes with a budget: give --new-sources a rate");
    c.admission = a.new_sources == "auto" ? Admission::Auto : Admission::Off;
  }
  if (!a.escalate.empty()) c.escalate = a.escalate == "auto";
  for (Count o : {Count{"--new-sources", a.new_sources, kMaxRatePps, &Rate::rate},
                  Count{"--new-sources-burst", a.new_sources_burst, kMaxBurst, &Rate::burst}}) {
    if (o.text.empty() || o.text == "auto" || o.text == "off") continue;
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

}  // namespace

CLI::App* add_attach_command(CLI::App& app, AttachArgs& a) {
  auto* attach = app.add_subcommand("attach", "attach to an interface and start limiting every source");
  add_iface(attach, a.iface);
  auto* config =
      attach->add_option("--config", a.config, "the policy file (TOML): classes, lists, overrides")->type_name("FILE");
  const auto [rate, burst] = add_text_options(
      attach,
      {{"--rate", a.rate, "shorthand for one class: packets per second each source may send (e.g. 500, 10k)", "PPS"},
       {"--burst", a.burst, "shorthand for one class: packets a source may send at once above its rate", "PKTS"}});
  auto* mode = add_xdp_mode_option(attach, a.mode, "XDP mode: auto tries native, then generic");
  attach->add_option("--max-sources", a.max_sources, "sources tracked at once (LRU); default 1M, ~129 bytes each")
      ->type_name("N");
  attach->add_flag("--exceed-memory-cap", a.exceed_memory_cap,
                   "attach even if the maps would pin over a quarter of the machine's memory (MemTotal)");
  auto* p4 = attach->add_option("--prefix4", a.prefix4, "with --rate: IPv4 prefix length that makes one source")
                 ->type_name("N")
                 ->capture_default_str();
  auto* p6 = attach->add_option("--prefix6", a.prefix6, "with --rate: IPv6 prefix length that makes one source")
                 ->type_name("N")
                 ->capture_default_str();
  const auto [ns, nsb, ban, ban_max, forget] = add_text_options(
      attach, {{"--new-sources", a.new_sources,
                "with --rate: new sources per second that may get state (a budget); auto (the default): the "
                "autopilot; off: neither",
                "N|auto|off"},
               {"--new-sources-burst", a.new_sources_burst,
                "with --new-sources: new sources at once (default a tenth of a second's worth)", "N"},
               {"--ban", a.ban,
                "with --rate: ban a source over its limit for this long (500ms, 2s, 1m); repeat offences double it",
                "DURATION"},
               {"--ban-max", a.ban_max, "with --ban: the longest ban (default the longer of --ban and 1h)", "DURATION"},
               {"--forget-after", a.forget_after,
                "with --ban: a source quiet this long after its ban starts over (default 1h)", "DURATION"}});
  auto* esc = choices(attach->add_option("--escalate", a.escalate,
                                         "with --rate: the autopilot's escalation of networks over their limit: auto "
                                         "(the default) or off"),
                      {"auto", "off"});
  attach->add_flag("--monitor", a.monitor,
                   "monitor mode: count what would be dropped (levee stats: would_drop), drop nothing");
  rate->needs(burst);
  burst->needs(rate);
  nsb->needs(ns);
  ban_max->needs(ban);
  forget->needs(ban);
  for (CLI::Option* shorthand : {rate, burst, p4, p6, ns, nsb, esc, ban, ban_max, forget}) config->excludes(shorthand);
  attach->footer(
      "\nExamples: levee attach eth0 --config /etc/levee/levee.toml\n"
      "          levee attach eth0 --rate 1k --burst 200\n"
      "          levee attach eth0 --rate 1k --burst 200 --new-sources 500 --ban 2s --monitor\n"
      "--xdp-mode and --max-sources override the file's [interface] settings (--mode is an\n"
      "older name of --xdp-mode); --monitor applies to the file's policy too. The program is\n"
      "pinned under /sys/fs/bpf/levee/IFACE/: it keeps running after levee exits.");
  // After the whole line is parsed, so that --help and the other errors come first.
  auto* old_mode = attach->get_option("--mode");
  attach->callback([&a, config, rate = rate, mode, old_mode] {
    if (config->count() == 0 && rate->count() == 0)
      throw CLI::ValidationError("attach needs --config FILE, or --rate PPS and --burst PKTS");
    a.mode_given = mode->count() > 0 || old_mode->count() > 0;
  });
  return attach;
}

Status attach(const AttachArgs& a) {
  AttachOptions o;
  o.iface = a.iface;
  LV_TRY_ASSIGN(const lv_attach_mode mode, xdp_mode_arg(a.mode));
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
  o.exceed_memory_cap = a.exceed_memory_cap;
  LV_TRY_ASSIGN(auto r, levee::attach(o));
  if (r.already) {
    fmt::print("{}: already attached with these settings (program {}, {} mode, policy from {}): nothing changed\n",
               a.iface, r.prog_id, r.mode, o.policy.source);
    return {};
  }
  if (!r.fallback.empty()) fmt::print("{}; using generic mode\n", r.fallback);
  if (!r.no_proxy.empty() && has_syn_auth(o.policy))
    fmt::print("note: SYN authentication answers in reset mode (a new client connects a second later): {}\n",
               r.no_proxy);
  if (has_syn_auth(o.policy))
    for (const std::string& n : syn_attach_notes(r)) fmt::print("note: {}\n", n);
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

}  // namespace levee::cli
