#include "cli/app.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <sstream>

#include "bpf/kernel.hpp"
#include "core/version.hpp"
#include "policy/policy.hpp"

namespace levee::cli {
namespace {

void add_iface(CLI::App* cmd, std::string& iface) {
  cmd->add_option("iface", iface, "network interface, e.g. eth0")->required();
}

// "deny add " for `levee deny add ...`: where --help would tell more.
std::string parsed_path(const CLI::App& app) {
  std::string path;
  for (const CLI::App* cur = &app; !cur->get_subcommands().empty();) {
    cur = cur->get_subcommands().back();
    path += cur->get_name() + " ";
  }
  return path;
}

constexpr const char* kExpiresHelp =
    "when the entry stops matching: a duration (90s, 30m, 2h, 1d12h, 1w) or an RFC 3339 time "
    "(2026-12-01T00:00:00Z); default never";

// `levee allow|deny|override`: add, del, list (and deny import), all filling one ListArgs.
struct ListGroup {
  CLI::App* group;
  lv_list_kind kind;
  std::vector<std::pair<CLI::App*, ListOp>> ops;
};

ListGroup add_list_group(CLI::App& app, ListArgs& la, lv_list_kind kind, const char* about, const char* example_cidrs) {
  const std::string name = list_kind_name(kind);
  ListGroup g{app.add_subcommand(name, about), kind, {}};
  g.group->require_subcommand(1);

  auto* add =
      g.group->add_subcommand("add", fmt::format("add networks to the {} list (or replace their entries)", name));
  add_iface(add, la.iface);
  if (kind == LV_LIST_OVERRIDE)
    add->add_option("name", la.override_name, "an override defined in the config file ([[override]])")->required();
  add->add_option("cidr", la.cidrs, "networks or addresses: 198.51.100.0/24, 2001:db8::/48, 203.0.113.7")->required();
  if (kind == LV_LIST_DENY) add->add_option("--expires", la.expires, kExpiresHelp);
  add->footer(kind == LV_LIST_OVERRIDE ? fmt::format("\nExample: levee override add eth0 partner {}\n"
                                                     "The networks get the override's limits in the classes it names.",
                                                     example_cidrs)
              : kind == LV_LIST_DENY
                  ? fmt::format("\nExamples: levee deny add eth0 {}\n"
                                "          levee deny add eth0 203.0.113.7 --expires 2h",
                                example_cidrs)
                  : fmt::format("\nExample: levee allow add eth0 {}\n"
                                "Allowed sources are never limited; their packets are still counted.",
                                example_cidrs));
  g.ops.push_back({add, ListOp::Add});

  auto* del = g.group->add_subcommand("del", fmt::format("delete networks from the {} list", name));
  add_iface(del, la.iface);
  del->add_option("cidr", la.cidrs, "networks as they were added")->required();
  del->footer(
      fmt::format("\nExample: levee {} del eth0 {}\n"
                  "Entries from the config file come back with the next reload.",
                  name, example_cidrs));
  g.ops.push_back({del, ListOp::Del});

  auto* list = g.group->add_subcommand("list", fmt::format("the entries of the {} list", name));
  add_iface(list, la.iface);
  list->add_option("cidr", la.cidrs, "only entries within, or covering, these networks");
  list->add_flag("--json", la.json, "one JSON object");
  list->footer(
      fmt::format("\nExamples: levee {0} list eth0\n          levee {0} list eth0 198.51.100.0/24 --json", name));
  g.ops.push_back({list, ListOp::List});

  if (kind == LV_LIST_DENY) {
    auto* imp = g.group->add_subcommand("import", "add every network of a blocklist file to the deny list, at once");
    add_iface(imp, la.iface);
    imp->add_option("file", la.file, "one CIDR or address per line; '#' and ';' start comments")->required();
    imp->add_option("--expires", la.expires, kExpiresHelp);
    imp->footer(
        "\nExample: levee deny import eth0 /var/lib/levee/drop.netset --expires 1d\n"
        "Reports what was added, renewed, skipped and rejected (with line numbers). A file\n"
        "with no valid line adds nothing and exits 1.");
    g.ops.push_back({imp, ListOp::Import});
  }
  g.group->footer(fmt::format("\nExamples: levee {0} add eth0 {1}\n          levee {0} list eth0 --json", name,
                              kind == LV_LIST_OVERRIDE ? std::string("partner ") + example_cidrs : example_cidrs));
  return g;
}

}  // namespace

Parsed parse(int argc, const char* const* argv) {
  Invocation inv;
  CLI::App app{"levee drops floods at the NIC driver with XDP: a token bucket per source address.", "levee"};
  app.require_subcommand(1);
  app.set_version_flag("--version", levee_version());
  app.add_flag("-v,--verbose", inv.verbose, "print libbpf's messages (the verifier log on a refused load)");

  AttachArgs& at = inv.attach;
  auto* attach = app.add_subcommand("attach", "attach to an interface and start limiting every source");
  add_iface(attach, at.iface);
  auto* config = attach->add_option("--config", at.config, "the policy file (TOML): classes, lists, overrides");
  auto* rate = attach->add_option("--rate", at.rate,
                                  "shorthand for one class: packets per second each source may send (e.g. 500, 10k)");
  auto* burst = attach->add_option("--burst", at.burst,
                                   "shorthand for one class: packets a source may send at once above its rate");
  auto* mode = attach->add_option("--mode", at.mode, "XDP mode: auto tries native, then generic")
                   ->check(CLI::IsMember({"auto", "native", "generic"}))
                   ->capture_default_str();
  attach->add_option("--max-sources", at.max_sources, "sources tracked at once (LRU); default 1M, ~121 bytes each");
  auto* p4 = attach->add_option("--prefix4", at.prefix4, "with --rate: IPv4 prefix length that makes one source")
                 ->capture_default_str();
  auto* p6 = attach->add_option("--prefix6", at.prefix6, "with --rate: IPv6 prefix length that makes one source")
                 ->capture_default_str();
  auto* ns = attach->add_option("--new-sources", at.new_sources,
                                "with --rate: new sources per second that may get state (the rest are dropped)");
  auto* nsb = attach->add_option("--new-sources-burst", at.new_sources_burst,
                                 "with --new-sources: new sources at once (default a tenth of a second's worth)");
  auto* ban = attach->add_option("--ban", at.ban,
                                 "with --rate: ban a source over its limit for this long (500ms, 2s, 1m); repeat "
                                 "offences double it");
  auto* ban_max =
      attach->add_option("--ban-max", at.ban_max, "with --ban: the longest ban (default the longer of --ban and 1h)");
  auto* forget = attach->add_option("--forget-after", at.forget_after,
                                    "with --ban: a source quiet this long after its ban starts over (default 1h)");
  attach->add_flag("--monitor", at.monitor,
                   "monitor mode: count what would be dropped (levee stats: would_drop), drop nothing");
  rate->needs(burst);
  burst->needs(rate);
  nsb->needs(ns);
  ban_max->needs(ban);
  forget->needs(ban);
  config->excludes(rate)
      ->excludes(burst)
      ->excludes(p4)
      ->excludes(p6)
      ->excludes(ns)
      ->excludes(nsb)
      ->excludes(ban)
      ->excludes(ban_max)
      ->excludes(forget);
  attach->footer(
      "\nExamples: levee attach eth0 --config /etc/levee/levee.toml\n"
      "          levee attach eth0 --rate 1k --burst 200\n"
      "          levee attach eth0 --rate 1k --burst 200 --new-sources 500 --ban 2s --monitor\n"
      "--mode and --max-sources override the file's [interface] settings; --monitor applies\n"
      "to the file's policy too. The program is pinned under /sys/fs/bpf/levee/IFACE/: it\n"
      "keeps running after levee exits.");

  ReloadArgs& rl = inv.reload;
  auto* reload = app.add_subcommand("reload", "replace the policy of an attached interface from its file, atomically");
  add_iface(reload, rl.iface);
  reload->add_option("--config", rl.config, "the policy file (TOML)")->required();
  reload->footer(
      "\nExample: levee reload eth0 --config /etc/levee/levee.toml\n"
      "The whole file is checked first: a bad file changes nothing. Sources keep their\n"
      "state in classes that still exist; entries added with allow/deny/override add or\n"
      "deny import are kept.");

  SetArgs& st = inv.set;
  auto* set = app.add_subcommand("set", "change the limits of an attached interface, live");
  add_iface(set, st.iface);
  set->add_option("--class", st.class_name, "the class to change (needed when there are several)");
  set->add_option("--rate", st.rate, "new packets per second per source");
  set->add_option("--burst", st.burst, "new burst per source");
  set->add_option("--bytes-rate", st.bytes_rate, "new bytes per second per source");
  set->add_option("--bytes-burst", st.bytes_burst, "new byte burst per source");
  set->add_option("--prefix4", st.prefix4, "new IPv4 source prefix length (starts new buckets)");
  set->add_option("--prefix6", st.prefix6, "new IPv6 source prefix length (starts new buckets)");
  set->add_option("--new-sources", st.new_sources, "new sources per second the class admits; off: no budget");
  set->add_option("--new-sources-burst", st.new_sources_burst, "new sources the class admits at once");
  set->add_option("--ban", st.ban, "ban a source over its limit for this long (500ms, 2s, 1m); off: no bans");
  set->add_option("--ban-max", st.ban_max, "the longest a repeat offence's ban grows to");
  set->add_option("--forget-after", st.forget_after, "a source quiet this long after its ban starts over");
  set->add_option("--mode", st.mode, "the interface's mode: monitor counts what would be dropped and drops nothing")
      ->check(CLI::IsMember({"monitor", "enforce"}));
  set->footer(
      "\nExamples: levee set eth0 --rate 2k\n"
      "          levee set eth0 --class dns --rate 500 --burst 50\n"
      "          levee set eth0 --class web-syn --new-sources 1k --ban 5s\n"
      "          levee set eth0 --mode monitor\n"
      "Options not given keep their value. Sources keep their state: one that was being\n"
      "limited continues at the new rate at once. --mode switches every class at once (a\n"
      "class whose own mode is monitor keeps monitoring under enforce) and outlasts reloads.\n"
      "A reload restores the file's limits.");

  StatsArgs& sa = inv.stats;
  auto* stats = app.add_subcommand("stats", "counters of an interface, summed over CPUs");
  add_iface(stats, sa.iface);
  stats->add_flag("--json", sa.json, "one JSON object (with --watch: one per sample)");
  stats->add_flag("-w,--watch", sa.watch, "print rates every interval until interrupted");
  stats->add_option("--interval", sa.interval, "seconds between --watch samples")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  stats->add_option("--count", sa.count, "stop --watch after this many samples");
  stats->footer("\nExamples: levee stats eth0 --json\n          levee stats eth0 --watch");

  auto* status = app.add_subcommand("status", "every attached interface: mode, program, classes, lists, sources");
  status->add_flag("--json", inv.status_json, "one JSON object");
  status->footer("\nExample: levee status --json");

  auto* detach = app.add_subcommand("detach", "remove levee from an interface and everything it pinned");
  add_iface(detach, inv.detach_iface);
  detach->footer("\nExample: levee detach eth0");

  ListArgs& la = inv.lists;
  const ListGroup groups[] = {
      add_list_group(app, la, LV_LIST_ALLOW, "allow list: networks never limited (still counted)",
                     "198.51.100.0/24 2001:db8:1::/48"),
      add_list_group(app, la, LV_LIST_DENY, "deny list: networks always dropped, optionally until a time",
                     "203.0.113.0/24"),
      add_list_group(app, la, LV_LIST_OVERRIDE, "override list: networks with limits of their own (from the config)",
                     "192.0.2.0/24"),
  };

  ShowArgs& sh = inv.show;
  auto* show = app.add_subcommand("show", "one address: its list entry, and per class its tokens, wait and counters");
  add_iface(show, sh.iface);
  show->add_option("address", sh.address, "an IPv4 or IPv6 address")->required();
  show->add_flag("--json", sh.json, "one JSON object");
  show->footer(
      "\nExample: levee show eth0 203.0.113.7 --json\n"
      "An address with no state was not seen since its state was evicted, or never.");

  UnbanArgs& ub = inv.unban;
  auto* unban = app.add_subcommand("unban", "lift the bans of one address: its packets pass again at once");
  add_iface(unban, ub.iface);
  unban->add_option("address", ub.address, "the banned address, IPv4 or IPv6")->required();
  unban->add_option("--class", ub.class_name, "only this class's ban (a ban in every class is lifted too)");
  unban->footer(
      "\nExamples: levee unban eth0 198.18.0.7\n"
      "          levee unban eth0 2001:db8::7 --class dns\n"
      "Its offence count is forgotten: a next offence bans it for the first ban's length.");

  PruneArgs& pr = inv.prune;
  auto* prune = app.add_subcommand("prune", "remove idle per-source state and forgotten ban records");
  add_iface(prune, pr.iface);
  prune->add_option("--idle", pr.idle,
                    "state whose every limit has been full this long is removed (default 10m; 500ms, 30s, 1h)");
  prune->add_flag("--json", pr.json, "one JSON object");
  prune->footer(
      "\nExamples: levee prune eth0\n"
      "          levee prune eth0 --idle 1h --json\n"
      "A state is idle when each of its limits has been full (its ready time plus the limit's\n"
      "burst tolerance) for --idle: deleting it changes no decision, the source comes back\n"
      "with a full bucket. Banned sources are kept; state of classes a reload removed goes.\n"
      "Ban records over and past forget_after go too. With when_full = \"refuse\" this is\n"
      "what frees room: the deletions are taken off the source count. The known-source\n"
      "filter is refreshed from what is kept.");

  TopArgs& tp = inv.top;
  auto* top = app.add_subcommand("top", "the sources doing the most: counters, tokens, wait, bans");
  add_iface(top, tp.iface);
  top->add_option("-n", tp.n, "rows to show")->capture_default_str();
  top->add_option("--by", tp.by, "rank by drops (dropped packets), packets (passed + dropped) or bytes")
      ->check(CLI::IsMember({"drops", "packets", "bytes"}))
      ->capture_default_str();
  top->add_flag("--json", tp.json, "one JSON object (with --watch: one per refresh)");
  top->add_flag("--networks", tp.networks, "rank the state of networks (network limits) too");
  top->add_flag("-w,--watch", tp.watch, "refresh in place, ranking by rates since the previous refresh");
  top->add_option("--interval", tp.interval, "seconds between --watch refreshes")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  top->add_option("--count", tp.count, "stop --watch after this many refreshes");
  top->footer(
      "\nExamples: levee top eth0\n"
      "          levee top eth0 -n 20 --by bytes --json\n"
      "          levee top eth0 --watch --interval 1\n"
      "Per-source counters are 32 bits (packets and bytes) and wrap at 2^32: they are shown as\n"
      "they are; --watch rates take differences modulo 2^32. Up to 16 drops per CPU are counted\n"
      "late. A source keyed by a prefix shorter than a host (prefix4 = 24) shows as a network.");

  EventsArgs& ev = inv.events;
  auto* events =
      app.add_subcommand("events", "the interface's events: first drops, bans and their ends, spent budgets");
  add_iface(events, ev.iface);
  events->add_flag("--json", ev.json, "one JSON object per line");
  events->add_option("--count", ev.count, "stop after this many events");
  events->add_option("--duration", ev.duration, "stop after this many seconds")->check(CLI::Range(0.0, 1e9));
  events->footer(
      "\nExamples: levee events eth0\n"
      "          levee events eth0 --json --duration 60\n"
      "Types: limited (a source's first drop), banned, ban_ended, admission (a class's\n"
      "new-source budget spent), map_full. The datapath sends at most [interface]\n"
      "events_per_second (default 100); an event says how many were suppressed before it.\n"
      "Events nobody read yet come first. Runs until --count, --duration, or Ctrl-C.");

  RunArgs& rn = inv.run;
  auto* run = app.add_subcommand("run", "keep an interface's filter as a service: metrics, events, reload on SIGHUP");
  run->add_option("iface", rn.iface, "network interface (default: the config's [interface] name)");
  run->add_option("--config", rn.config, "the policy file (TOML)")->required();
  run->add_option("--metrics", rn.metrics,
                  "serve Prometheus metrics at http://ADDR:PORT/metrics (ADDR default 127.0.0.1)");
  run->add_option("--events", rn.events, "append the events as JSON lines to this file (default stdout)");
  run->add_option("--mode", rn.mode, "XDP mode when it attaches: auto tries native, then generic")
      ->check(CLI::IsMember({"auto", "native", "generic"}));
  run->add_option("--prune-every", rn.prune_every, "how often the maps are walked: idle state pruned, gauges counted")
      ->capture_default_str();
  run->add_option("--idle", rn.idle, "state idle this long is pruned by the walk; off: only count")
      ->capture_default_str();
  run->add_flag("--detach-on-exit", rn.detach_on_exit, "detach on SIGTERM/SIGINT (default: the filter stays attached)");
  run->footer(
      "\nExamples: levee run eth0 --config /etc/levee/eth0.toml --metrics 9740\n"
      "          levee run --config /etc/levee/eth0.toml --events /var/log/levee/eth0.events\n"
      "Attaches the interface from the config, or adopts the filter already pinned there\n"
      "(a restart keeps every bucket, ban and counter; the config is reloaded into it).\n"
      "SIGHUP reloads the config atomically (a bad file changes nothing) and reopens the\n"
      "events file. SIGTERM and SIGINT stop levee run and leave the filter attached.\n"
      "One levee run per interface; CLI changes meanwhile are serialised with it.");

  Parsed out;
  try {
    app.parse(argc, argv);
    if (*attach && config->count() == 0 && rate->count() == 0)
      throw CLI::ValidationError("attach needs --config FILE, or --rate PPS and --burst PKTS");
  } catch (const CLI::ParseError& e) {
    std::ostringstream o, err;
    const bool info = e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success);
    if (info) {
      app.exit(e, o, err);
      out.out = o.str();
      if (!out.out.empty() && out.out.back() != '\n') out.out += '\n';
      out.exit_code = kExitOk;
    } else {
      out.err = fmt::format("levee: {}; see: levee {}--help\n", e.what(), parsed_path(app));
      out.exit_code = kExitUsage;
    }
    return out;
  }
  at.mode_given = mode->count() > 0;
  if (*attach)
    inv.command = Command::Attach;
  else if (*reload)
    inv.command = Command::Reload;
  else if (*set)
    inv.command = Command::Set;
  else if (*stats)
    inv.command = Command::Stats;
  else if (*status)
    inv.command = Command::Status;
  else if (*show)
    inv.command = Command::Show;
  else if (*unban)
    inv.command = Command::Unban;
  else if (*prune)
    inv.command = Command::Prune;
  else if (*top)
    inv.command = Command::Top;
  else if (*events)
    inv.command = Command::Events;
  else if (*run)
    inv.command = Command::Run;
  else if (*detach)
    inv.command = Command::Detach;
  for (const ListGroup& g : groups) {
    if (!*g.group) continue;
    inv.command = Command::Lists;
    la.kind = g.kind;
    for (const auto& [sub, op] : g.ops)
      if (*sub) la.op = op;
  }
  out.invocation = std::move(inv);
  return out;
}

int run(const Invocation& inv) {
  set_libbpf_verbose(inv.verbose);
  Status r;
  switch (inv.command) {
    case Command::Attach:
      r = attach(inv.attach);
      break;
    case Command::Reload:
      r = reload(inv.reload);
      break;
    case Command::Set:
      r = set(inv.set);
      break;
    case Command::Stats:
      r = stats(inv.stats);
      break;
    case Command::Status:
      r = status(inv.status_json);
      break;
    case Command::Detach:
      r = detach(inv.detach_iface);
      break;
    case Command::Lists:
      r = lists(inv.lists);
      break;
    case Command::Show:
      r = show(inv.show);
      break;
    case Command::Unban:
      r = unban(inv.unban);
      break;
    case Command::Prune:
      r = prune(inv.prune);
      break;
    case Command::Top:
      r = top(inv.top);
      break;
    case Command::Events:
      r = events(inv.events);
      break;
    case Command::Run:
      r = cli::run(inv.run);
      break;
  }
  if (!r) {
    std::fflush(stdout);
    fmt::print(stderr, "levee: {}\n", r.error().message());
    return r.error().usage ? kExitUsage : kExitError;
  }
  return kExitOk;
}

}  // namespace levee::cli
