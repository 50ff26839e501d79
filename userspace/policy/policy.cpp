#include "policy/policy.hpp"

#include <fmt/format.h>

namespace levee {

const char* list_kind_name(lv_list_kind k) {
  switch (k) {
    case LV_LIST_ALLOW:
      return "allow";
    case LV_LIST_DENY:
      return "deny";
    case LV_LIST_OVERRIDE:
      return "override";
    default:
      return "none";
  }
}

const char* list_origin_name(lv_list_origin o) {
  switch (o) {
    case LV_ORIGIN_CONFIG:
      return "config";
    case LV_ORIGIN_CLI:
      return "cli";
    case LV_ORIGIN_IMPORT:
      return "import";
  }
  return "unknown";
}

std::string Where::describe() const {
  std::string s = file;
  if (line) s += fmt::format(":{}", line);
  if (!key.empty()) s += (s.empty() ? "" : ": ") + key;
  return s;
}

std::optional<Proto> parse_proto(std::string_view s) {
  if (s == "tcp") return Proto::Tcp;
  if (s == "udp") return Proto::Udp;
  if (s == "icmp") return Proto::Icmp;
  if (s == "icmpv6" || s == "icmp6") return Proto::Icmp6;
  if (s == "other") return Proto::Other;
  return std::nullopt;
}

const char* proto_name(Proto p) {
  switch (p) {
    case Proto::Tcp:
      return "tcp";
    case Proto::Udp:
      return "udp";
    case Proto::Icmp:
      return "icmp";
    case Proto::Icmp6:
      return "icmpv6";
    case Proto::Other:
      return "other";
  }
  return "?";
}

Policy one_class_policy(const Limits& l) {
  Policy p;
  ClassSpec c;
  c.name = "default";
  c.packets = {l.rate, l.burst};
  c.prefix4 = l.prefix4;
  c.prefix6 = l.prefix6;
  p.classes.push_back(c);
  p.source = "command line";
  return p;
}

}  // namespace levee
