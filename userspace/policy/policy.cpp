#include "policy/policy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/names.hpp"

namespace levee {
namespace {

constexpr Named<lv_list_kind> kListKinds[] = {
    {LV_LIST_ALLOW, "allow"}, {LV_LIST_DENY, "deny"}, {LV_LIST_OVERRIDE, "override"}};
constexpr Named<lv_list_origin> kListOrigins[] = {
    {LV_ORIGIN_CONFIG, "config"}, {LV_ORIGIN_CLI, "cli"}, {LV_ORIGIN_IMPORT, "import"}};
constexpr Named<Admission> kAdmissions[] = {
    {Admission::Auto, "auto"}, {Admission::Off, "off"}, {Admission::Budget, "budget"}};
constexpr Named<Proto> kProtos[] = {
    {Proto::Tcp, "tcp"}, {Proto::Udp, "udp"}, {Proto::Icmp, "icmp"}, {Proto::Icmp6, "icmpv6"}, {Proto::Other, "other"}};

}  // namespace

const char* list_kind_name(lv_list_kind k) { return name_in(kListKinds, k, "none"); }
const char* list_origin_name(lv_list_origin o) { return name_in(kListOrigins, o, "unknown"); }
const char* admission_name(Admission a) { return name_in(kAdmissions, a, "?"); }

bool AutoSpec::operator==(const AutoSpec& o) const {
  return floor == o.floor && margin == o.margin && burst_ns == o.burst_ns && sustain_ns == o.sustain_ns &&
         release_ns == o.release_ns && network_prefix4 == o.network_prefix4 && network_prefix6 == o.network_prefix6 &&
         network_sources == o.network_sources && network_rate == o.network_rate &&
         known_good_after_ns == o.known_good_after_ns && known_good_for_ns == o.known_good_for_ns;
}

std::string Where::describe() const {
  std::string s = file;
  if (line) s += fmt::format(":{}", line);
  if (!key.empty()) s += (s.empty() ? "" : ": ") + key;
  return s;
}

std::optional<Proto> parse_proto(std::string_view s) {
  if (s == "icmp6") return Proto::Icmp6;  // taken too; written as icmpv6
  return value_in(kProtos, s);
}

const char* proto_name(Proto p) { return name_in(kProtos, p, "?"); }

bool has_syn_auth(const Policy& p) {
  return std::any_of(p.classes.begin(), p.classes.end(),
                     [](const ClassSpec& c) { return c.syn_auth_in_force() != SynAuth::Off; });
}

bool ClassSpec::takes_whole_tcp() const {
  const auto& pr = match.protos;
  return (pr.empty() || std::find(pr.begin(), pr.end(), Proto::Tcp) != pr.end()) && !match.syn && match.sports.empty();
}

SynAuth ClassSpec::syn_auth_in_force() const {
  if (syn_auth_explicit()) return syn_auth;
  return takes_whole_tcp() && admission_in_force() == Admission::Auto ? SynAuth::Auto : SynAuth::Off;
}

Policy one_class_policy(const Limits& l) {
  Policy p;
  ClassSpec c;
  c.name = "default";
  c.packets = {l.rate, l.burst};
  c.prefix4 = l.prefix4;
  c.prefix6 = l.prefix6;
  p.classes.push_back(c);  // the autopilot on, with [auto]'s defaults, as in a file
  p.source = "command line";
  return p;
}

}  // namespace levee
