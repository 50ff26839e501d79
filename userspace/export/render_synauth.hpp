// render_synauth.hpp - SYN authentication's proxy and the known-good filter as `levee
// status` shows them (text and JSON), what attach says of them, and their metrics.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "datapath/attach.hpp"
#include "datapath/inspect.hpp"

namespace levee {

// The option names of LV_TCP_OFF_* bits: "timestamps", "sack", "window_scaling".
std::vector<std::string> tcp_off_names(uint32_t tcp_off);

// status: null without a class with syn_auth / before a walk measured the filter.
nlohmann::json syn_auth_json(const IfaceStatus& s);
nlohmann::json known_good_json(const IfaceStatus& s);
// status: the lines, "" where there is nothing to say.
std::string syn_auth_text(const IfaceStatus& s);
std::string known_good_text(const IfaceStatus& s);

// What attach (and levee run's attach) says of SYN authentication beyond the policy: the
// tc filter's place, the options left out, the cookie keys kept. One line each.
std::vector<std::string> syn_attach_notes(const AttachResult& r);

}  // namespace levee
