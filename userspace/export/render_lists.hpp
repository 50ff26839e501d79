// render_lists.hpp - `levee allow|deny|override list`: one kind's entries as text or
// JSON, and one entry's JSON (also `levee show`'s "list").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "datapath/lists.hpp"

namespace levee {

// The rows of one kind, as given (callers sort).
// JSON: {"interface", "kind", "entries": [{"cidr", "family", "override", "expires",
//        "expires_unix", "expires_in", "origin"}]} (see README).
std::string list_text(const std::string& iface, lv_list_kind kind, const std::vector<ListRow>& rows,
                      uint64_t now_unix_ns);
nlohmann::json list_json(const std::string& iface, lv_list_kind kind, const std::vector<ListRow>& rows,
                         uint64_t now_unix_ns);
nlohmann::json list_row_json(const ListRow& r, uint64_t now_unix_ns);

}  // namespace levee
