#include "export/events.hpp"

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/reasons.hpp"
#include "core/units.hpp"

namespace levee {

const char* event_type_name(unsigned type) {
  switch (type) {
    case LV_EV_LIMITED:
      return "limited";
    case LV_EV_BANNED:
      return "banned";
    case LV_EV_ADMISSION:
      return "admission";
    case LV_EV_MAP_FULL:
      return "map_full";
    case LV_EV_BAN_ENDED:
      return "ban_ended";
    default:
      return "unknown";
  }
}

const char* reason_name(unsigned reason) {
  for (const ReasonInfo& r : kReasons)
    if (r.id == reason) return r.name.data();
  return "unknown";
}

nlohmann::json event_json(const EventRecord& r) {
  using nlohmann::json;
  json j{{"time", format_time(r.time_unix_ns, TimeDigits::Millis)},
         {"iface", r.iface},
         {"type", event_type_name(r.type)},
         {"address", r.address},
         {"class", r.class_name.empty() ? json(nullptr) : json(r.class_name)},
         {"reason", r.reason ? json(reason_name(*r.reason)) : json(nullptr)},
         {"suppressed", r.suppressed}};
  if (r.type == LV_EV_BANNED || r.type == LV_EV_BAN_ENDED) {
    j["duration_ms"] = r.value / 1'000'000;
    j["offences"] = r.count;
    j["scope"] = r.every_class ? "all" : "class";
  }
  if (r.type == LV_EV_BAN_ENDED) j["lifted"] = r.lifted;
  return j;
}

std::string event_text(const EventRecord& r) {
  std::string out = fmt::format("{} {} {} {}", format_time(r.time_unix_ns, TimeDigits::Millis), r.iface,
                                event_type_name(r.type), r.address);
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
    default:
      break;
  }
  if (r.suppressed) out += fmt::format(" ({} event{} suppressed before)", r.suppressed, r.suppressed == 1 ? "" : "s");
  return out;
}

}  // namespace levee
