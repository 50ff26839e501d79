// event_types.hpp - the events' types (enum lv_event_type), as printed and exported.
//
// One table: `levee events` and the events file name them from it, the metrics count by
// its names, `levee events --help` lists them, and the table of CLI.md is generated from
// it (export/reference.hpp, levee-docgen), so none of them can leave a type out.
#pragma once

#include <array>
#include <string_view>

#include "levee_abi.h"

namespace levee {

struct EventTypeInfo {
  unsigned id;
  std::string_view name;
  std::string_view help;  // what happened, for the reference (CLI.md)
};

// Every type the datapath or the controller writes, in ABI order.
inline constexpr std::array kEventTypes{
    EventTypeInfo{LV_EV_LIMITED, "limited", "a source's first drop since its state was created, and why (`reason`)"},
    EventTypeInfo{LV_EV_BANNED, "banned", "a ban began: its length and the source's offences"},
    EventTypeInfo{LV_EV_ADMISSION, "admission",
                  "a class's new-source budget refused a source; once a second per class at most"},
    EventTypeInfo{LV_EV_MAP_FULL, "map_full", "no room for a new source; once a second per class at most"},
    EventTypeInfo{LV_EV_BAN_ENDED, "ban_ended", "a ban ended: it ran out, or `levee unban` lifted it (`lifted`)"},
    EventTypeInfo{LV_EV_ENGAGED, "engaged",
                  "a class's autopilot engaged: it refuses new sources over its threshold, or in monitor mode would"},
    EventTypeInfo{LV_EV_RELEASED, "released", "a class's autopilot is calm again: how long it was engaged"},
    EventTypeInfo{LV_EV_ESCALATED, "escalated",
                  "a network's sources flooded together: the network is limited as a whole, or would be in monitor "
                  "mode"},
    EventTypeInfo{LV_EV_DEESCALATED, "deescalated", "an escalated network is calm again: how long it was escalated"},
    EventTypeInfo{LV_EV_ANSWER_LIMITED, "answer_limited",
                  "SYN-ACKs towards a network went over `[syn_auth]`'s answer rate, so its SYNs are refused an "
                  "answer; once per 10 s per network at most"},
};

// The type's name, or "unknown" for an id the table does not have.
constexpr std::string_view event_type_name_of(unsigned type) {
  for (const EventTypeInfo& t : kEventTypes)
    if (t.id == type) return t.name;
  return "unknown";
}

}  // namespace levee
