#include "export/render_show.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "core/clock.hpp"
#include "core/units.hpp"
#include "export/render_lists.hpp"
#include "export/render_policy.hpp"
#include "export/render_units.hpp"
#include "guard.h"
#include "limiter.h"
#include "policy/cidr.hpp"
#include "policy/policy.hpp"

namespace levee {
namespace {

using nlohmann::json;

// The address as the network of the given prefix lengths that holds it.
std::string masked(const std::string& address, unsigned len4, unsigned len6) {
  auto a = Cidr::parse(address);
  if (!a) return address;
  Cidr k = *a;
  k.len = k.family == 4 ? len4 : len6;
  k.addr = mask_prefix(k.addr, k.len);
  return k.to_string();
}

uint64_t ago(uint64_t then, uint64_t now) { return now > then ? now - then : 0; }

// What a list entry does to the address, as `levee show` says it.
std::string list_effect(const ListRow& r) {
  switch (r.kind) {
    case LV_LIST_ALLOW:
      return "never limited (still counted)";
    case LV_LIST_DENY:
      return "every packet dropped";
    case LV_LIST_OVERRIDE:
      return fmt::format("limited by override '{}' in the classes it names", r.override_name);
    default:
      return "";
  }
}

// The ban record's state: the same fields in each class and for the every-class record.
json ban_json(const lv_ban* b, uint64_t now) {
  const bool on = b && b->until_ns > now;
  return {{"banned", on},
          {"ban_remaining_ms", on ? (b->until_ns - now + kNsPerMs - 1) / kNsPerMs : 0},
          {"offences", b ? b->offences : 0},
          {"ban_duration_ms", b ? b->duration_ns / kNsPerMs : 0},
          {"ban_since_ms_ago",
           b && b->since_ns && b->since_ns <= now ? json((now - b->since_ns) / kNsPerMs) : json(nullptr)}};
}

// The network's limits, state and counters: null without a network limit or state.
json network_json(const ShowResult& r, const ShowClass& c) {
  const std::optional<ShowLimiter> nl = show_network_limiter(c);
  if (!nl) return nullptr;
  json n = {{"network", masked(r.address, c.cls.net_prefix4, c.cls.net_prefix6)},
            {"rate", c.cls.net_pkt.rate},
            {"burst", c.cls.net_pkt.burst},
            {"bytes_rate", c.cls.net_bytes.rate},
            {"bytes_burst", c.cls.net_bytes.burst},
            {"tokens", json_or_null(nl->tokens)},
            {"byte_tokens", json_or_null(nl->byte_tokens)},
            {"wait_ns", nl->wait_ns}};
  n.update(counts_json(*c.network));
  return n;
}

// The source's state on probation as the limiter sees it: null when it has none.
json probation_json(const ShowClass& c) {
  if (!c.probation) return nullptr;
  const ShowLimiter l = show_probation_limiter(c);
  json p = {{"tokens", json_or_null(l.tokens)}, {"byte_tokens", json_or_null(l.byte_tokens)}, {"wait_ns", l.wait_ns}};
  p.update(counts_json(*c.probation));
  return p;
}

// Its network as the autopilot watches it: null when not watched.
json watch_json(const ShowResult& r, const ShowClass& c) {
  if (!c.watch) return nullptr;
  const lv_watch& w = *c.watch;
  return {{"network", masked(r.address, c.cls.autop.watch_prefix4, c.cls.autop.watch_prefix6)},
          {"escalated", lv_watch_escalated(&w, c.now_ns, c.cls.autop.release_ns) != 0},
          {"since_ms", w.escalated_ns ? json(ago(w.escalated_ns, c.now_ns) / kNsPerMs) : json(nullptr)},
          {"rate", c.cls.autop.watch.rate},
          {"burst", c.cls.autop.watch.burst},
          {"dropped_packets", LV_COUNT_PACKETS(w.dropped)}};
}

json class_json(const ShowResult& r, const ShowClass& c) {
  const ShowLimiter l = show_limiter(c);
  json cj = {{"name", c.name},
             {"id", c.class_id},
             {"source", show_source(r, c)},
             {"override", json_or_null(c.override_name)},
             {"rate", c.pkt.rate},
             {"burst", c.pkt.burst},
             {"bytes_rate", c.bytes.rate},
             {"bytes_burst", c.bytes.burst},
             {"tokens", json_or_null(l.tokens)},
             {"byte_tokens", json_or_null(l.byte_tokens)},
             {"wait_ns", l.wait_ns},
             {"has_state", c.has_state},
             {"monitor", (c.cls.flags & LV_CLASS_MONITOR) != 0},
             {"network", network_json(r, c)},
             {"on_probation", c.probation.has_value()},
             {"probation", probation_json(c)},
             {"known_good", json_or_null(c.known_good)},
             {"watch", watch_json(r, c)}};
  cj.update(counts_json(c.state));
  const lv_ban* ban = show_ban(c);
  cj.update(ban_json(ban, c.now_ns));
  const bool from_all = ban && c.ban_all && ban == &*c.ban_all;
  cj["ban_scope"] = !ban ? json(nullptr) : json(from_all ? "all" : "class");
  return cj;
}

// "  list     deny 198.51.100.0/24, origin config: every packet dropped\n"
std::string list_line(const ShowResult& r, uint64_t now_unix_ns) {
  if (!r.list) return "  list     no entry: limited by its class\n";
  const ListRow& e = *r.list;
  std::string what = e.kind == LV_LIST_OVERRIDE ? fmt::format("override {} {}", e.override_name, e.cidr.to_string())
                                                : fmt::format("{} {}", list_kind_name(e.kind), e.cidr.to_string());
  std::string detail = fmt::format("origin {}", list_origin_name(e.origin));
  if (e.expires_unix_ns)
    detail +=
        fmt::format(", expires {} ({})", format_time(e.expires_unix_ns), format_expiry(e.expires_unix_ns, now_unix_ns));
  return fmt::format("  list     {}, {}: {}\n", what, detail, list_effect(e));
}

// "banned for 2.5 s more (4s ban, began 1.5 s ago), 3 offences", or "not banned; 1
// offence, the last ban ended 1m 10s ago"; `scope` after the ban, or the offences.
std::string ban_state(const lv_ban& b, uint64_t now, std::string_view scope) {
  const std::string offences = fmt::format("{} offence{}", b.offences, b.offences == 1 ? "" : "s");
  if (b.until_ns > now)
    return fmt::format("banned for {} more ({} ban{}, began {} ago), {}", format_remaining(b.until_ns - now),
                       format_duration(b.duration_ns / kNsPerMs * kNsPerMs), scope,
                       format_remaining(now > b.since_ns ? now - b.since_ns : 0), offences);
  return fmt::format("not banned; {}{}, the last ban ended {} ago", offences, scope,
                     format_remaining(now - b.until_ns));
}

std::string counts_text(uint64_t v) {
  const uint32_t p = LV_COUNT_PACKETS(v), b = LV_COUNT_BYTES(v);
  return fmt::format("{} packet{}, {} byte{}", group_digits(p), p == 1 ? "" : "s", group_digits(b), b == 1 ? "" : "s");
}

std::string tokens_text(const ShowLimiter& l) {
  std::string tokens;
  if (l.tokens) tokens = fmt::format("{} packets", group_digits(*l.tokens));
  if (l.byte_tokens) tokens += fmt::format("{}{} bytes", tokens.empty() ? "" : ", ", group_digits(*l.byte_tokens));
  return tokens;
}

std::string next_text(const ShowLimiter& l) { return l.wait_ns ? "in " + format_ns(l.wait_ns) : std::string("now"); }

// A state's tokens, next packet and counters.
std::string state_text(const ShowLimiter& l, const lv_state& st, bool monitor) {
  std::string out;
  if (std::string tokens = tokens_text(l); !tokens.empty()) out += fmt::format("    tokens   {}\n", tokens);
  out += fmt::format("    next     {}\n", next_text(l));
  out += fmt::format("    passed   {}\n", counts_text(st.passed));
  // A monitoring class drops nothing: what it counts are the packets it would drop.
  out += fmt::format("    {}  {}\n", monitor ? "would drop" : "dropped", counts_text(st.dropped));
  return out;
}

// Its state as a source, its state on probation, or neither.
std::string states_text(const ShowClass& c, bool monitor) {
  std::string out;
  if (c.has_state) out += state_text(show_limiter(c), c.state, monitor);
  if (c.probation) {
    out += fmt::format("    state    {}on probation: admitted while the class was not calm, promoted once it is\n",
                       c.has_state ? "also " : "");
    out += state_text(show_probation_limiter(c), *c.probation, monitor);
  }
  if (c.has_state || c.probation) return out;
  // Known through its network, a ban or a known-good mark: it had state once; through an
  // escalated network alone, perhaps never.
  if (c.network || c.ban || c.known_good == true)
    return "    state    none of its own (not seen since its state was evicted)\n";
  return "    state    none of its own\n";
}

// "    watch    198.51.0.0/16: escalated 4.1 s ago, limited to 32k pps, burst 6.4k as a
// whole; 1,234 packets dropped", or watched only, or calm again.
std::string watch_text(const ShowResult& r, const ShowClass& c, bool monitor) {
  const lv_watch& w = *c.watch;
  const lv_auto& a = c.cls.autop;
  const std::string limit = describe_rates({a.watch.rate, a.watch.burst}, {});
  std::string what;
  if (lv_watch_escalated(&w, c.now_ns, a.release_ns))
    what = fmt::format("escalated {} ago, {} to {} as a whole; {} {}", format_remaining(ago(w.escalated_ns, c.now_ns)),
                       monitor ? "would be limited" : "limited", limit, counts_text(w.dropped),
                       monitor ? "would be dropped" : "dropped");
  else if (w.escalated_ns)
    what =
        fmt::format("escalated {} ago, calm again (release pending)", format_remaining(ago(w.escalated_ns, c.now_ns)));
  else
    what = fmt::format("watched, not escalated (its limit once escalated: {})", limit);
  return fmt::format("    watch    {}: {}\n", masked(r.address, a.watch_prefix4, a.watch_prefix6), what);
}

// A class the address has state (as a source or on probation), a network state, a ban,
// an escalated network or a known-good mark in.
std::string class_text(const ShowResult& r, const ShowClass& c) {
  const bool monitor = c.cls.flags & LV_CLASS_MONITOR;
  std::string out =
      fmt::format("  class {}  source {}{}\n", c.name, show_source(r, c), monitor ? "  (monitor mode)" : "");
  std::string limits = describe_rates({c.pkt.rate, c.pkt.burst}, {c.bytes.rate, c.bytes.burst});
  if (c.override_name) limits += fmt::format(" (override {}, replacing the class's)", *c.override_name);
  out += fmt::format("    limits   {}\n", limits);
  out += states_text(c, monitor);
  if (auto nl = show_network_limiter(c)) {
    std::string tokens = tokens_text(*nl);
    out += fmt::format(
        "    network  {}: {}{}; next {}\n", masked(r.address, c.cls.net_prefix4, c.cls.net_prefix6),
        describe_rates({c.cls.net_pkt.rate, c.cls.net_pkt.burst}, {c.cls.net_bytes.rate, c.cls.net_bytes.burst}),
        tokens.empty() ? "" : "; tokens " + tokens, next_text(*nl));
    out += fmt::format("             passed {}; {} {}\n", counts_text(c.network->passed),
                       monitor ? "would drop" : "dropped", counts_text(c.network->dropped));
  }
  if (c.watch) out += watch_text(r, c, monitor);
  if (const lv_ban* b = show_ban(c)) {
    const bool everywhere = c.ban_all && b == &*c.ban_all;
    out += "    ban      " + ban_state(*b, c.now_ns, everywhere ? ", in every class" : "") + "\n";
  }
  if (c.known_good)
    out += *c.known_good ? "    admission known-good: let in even while the class's autopilot is engaged\n"
                         : "    admission not known-good\n";
  return out;
}

}  // namespace

ShowLimiter limiter_view(const lv_state& s, const lv_limit& pkt, const lv_limit& bytes, uint64_t now) {
  ShowLimiter l;
  if (pkt.cost) {
    l.tokens = lv_gcra_tokens(s.ready_ns, now, &pkt);
    l.wait_ns = lv_gcra_wait(s.ready_ns, now);
  }
  if (bytes.cost) {
    l.byte_tokens = lv_byte_tokens(s.ready_bytes_ns, now, &bytes);
    l.wait_ns = std::max<uint64_t>(l.wait_ns, lv_gcra_wait(s.ready_bytes_ns, now));
  }
  return l;
}

ShowLimiter show_limiter(const ShowClass& c) { return limiter_view(c.state, c.pkt, c.bytes, c.now_ns); }

std::string show_source(const ShowResult& r, const ShowClass& c) {
  return masked(r.address, c.cls.prefix4, c.cls.prefix6);
}

ShowLimiter show_probation_limiter(const ShowClass& c) {
  return c.probation ? limiter_view(*c.probation, c.pkt, c.bytes, c.now_ns) : ShowLimiter{};
}

std::optional<ShowLimiter> show_network_limiter(const ShowClass& c) {
  if (!c.network) return std::nullopt;
  return limiter_view(*c.network, c.cls.net_pkt, c.cls.net_bytes, c.now_ns);
}

const lv_ban* show_ban(const ShowClass& c) {
  const lv_ban* own = c.ban ? &*c.ban : nullptr;
  const lv_ban* all = c.ban_all ? &*c.ban_all : nullptr;
  const bool own_on = own && own->until_ns > c.now_ns, all_on = all && all->until_ns > c.now_ns;
  if (own_on && all_on) return own->until_ns >= all->until_ns ? own : all;
  if (own_on) return own;
  if (all_on) return all;
  return own ? own : all;
}

json show_json(const std::string& iface, const ShowResult& r, uint64_t now_unix_ns) {
  json classes = json::array();
  for (const ShowClass& c : r.classes) classes.push_back(class_json(r, c));
  json ban_all = nullptr;
  if (r.ban_all) ban_all = ban_json(&*r.ban_all, r.now_ns);
  return {{"interface", iface},
          {"address", r.address},
          {"list", r.list ? list_row_json(*r.list, now_unix_ns) : json(nullptr)},
          {"classes", classes},
          {"ban_all", ban_all},
          {"counter_bits", 32}};
}

std::string show_text(const std::string& iface, const ShowResult& r, uint64_t now_unix_ns) {
  if (!r.list && r.classes.empty() && !r.ban_all)
    return fmt::format("{} on {}: no state in any class, on no list\n", r.address, iface);
  std::string out = fmt::format("{} on {}\n", r.address, iface);
  out += list_line(r, now_unix_ns);
  if (r.ban_all) out += "  ban      in every class: " + ban_state(*r.ban_all, r.now_ns, "") + "\n";
  if (r.classes.empty()) out += "  no state in any class\n";
  for (const ShowClass& c : r.classes) out += class_text(r, c);
  if (!r.classes.empty()) out += per_source_counters_note();
  return out;
}

}  // namespace levee
