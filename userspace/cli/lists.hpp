// lists.hpp - `levee allow|deny|override add|del|list IFACE ...` and `levee deny import
// IFACE FILE`: the lists of an attached interface, edited and read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "levee_abi.h"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

enum class ListOp { Add, Del, List, Import };

struct ListArgs {
  lv_list_kind kind = LV_LIST_DENY;
  ListOp op = ListOp::List;
  std::string iface;
  std::string override_name;       // override add: an override the config defines
  std::vector<std::string> cidrs;  // add, del; list: only entries overlapping these
  std::string expires;             // deny add, deny import: a duration or RFC 3339 time
  std::string file;                // deny import
  bool json = false;               // list
};

// `levee allow`, `levee deny` or `levee override` and their operations, all filling `la`
// (its kind and op: those of the operation parsed).
CLI::App* add_list_command(CLI::App& app, ListArgs& la, lv_list_kind kind);

Status lists(const ListArgs& a);

// --expires: a duration from now ("90s", "30m", "2h", "1d12h", "1w") or an RFC 3339
// time ("2026-12-01T00:00:00Z", "2026-12-01T02:00:00+02:00"). Returns the wall-clock
// time in ns since the epoch; a time not after now_unix_ns is a usage error.
Result<uint64_t> parse_expiry(std::string_view text, uint64_t now_unix_ns);

}  // namespace levee::cli
