// validate.hpp - everything the kernel would refuse in a Policy, or that would not mean
// what it says, found before anything is written; each error names the file, line and
// key its class, override or list entry came from.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "policy/policy.hpp"

namespace levee {

// `now_unix_ns` judges expiry times.
Status validate(const Policy& p, uint64_t now_unix_ns);

// Check what no single class shows: every class banning in every class counts sources
// with the same prefixes (one ban record per source for all of them).
Status check_ban_scopes(const std::vector<ClassSpec>& classes);

// The autopilot's settings ([auto]): each within its range (docs/CONFIG.md), release
// at least sustain, known_good_for at least known_good_after. `where_of(key)` ("floor")
// is where to report a key: the config reader gives the key's own line, or line 0 for a
// key the file left out (a rule between two keys then names the one given); validate()
// gives the [auto] table.
Status check_auto(const AutoSpec& a, const std::function<Where(std::string_view key)>& where_of);

// A class's or override's name: 1 to LV_NAME_LEN - 1 letters, digits, '-', '_' or '.'.
bool valid_name(std::string_view n);

}  // namespace levee
