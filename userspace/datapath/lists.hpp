// lists.hpp - the allow, deny and override lists of an attached interface:
// `levee allow|deny|override add|del|list` and `levee deny import`.
//
// An edit takes the interface's lock, applies to the active lists as a whole and
// publishes them in one flip (PolicyMap::publish): it applies whole or not at all. An
// edit of host entries (/32, /128) only reads and writes those entries
// (PolicyMap::publish_delta): one `deny add` costs the same on a list of a million.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/result.hpp"
#include "levee_abi.h"
#include "policy/cidr.hpp"

namespace levee {

struct ListEdit {
  lv_list_kind kind = LV_LIST_DENY;
  std::vector<Cidr> add, del;
  std::string override_name;     // kind == LV_LIST_OVERRIDE, for add
  uint64_t expires_unix_ns = 0;  // deny add only
  lv_list_origin origin = LV_ORIGIN_CLI;
};
// What became of each network of an edit, in the edit's order (deletions first).
enum class EditOutcome : uint8_t { Added, Replaced, Deleted, Missing };
struct EditedEntry {
  Cidr cidr;
  EditOutcome outcome;
  lv_list_origin origin = LV_ORIGIN_CLI;  // of the entry deleted (a config entry comes back)
};
struct ListEditResult {
  size_t added = 0, replaced = 0, deleted = 0, missing = 0;
  std::vector<EditedEntry> entries;
};
Result<ListEditResult> edit_lists(const std::string& iface, const ListEdit& e);

class PolicyMap;
// The edit on an interface's policy once it is open and locked (what edit_lists does),
// for tests of its cost on a loaded program.
Result<ListEditResult> edit_lists(PolicyMap& pm, const ListEdit& e, const Clocks& clocks, const std::string& iface);

struct ListRow {
  Cidr cidr;
  lv_list_kind kind;
  std::string override_name;
  uint64_t expires_unix_ns = 0;  // 0: never
  lv_list_origin origin;
};
Result<std::vector<ListRow>> list_rows(const std::string& iface);

}  // namespace levee
