#include "export/render_policy.hpp"

#include <fmt/format.h>

#include <vector>

#include "core/units.hpp"
#include "export/render_units.hpp"

namespace levee {

std::string describe_rates(const Rate& packets, const Rate& bytes) {
  std::string s;
  if (packets.set()) s += fmt::format("{} pps, burst {}", format_count(packets.rate), format_count(packets.burst));
  if (bytes.set())
    s +=
        fmt::format("{}{} B/s, burst {} B", s.empty() ? "" : "; ", format_count(bytes.rate), format_count(bytes.burst));
  return s.empty() ? "no limit" : s;
}

std::string override_line(const std::string& name, const Rate& packets, const Rate& bytes, const std::string& where) {
  return fmt::format("  override {:<11} {}; {}\n", name, describe_rates(packets, bytes), where);
}

std::string lists_line(size_t allow, size_t deny, size_t overrides) {
  return fmt::format("  lists    {} allow, {} deny, {} override entries\n", group_digits(allow), group_digits(deny),
                     group_digits(overrides));
}

std::string describe_limits(const ClassSpec& c) {
  std::string s = c.per_source_limited() ? describe_rates(c.packets, c.bytes) : "no limit per source";
  s += fmt::format("; per source /{} (IPv4), /{} (IPv6)", c.prefix4, c.prefix6);
  if (std::string extras = describe_extras(c); !extras.empty()) s += "; " + extras;
  return s;
}

std::string describe_extras(const ClassSpec& c) {
  std::vector<std::string> parts;
  if (c.new_sources.set())
    parts.push_back(
        fmt::format("new sources {}/s, burst {}", format_count(c.new_sources.rate), format_count(c.new_sources.burst)));
  if (c.network.set())
    parts.push_back(fmt::format("per network /{}, /{}: {}", c.network.prefix4, c.network.prefix6,
                                describe_rates(c.network.packets, c.network.bytes)));
  if (c.total.set()) parts.push_back("class total " + describe_rates(c.total.packets, c.total.bytes));
  if (c.ban.set())
    parts.push_back(fmt::format("ban {}, doubling up to {}, forgotten after {}{}", format_duration(c.ban.ban_ns),
                                format_duration(c.ban.max_or_default()), format_duration(c.ban.forget_or_default()),
                                c.ban.all_classes ? ", in every class" : ""));
  if (c.monitor) parts.emplace_back("monitor mode");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::string describe_match(const Match& m) {
  if (m.empty()) return "any";
  std::string s;
  std::vector<Proto> protos = m.protos;
  // Ports and SYN only exist for the protocols that carry them.
  if (protos.empty() && m.syn) protos = {Proto::Tcp};
  if (protos.empty() && m.ported()) protos = {Proto::Tcp, Proto::Udp};
  for (Proto p : protos) s += fmt::format("{}{}", s.empty() ? "" : ",", proto_name(p));
  if (m.syn) s += " syn";
  auto ranges = [&](const std::vector<PortRange>& v, const char* one, const char* many) {
    if (v.empty()) return;
    s += v.size() == 1 && v[0].first == v[0].last ? one : many;
    for (size_t i = 0; i < v.size(); ++i) {
      const PortRange& r = v[i];
      s += i ? "," : "";
      s += r.first == r.last ? fmt::format("{}", r.first) : fmt::format("{}-{}", r.first, r.last);
    }
  };
  ranges(m.ports, " port ", " ports ");
  ranges(m.sports, " sport ", " sports ");
  return s;
}

std::string policy_text(const Policy& p, bool with_lists) {
  std::string out;
  for (const ClassSpec& c : p.classes)
    out += fmt::format("  class {:<14} {}: {}\n", c.name, describe_match(c.match), describe_limits(c));
  for (const OverrideSpec& o : p.overrides) {
    std::string in;
    for (const auto& c : o.classes) in += (in.empty() ? "" : ", ") + c;
    out += override_line(o.name, o.packets, o.bytes, in.empty() ? "every class" : "classes " + in);
  }
  if (!with_lists) return out;
  size_t n[4] = {};
  for (const ListEntry& e : p.lists) ++n[e.kind & 3];
  out += lists_line(n[LV_LIST_ALLOW], n[LV_LIST_DENY], n[LV_LIST_OVERRIDE]);
  return out;
}

}  // namespace levee
