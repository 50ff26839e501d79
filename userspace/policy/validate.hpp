// validate.hpp - everything the kernel would refuse in a Policy, or that would not mean
// what it says, found before anything is written; each error names the file, line and
// key its class, override or list entry came from.
#pragma once

#include <cstdint>
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

// A class's or override's name: 1 to LV_NAME_LEN - 1 letters, digits, '-', '_' or '.'.
bool valid_name(std::string_view n);

}  // namespace levee
