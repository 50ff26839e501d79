// render_crowdsec.hpp - levee run's CrowdSec bouncer in `levee status`, as its state file
// said (IfaceStatus::bouncer): whether its pulls work, since when, and the last error.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "datapath/inspect.hpp"

namespace levee {

// {"up", "for_s", "pull_errors", "pull_timeouts", "last_error"}, or null without a bouncer.
nlohmann::json bouncer_json(const IfaceStatus& s);
// What follows "crowdsec N decisions held, M in force": "; pulls working for 2m 3s", or
// "; pulls failing for 12s (7 failed, 3 at their deadline): <the last error>".
std::string bouncer_text(const IfaceStatus& s);

}  // namespace levee
