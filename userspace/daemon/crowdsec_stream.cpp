// crowdsec_stream.cpp - the decision stream and Go durations (crowdsec_stream.hpp).
#include "daemon/crowdsec_stream.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/units.hpp"

namespace levee {
namespace {

// A Go duration unit: its length in the text and its ns.
std::optional<std::pair<size_t, uint64_t>> go_unit(std::string_view s) {
  struct Unit {
    std::string_view name;
    uint64_t ns;
  };
  // Longest first: "ms" before "m", "ns" before ...
  static constexpr Unit kUnits[] = {
      {"ns", 1},         {"us", 1000},         {"\xc2\xb5s", 1000},   {"\xce\xbcs", 1000},
      {"ms", 1'000'000}, {"s", 1'000'000'000}, {"m", 60'000'000'000}, {"h", 3'600'000'000'000}};
  for (const Unit& u : kUnits)
    if (s.starts_with(u.name)) return std::pair{u.name.size(), u.ns};
  return std::nullopt;
}

// One "12.5h" group of a Go duration, added to `total`; the rest of the text after it.
bool go_group(std::string_view& s, long double& total) {
  size_t i = 0;
  uint64_t whole = 0;
  long double frac = 0, scale = 1;
  bool digits = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, digits = true) {
    if (whole > kMaxDurationNs) return false;
    whole = whole * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, digits = true) scale /= 10, frac += (s[i] - '0') * scale;
  if (!digits) return false;
  const auto unit = go_unit(s.substr(i));
  if (!unit) return false;
  total += (static_cast<long double>(whole) + frac) * static_cast<long double>(unit->second);
  s.remove_prefix(i + unit->first);
  return true;
}

std::optional<std::string> str(const nlohmann::json& e, const char* key) {
  const auto it = e.find(key);
  if (it == e.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// One entry of "new" or "deleted"; nothing when it is not one levee can hold.
std::optional<CsDecision> decision(const nlohmann::json& e) {
  if (!e.is_object()) return std::nullopt;
  const auto scope = str(e, "scope"), value = str(e, "value"), duration = str(e, "duration");
  if (!scope || !value || !duration) return std::nullopt;
  CsDecision d;
  // Scopes are case-sensitive in LAPI: "ip" is stored but never streamed, so never seen.
  if (*scope == "Ip" && value->find('/') != std::string::npos) return std::nullopt;
  if (*scope != "Ip" && *scope != "Range") return std::nullopt;
  auto net = Cidr::parse(*value);
  // A /0 from the fleet would drop everything: not taken.
  if (!net || net->len == 0) return std::nullopt;
  d.net = *net;
  const auto ns = parse_go_duration(*duration);
  if (!ns) return std::nullopt;
  d.duration_ns = *ns;
  if (const auto it = e.find("id"); it != e.end() && it->is_number_unsigned()) d.id = it->get<uint64_t>();
  d.origin = str(e, "origin").value_or("");
  d.scenario = str(e, "scenario").value_or("");
  d.type = str(e, "type").value_or("");
  return d;
}

// "new" or "deleted": an array, or null (LAPI's empty list), or absent.
bool decisions(const nlohmann::json& root, const char* key, std::vector<CsDecision>& out, uint64_t& skipped) {
  const auto it = root.find(key);
  if (it == root.end() || it->is_null()) return true;
  if (!it->is_array()) return false;
  out.reserve(it->size());
  for (const auto& e : *it) {
    if (auto d = decision(e))
      out.push_back(std::move(*d));
    else
      ++skipped;
  }
  return true;
}

bool contains_any(const std::string& s, const std::vector<std::string>& parts) {
  return std::any_of(parts.begin(), parts.end(), [&](const std::string& p) { return s.find(p) != std::string::npos; });
}

}  // namespace

std::optional<int64_t> parse_go_duration(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) negative = s[0] == '-', s.remove_prefix(1);
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  long double total = 0;
  while (!s.empty())
    if (!go_group(s, total)) return std::nullopt;
  if (total > static_cast<long double>(kMaxDurationNs)) return std::nullopt;
  const auto ns = static_cast<int64_t>(total + 0.5L);
  return negative ? -ns : ns;
}

Result<CsStream> parse_cs_stream(std::string_view body) {
  const auto hint = "is the url that of a CrowdSec Local API?";
  const nlohmann::json root = nlohmann::json::parse(body, nullptr, false);
  if (root.is_discarded()) return Error{"the Local API's decision stream is not JSON", 0, hint};
  if (!root.is_object()) return Error{"the Local API's decision stream is not a JSON object", 0, hint};
  CsStream s;
  if (!decisions(root, "new", s.added, s.skipped) || !decisions(root, "deleted", s.deleted, s.skipped))
    return Error{R"(the Local API's decision stream has "new" or "deleted" that is not a list)", 0, hint};
  return s;
}

bool cs_wanted(const CrowdsecSpec& spec, const CsDecision& d) {
  if (std::find(spec.types.begin(), spec.types.end(), d.type) == spec.types.end()) return false;
  if (!spec.origins.empty() && std::find(spec.origins.begin(), spec.origins.end(), d.origin) == spec.origins.end())
    return false;
  if (!spec.scenarios_containing.empty() && !contains_any(d.scenario, spec.scenarios_containing)) return false;
  return !contains_any(d.scenario, spec.scenarios_not_containing);
}

}  // namespace levee
