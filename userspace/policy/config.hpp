// config.hpp - the TOML config file: parsed, checked, and turned into a Policy.
//
// Every key is documented in docs/CONFIG.md; examples/levee.toml is a typical edge
// server. Errors name the file, the line and the key:
//   levee.toml:14: class[2].match.port: 70000 is not a port; give 0 to 65535
// Unknown keys are errors (a typo must not silently leave a limit out).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/result.hpp"
#include "policy/policy.hpp"

namespace levee {

// The most levee reads of a file an operator gives it (a config file, a blocklist).
inline constexpr size_t kMaxInputFileBytes = size_t{64} << 20;

// The text of the config file `path`, at most kMaxInputFileBytes of it.
Result<std::string> read_config_text(const std::string& path);

// Parse and validate `path` (validate(policy, now) included). Errors are usage errors.
// The policy's source is the path.
Result<Policy> load_config(const std::string& path);

// The same from text, `name` standing for the file in errors (for tests).
Result<Policy> parse_config(const std::string& text, const std::string& name);

// The same at a given wall-clock time (Unix ns): durations in `expires` count from it,
// and date-times before it are errors. parse_config above passes the current time.
Result<Policy> parse_config(const std::string& text, const std::string& name, uint64_t now_unix_ns);

// A config whose [interface] name is set applies to that interface only: attach,
// reload and run on another one are usage errors.
Status check_config_iface(const Policy& p, const std::string& iface);

// load_config for one interface: also refuses a config that names another.
Result<Policy> load_config(const std::string& path, const std::string& iface);

}  // namespace levee
