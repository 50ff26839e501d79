// render_status.hpp - `levee status`: each attached interface, its classes, overrides,
// lists, mode, sources and bans, as text or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bpf/inspect.hpp"

namespace levee {

// The interface's mode as status shows it: "enforce", "monitor", or "mixed: 2 classes
// monitor" (JSON: "enforce", "monitor", "mixed").
std::string monitor_mode(const IfaceStatus& s, bool json = false);

nlohmann::json status_json(const std::vector<IfaceStatus>& all);
std::string status_text(const std::vector<IfaceStatus>& all);

}  // namespace levee
