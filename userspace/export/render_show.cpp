#include "export/render_show.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "core/clock.hpp"
#include "core/units.hpp"
#include "export/render_lists.hpp"
#include "export/render_policy.hpp"
#include "export/render_units.hpp"
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

json class_json(const ShowResult& r, const ShowClass& c) {
  const ShowLimiter l = show_limiter(c);
  json cj = {{"name", c.name},
             {"class_id", c.class_id},
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
             {"network", network_json(r, c)}};
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

// A class the address has state, a network state or a ban in.
std::string class_text(const ShowResult& r, const ShowClass& c) {
  const ShowLimiter l = show_limiter(c);
  const bool monitor = c.cls.flags & LV_CLASS_MONITOR;
  std::string out =
      fmt::format("  class {}  source {}{}\n", c.name, show_source(r, c), monitor ? "  (monitor mode)" : "");
  std::string limits = describe_rates({c.pkt.rate, c.pkt.burst}, {c.bytes.rate, c.bytes.burst});
  if (c.override_name) limits += fmt::format(" (override {}, replacing the class's)", *c.override_name);
  out += fmt::format("    limits   {}\n", limits);
  if (c.has_state) {
    if (std::string tokens = tokens_text(l); !tokens.empty()) out += fmt::format("    tokens   {}\n", tokens);
    out += fmt::format("    next     {}\n", next_text(l));
    out += fmt::format("    passed   {}\n", counts_text(c.state.passed));
    // A monitoring class drops nothing: what it counts are the packets it would drop.
    out += fmt::format("    {}  {}\n", monitor ? "would drop" : "dropped", counts_text(c.state.dropped));
  } else {
    out += "    state    none of its own (not seen since its state was evicted)\n";
  }
  if (auto nl = show_network_limiter(c)) {
    std::string tokens = tokens_text(*nl);
    out += fmt::format(
        "    network  {}: {}{}; next {}\n", masked(r.address, c.cls.net_prefix4, c.cls.net_prefix6),
        describe_rates({c.cls.net_pkt.rate, c.cls.net_pkt.burst}, {c.cls.net_bytes.rate, c.cls.net_bytes.burst}),
        tokens.empty() ? "" : "; tokens " + tokens, next_text(*nl));
    out += fmt::format("             passed {}; {} {}\n", counts_text(c.network->passed),
                       monitor ? "would drop" : "dropped", counts_text(c.network->dropped));
  }
  if (const lv_ban* b = show_ban(c)) {
    const bool everywhere = c.ban_all && b == &*c.ban_all;
    out += "    ban      " + ban_state(*b, c.now_ns, everywhere ? ", in every class" : "") + "\n";
  }
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
