// render_suggest.hpp - `levee suggest`: what each class's sources did in the window and
// the limits suggested from it, as text or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "export/suggest.hpp"
#include "policy/config_edit.hpp"

namespace levee {

// As docs/JSON.md describes `levee suggest` (a test holds it to that); with a diff of
// the config file `config` (--config), its "config".
nlohmann::json suggest_json(const SuggestReport& r, const ConfigDiff* diff = nullptr, const std::string& config = "");
std::string suggest_text(const SuggestReport& r);

}  // namespace levee
