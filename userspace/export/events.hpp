// events.hpp - the event log rendered: an EventRecord (datapath/events.hpp, where the
// reader decodes them) as one line of text or one JSON object, for `levee events` and
// the events file of `levee run`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "datapath/events.hpp"

namespace levee {

const char* event_type_name(unsigned type);  // core/event_types.hpp's name, or "unknown"
const char* reason_name(unsigned reason);    // core/reasons.hpp's name, or "reason_N"

// JSON: as docs/JSON.md describes `levee events` (a test holds it to that).
nlohmann::json event_json(const EventRecord& r);
// One line: "2026-11-22T05:15:23.123Z eth0 banned 198.18.0.7 class dns reason rate: 2s, offence 1".
std::string event_text(const EventRecord& r);

}  // namespace levee
