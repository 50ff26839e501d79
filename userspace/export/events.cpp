#include "export/events.hpp"

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/event_types.hpp"
#include "core/reasons.hpp"
#include "core/units.hpp"
#include "export/render_synauth.hpp"
#include "export/render_units.hpp"

namespace levee {

const char* event_type_name(unsigned type) {
  switch (type) {
    case kEvSynProxy:
      return "syn_proxy";
    case kEvTcpOptions:
      return "tcp_options";
    case kEvTcFilter:
      return "tc_filter";
    default:
      return event_type_name_of(type).data();
  }
}

namespace {

// levee run's own events (ControllerEvent): of the interface, with no class or address.
std::string controller_event_text(const EventRecord& r) {
  switch (r.type) {
    case kEvSynProxy:
      return fmt::format("SYN authentication {}: {}", r.value ? "proxies" : "answers in reset mode", r.why);
    case kEvTcpOptions:
      return fmt::format("SYN-ACKs leave out {}", tcp_options_text(static_cast<uint32_t>(r.value)));
    case kEvTcFilter:
      return fmt::format("levee's tc filter put back (priority {}, handle {:#x})", r.value, r.count);
    default:
      return "";
  }
}

}  // namespace

const char* reason_name(unsigned reason) {
  for (const ReasonInfo& r : kReasons)
    if (r.id == reason) return r.name.data();
  return "unknown";
}

nlohmann::json event_json(const EventRecord& r) {
  using nlohmann::json;
  json j{{"time", format_time(r.time_unix_ns, TimeDigits::Millis)},
         {"interface", r.iface},
         {"type", event_type_name(r.type)},
         {"address", r.address.empty() ? json(nullptr) : json(r.address)},
         {"class", r.class_name.empty() ? json(nullptr) : json(r.class_name)},
         {"reason", r.reason ? json(reason_name(*r.reason)) : json(nullptr)},
         {"suppressed", r.suppressed}};
  if (r.type == LV_EV_BANNED || r.type == LV_EV_BAN_ENDED) {
    j["duration_ms"] = r.value / 1'000'000;
    j["offences"] = r.count;
    j["scope"] = r.every_class ? "all" : "class";
  }
  if (r.type == LV_EV_BAN_ENDED) j["lifted"] = r.lifted;
  if (r.type == LV_EV_ENGAGED) {
    j["threshold"] = r.value;
    j["engagements"] = r.count;
  }
  if (r.type == LV_EV_ENGAGED || r.type == LV_EV_RELEASED) j["syn_auth"] = r.syn_auto ? "auto" : "off";
  if (r.type == LV_EV_ESCALATED || r.type == LV_EV_ANSWER_LIMITED) j["limit_pps"] = r.value;
  if (r.type == LV_EV_ENGAGED || r.type == LV_EV_ESCALATED || r.type == LV_EV_ANSWER_LIMITED) j["monitor"] = r.monitor;
  if (r.type == LV_EV_RELEASED || r.type == LV_EV_DEESCALATED) j["duration_ms"] = r.value / 1'000'000;
  if (r.type == kEvSynProxy) {
    j["proxying"] = r.value != 0;
    j["why"] = r.why;
  }
  if (r.type == kEvTcpOptions) j["options_off"] = tcp_off_names(static_cast<uint32_t>(r.value));
  if (r.type == kEvTcFilter) {
    j["priority"] = r.value;
    j["handle"] = r.count;
  }
  return j;
}

std::string event_text(const EventRecord& r) {
  std::string out =
      fmt::format("{} {} {}", format_time(r.time_unix_ns, TimeDigits::Millis), r.iface, event_type_name(r.type));
  if (r.type >= kEvSynProxy) return out + ": " + controller_event_text(r);
  if (!r.address.empty()) out += " " + r.address;
  out += r.class_name.empty() ? fmt::format(" class #{}", r.class_id) : fmt::format(" class {}", r.class_name);
  if (r.reason) out += fmt::format(" reason {}", reason_name(*r.reason));
  const std::string offences = fmt::format("{} offence{}", r.count, r.count == 1 ? "" : "s");
  switch (r.type) {
    case LV_EV_BANNED:
      out += fmt::format(": banned for {}{}, {}", format_duration(r.value / 1'000'000 * 1'000'000),
                         r.every_class ? " in every class" : "", offences);
      break;
    case LV_EV_BAN_ENDED:
      out += fmt::format(": {} ban {}{}, {}", format_duration(r.value / 1'000'000 * 1'000'000),
                         r.lifted ? "lifted" : "over", r.every_class ? " (every class)" : "", offences);
      break;
    case LV_EV_ADMISSION:
      out += ": the class's new-source budget is spent";
      break;
    case LV_EV_MAP_FULL:
      out += ": no room for a new source";
      break;
    case LV_EV_ENGAGED:
      out += fmt::format(": the autopilot {} new sources over {}/s{} (engagement {}{})",
                         r.monitor ? "would refuse" : "refuses", group_digits(r.value),
                         r.syn_auto ? (r.monitor ? " and would challenge new TCP sources' SYNs"
                                                 : " and challenges new TCP sources' SYNs")
                                    : "",
                         r.count, r.monitor ? ", monitor mode" : "");
      break;
    case LV_EV_RELEASED:
      out += fmt::format(": the autopilot released after {}{}", format_duration(r.value / 1'000'000 * 1'000'000),
                         r.syn_auto ? "; new TCP sources' SYNs go straight on again" : "");
      break;
    case LV_EV_ESCALATED:
      out += fmt::format(": network {} to {} packets/s as a whole{}", r.monitor ? "would be limited" : "limited",
                         group_digits(r.value), r.monitor ? " (monitor mode)" : "");
      break;
    case LV_EV_DEESCALATED:
      out += fmt::format(": network released after {}", format_duration(r.value / 1'000'000 * 1'000'000));
      break;
    case LV_EV_ANSWER_LIMITED:
      out += fmt::format(": SYN-ACKs towards this network over {}/s: SYNs from it refused an answer{}",
                         group_digits(r.value), r.monitor ? " (monitor mode)" : "");
      break;
    default:
      break;
  }
  if (r.suppressed) out += fmt::format(" ({} event{} suppressed before)", r.suppressed, r.suppressed == 1 ? "" : "s");
  return out;
}

}  // namespace levee
