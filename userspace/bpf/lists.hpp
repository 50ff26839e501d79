// lists.hpp - the allow, deny and override lists of an attached interface:
// `levee allow|deny|override add|del|list` and `levee deny import`.
//
// An edit takes the interface's lock, applies to the active lists as a whole and
// publishes them in one flip (PolicyMap::publish): it applies whole or not at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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
struct ListEditResult {
  size_t added = 0, replaced = 0, deleted = 0, missing = 0;
};
Result<ListEditResult> edit_lists(const std::string& iface, const ListEdit& e);

struct ListRow {
  Cidr cidr;
  lv_list_kind kind;
  std::string override_name;
  uint64_t expires_unix_ns = 0;  // 0: never
  lv_list_origin origin;
};
Result<std::vector<ListRow>> list_rows(const std::string& iface);

}  // namespace levee
