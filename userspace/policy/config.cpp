#include "policy/config.hpp"

namespace levee {

// Placeholder until the TOML parser lands.
Result<Policy> parse_config(const std::string&, const std::string& name) {
  return usage_error(name + ": config files are not supported yet");
}

Result<Policy> load_config(const std::string& path) { return parse_config("", path); }

}  // namespace levee
