// render_status.hpp - `levee status`: each attached interface, its classes, overrides,
// lists, mode, sources and bans, as text or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "datapath/inspect.hpp"
#include "policy/policy.hpp"

namespace levee {

// The interface's mode as status shows it: "enforce", "monitor", or "mixed: 2 classes
// monitor" (JSON: "enforce", "monitor", "mixed").
std::string monitor_mode(const IfaceStatus& s, bool json = false);

// The autopilot of class i (first-match order) as the datapath left it at s.now_ns, read
// by guard.h's rules: what status prints and the metrics export.
struct AutopilotView {
  enum State : uint8_t {
    Off,             // no admission autopilot in the class
    Calm,            // no abnormal arrival for release_ns
    Abnormal,        // abnormal arrivals (admitted on probation), not engaged
    Engaged,         // engaged and not calm: arrivals over the threshold refused
    ReleasePending,  // engaged_ns still set, but calm: released at the next arrival or
                     // by levee run
  };
  Admission admission = Admission::Off;
  bool escalates = false;        // the network watch is in force (LV_CLASS_ESCALATE)
  bool escalate_wanted = false;  // escalate = "auto", without a network limit to enforce
  State state = Off;
  uint64_t threshold = 0;  // new sources per second in force (Auto)
  lv_guard guard{};
};
AutopilotView autopilot_view(const IfaceStatus& s, size_t i);
// "off", "calm", "abnormal", "engaged", "release_pending"
const char* autopilot_state_name(AutopilotView::State st);

nlohmann::json status_json(const std::vector<IfaceStatus>& all);
std::string status_text(const std::vector<IfaceStatus>& all);

}  // namespace levee
