#include "export/render_lists.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/clock.hpp"
#include "export/render_units.hpp"
#include "policy/policy.hpp"

namespace levee {

nlohmann::json list_row_json(const ListRow& r, uint64_t now) {
  using nlohmann::json;
  json j = {{"cidr", r.cidr.to_string()},
            {"family", r.cidr.family},
            {"kind", list_kind_name(r.kind)},
            {"override", r.kind == LV_LIST_OVERRIDE ? json(r.override_name) : json(nullptr)},
            {"expires", nullptr},
            {"expires_unix", nullptr},
            {"expires_in", nullptr},
            {"expired", false},
            {"origin", list_origin_name(r.origin)}};
  if (r.expires_unix_ns) {
    j["expires"] = format_time(r.expires_unix_ns);
    j["expires_unix"] = r.expires_unix_ns / LV_NSEC_PER_SEC;
    j["expires_in"] = r.expires_unix_ns > now ? (r.expires_unix_ns - now + LV_NSEC_PER_SEC - 1) / LV_NSEC_PER_SEC : 0;
    j["expired"] = r.expires_unix_ns <= now;
  }
  return j;
}

nlohmann::json list_json(const std::string& iface, lv_list_kind kind, const std::vector<ListRow>& rows, uint64_t now) {
  nlohmann::json entries = nlohmann::json::array();
  for (const ListRow& r : rows) entries.push_back(list_row_json(r, now));
  return {{"interface", iface}, {"kind", list_kind_name(kind)}, {"entries", entries}};
}

std::string list_text(const std::string& iface, lv_list_kind kind, const std::vector<ListRow>& rows, uint64_t now) {
  if (rows.empty()) return fmt::format("{}: no {} entries\n", iface, list_kind_name(kind));
  auto expires = [&](const ListRow& r) {
    return r.expires_unix_ns
               ? fmt::format("{} ({})", format_time(r.expires_unix_ns), format_expiry(r.expires_unix_ns, now))
               : std::string("never");
  };
  size_t wc = 4, wo = 8, we = 7;
  for (const ListRow& r : rows) {
    wc = std::max(wc, r.cidr.to_string().size());
    wo = std::max(wo, r.override_name.size());
    we = std::max(we, expires(r).size());
  }
  const bool ov = kind == LV_LIST_OVERRIDE;
  auto row = [&](const std::string& cidr, const std::string& name, const std::string& exp, const std::string& origin) {
    std::string line = fmt::format("  {:<{}}  ", cidr, wc);
    if (ov) line += fmt::format("{:<{}}  ", name, wo);
    return line + fmt::format("{:<{}}  {}\n", exp, we, origin);
  };
  std::string out = fmt::format("{}: {} {} entr{}\n", iface, group_digits(rows.size()), list_kind_name(kind),
                                rows.size() == 1 ? "y" : "ies");
  out += row("CIDR", "OVERRIDE", "EXPIRES", "ORIGIN");
  for (const ListRow& r : rows) out += row(r.cidr.to_string(), r.override_name, expires(r), list_origin_name(r.origin));
  return out;
}

}  // namespace levee
