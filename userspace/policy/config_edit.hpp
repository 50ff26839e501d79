// config_edit.hpp - a change of the limits in an operator's config file, shown as a
// unified diff and never written: what `levee suggest --config FILE` prints.
//
// Line-based: each key of a class's table is replaced where it stands (its value only,
// so a comment after it stays), and a key the table does not have is added after the
// table's last limit (or its name, or its header). The file is read as TOML for where
// each table and key is; nothing else of it changes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace levee {

// A count as a config file takes it: 500 -> "500", 1500 -> "\"1.5k\"" (a string with a
// suffix, as examples/levee.toml writes them), 1234 -> "1234".
std::string config_count(uint64_t v);

// The limits to set in one class's table; a key left empty is left as it is.
// new_sources is set only in a class whose admission in the file is a budget: a number
// there replaces the autopilot ("auto", the default) or "off", so it is set over those
// only when budget_new_sources asks, and a note says what each such class keeps or loses.
struct ClassLimits {
  std::string name;  // as the policy names it: [default]'s name is "default" unless it sets one
  std::optional<uint64_t> rate, burst, bytes_rate, bytes_burst, new_sources;
  bool budget_new_sources = false;
};

struct ConfigDiff {
  std::string diff;                // "" when nothing changes
  std::vector<std::string> notes;  // what could not be changed, one line each
};

// The change of `text` (the config file `name`) that sets `limits`, as a unified diff
// with 3 lines of context, headed "--- name" and "+++ name". The text is validated
// first (parse_config): its errors are load_config's. A class of `limits` the file has
// no table for, or whose table is inline and lacks a key, gets a note.
Result<ConfigDiff> config_limits_diff(const std::string& text, const std::string& name,
                                      const std::vector<ClassLimits>& limits);

// A unified diff (3 lines of context) of an edit given as the old text's lines in order,
// each kept or removed, with the added lines where they go. no_newline_at_end: both texts
// end without a newline (the diff says so after their last line).
struct LineOp {
  char kind;  // ' ' kept, '-' removed, '+' added
  std::string text;
};
std::string unified_diff(const std::vector<LineOp>& ops, const std::string& name, bool no_newline_at_end);

}  // namespace levee
