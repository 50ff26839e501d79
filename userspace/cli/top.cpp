// top.cpp - `levee top IFACE`: the sources doing the most, from a batch walk of lv_state.
//
// One walk reads every entry (a few thousand per syscall); ranking selects the top N with
// a partial sort, and only those N rows cost more lookups (their bans, their list entry).
// --watch compares each walk with the previous one, by key, for rates.
#include "cli/top.hpp"

#include <bpf/bpf.h>
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstring>
#include <vector>

#include "cli/options.hpp"
#include "cli/orphaned.hpp"
#include "core/clock.hpp"
#include "core/quote.hpp"
#include "core/signals.hpp"
#include "datapath/kernel.hpp"
#include "datapath/maps.hpp"
#include "datapath/pins.hpp"
#include "datapath/policy_map.hpp"
#include "datapath/prune.hpp"
#include "export/top.hpp"
#include "policy/policy.hpp"
#include "rules.h"

namespace levee::cli {
namespace {

// The override whose limits apply to an address in class `id`, by the active slot's
// lists in the kernel (host hash, then trie), with an expired deny's fallbacks as the
// datapath takes them; nullptr if none.
const lv_override* override_for(const Pinned& p, const lv_control& ctl, const lv_policy& pol, const lv_key& k,
                                uint64_t now) {
  const unsigned slot = ctl.active & 1;
  const bool v4 = lv_key_family(k.family) == LV_AF_INET;
  lv_list_value v{};
  bool found = false;
  if (v4) {
    const uint32_t host = k.addr[3];
    const lv_lpm4 net{32, k.addr[3]};
    found = (pol.nr_host4 && bpf_map_lookup_elem(p.lists[slot][kHost4].get(), &host, &v) == 0) ||
            (pol.nr_list4 && bpf_map_lookup_elem(p.lists[slot][kNet4].get(), &net, &v) == 0);
  } else {
    lv_in6 host{};
    std::memcpy(host.addr, k.addr, sizeof host.addr);
    lv_lpm6 net{128, {}};
    std::memcpy(net.addr, k.addr, sizeof net.addr);
    found = (pol.nr_host6 && bpf_map_lookup_elem(p.lists[slot][kHost6].get(), &host, &v) == 0) ||
            (pol.nr_list6 && bpf_map_lookup_elem(p.lists[slot][kNet6].get(), &net, &v) == 0);
  }
  if (!found) return nullptr;
  const lv_list_verdict d = lv_list_decide(&v, now);
  if (d.kind != LV_LIST_OVERRIDE || d.override_id >= std::min<uint32_t>(pol.nr_overrides, LV_MAX_OVERRIDES))
    return nullptr;
  const lv_override& o = pol.overrides[d.override_id];
  return ((o.classes >> (k.class_id % LV_MAX_CLASSES)) & 1) ? &o : nullptr;
}

// The ban on a source now: its class's record, or its record in every class.
void ban_of(const Pinned& p, const lv_policy& pol, TopRow& row, uint64_t now) {
  std::vector<lv_key> keys{row.key};
  if (pol.flags & LV_POL_BAN_ALL) {
    lv_key all{};
    lv_key_mask(&all, row.key.addr, row.key.family, pol.ban_mask4, pol.ban_mask6, LV_ALL_CLASSES, 0, 0);
    keys.push_back(all);
  }
  for (const lv_key& k : keys) {
    lv_ban b{};
    if (bpf_map_lookup_elem(p.bans.get(), &k, &b) != 0 || b.until_ns <= now) continue;
    row.banned = true;
    row.ban_remaining_ns = std::max<uint64_t>(row.ban_remaining_ns, b.until_ns - now);
  }
}

TopRow make_row(const Pinned& p, const lv_control& ctl, const lv_policy& pol, const lv_key& k, const lv_state& s,
                uint64_t now) {
  TopRow row;
  row.key = k;
  row.network = k.family & LV_KEY_NETWORK;
  row.counts = TopCounts::of(s);
  const bool v4 = lv_key_family(k.family) == LV_AF_INET;
  const unsigned host = v4 ? 32 : 128;
  if (!key_current(k, pol)) {
    row.class_name = "(gone)";  // left by a class a reload removed: never read again
    row.prefix = host;
    row.address = key_address(k.addr, k.family, host);
    return row;
  }
  const lv_class& c = pol.classes[k.class_id];
  row.class_name = name_of(c.name);
  row.prefix = row.network ? (v4 ? c.net_prefix4 : c.net_prefix6) : (v4 ? c.prefix4 : c.prefix6);
  row.address = key_address(k.addr, k.family, row.prefix);
  if (row.network) {
    top_limiter(row, s, c.net_pkt, c.net_bytes, now);
    return row;
  }
  const lv_override* o = override_for(p, ctl, pol, k, now);
  if (o) row.override_name = name_of(o->name);
  top_limiter(row, s, o ? o->pkt : c.pkt, o ? o->bytes : c.bytes, now);
  ban_of(p, pol, row, now);
  return row;
}

}  // namespace

CLI::App* add_top_command(CLI::App& app, TopArgs& a) {
  auto* top = app.add_subcommand("top", "the sources doing the most: counters, tokens, wait, bans");
  add_iface(top, a.iface);
  top->add_option("-n", a.n, "rows to show")->type_name("N")->capture_default_str();
  choices(top->add_option("--by", a.by, "rank by drops (dropped packets), packets (passed + dropped) or bytes"),
          {"drops", "packets", "bytes"})
      ->capture_default_str();
  top->add_flag("--json", a.json, "one JSON object (with --watch: one per refresh)");
  top->add_flag("--networks", a.networks, "rank the state of networks (network limits) too");
  add_watch_options(top, a.watch, a.interval, a.count, "refresh in place, ranking by rates since the previous refresh",
                    "refreshes", 0.1);
  top->footer(
      "\nExamples: levee top eth0\n"
      "          levee top eth0 -n 20 --by bytes --json\n"
      "          levee top eth0 --watch --interval 1\n"
      "Per-source counters are 32 bits (packets and bytes) and wrap at 2^32: they are shown as\n"
      "they are; --watch rates take differences modulo 2^32. Up to 16 drops per CPU are counted\n"
      "late. A source keyed by a prefix shorter than a host (prefix4 = 24) shows as a network.");
  return top;
}

Status top(const TopArgs& a) {
  auto by = parse_top_by(a.by);
  if (!by)
    return usage_error(fmt::format("--by {} is not a ranking", quote_value(a.by)), "give drops, packets or bytes");
  if (a.n == 0) return usage_error("-n 0 shows nothing", "give 1 or more");
  LV_TRY(preflight("top"));
  LV_TRY_ASSIGN(auto p, open_pinned(a.iface));
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  warn_if_orphaned(p);

  std::optional<Signals> signals;
  if (a.watch) signals.emplace();
  const bool tty = isatty(STDOUT_FILENO);
  const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(a.interval > 0 ? a.interval : 2.0));
  KeyedCounts prev;
  std::optional<std::chrono::steady_clock::time_point> prev_at;
  size_t hint = 0;
  auto next = std::chrono::steady_clock::now();
  for (unsigned round = 0;; ++round) {
    LV_TRY_ASSIGN(auto w, walk_state(p.state.get(), a.networks, hint));
    hint = w.keys.size() + w.keys.size() / 8;
    // Rank on counters since the previous walk under --watch, else since creation.
    std::vector<uint64_t> scores(w.keys.size());
    std::vector<TopCounts> deltas;
    if (prev_at) deltas.resize(w.keys.size());
    for (size_t i = 0; i < w.keys.size(); ++i) {
      TopCounts c = TopCounts::of(w.states[i]);
      if (prev_at) {
        const TopCounts* before = prev.find(w.keys[i]);
        c = counts_since(before ? *before : TopCounts{}, c);
        deltas[i] = c;
      }
      scores[i] = top_score(c, *by);
    }
    TopView v;
    v.iface = a.iface;
    v.by = *by;
    v.sources = w.sources;
    v.networks = w.networks;
    v.with_networks = a.networks;
    v.walk_seconds = w.seconds;
    if (prev_at) v.interval = std::chrono::duration<double>(w.at - *prev_at).count();
    const lv_policy& pol = pm.active();
    const uint64_t now = Clocks::read().now_mono_ns;
    for (size_t i : top_indices(scores, a.n)) {
      v.rows.push_back(make_row(p, pm.control(), pol, w.keys[i], w.states[i], now));
      if (prev_at) v.rows.back().delta = deltas[i];
    }
    if (a.json)
      fmt::print("{}\n", top_json(v).dump());
    else
      fmt::print("{}{}", a.watch && tty ? "\x1b[H\x1b[2J" : (round ? "\n" : ""), top_text(v));
    std::fflush(stdout);
    if (!a.watch || (a.count && round + 1 >= a.count)) break;
    prev.assign(w.keys, w.states);
    prev_at = w.at;
    // The next walk starts an interval after the last began, or at once if that one
    // took longer than the interval.
    next += interval;
    if (next < std::chrono::steady_clock::now()) next = std::chrono::steady_clock::now();
    if (!Signals::sleep_until(next)) break;
  }
  return {};
}

}  // namespace levee::cli
