// crowdsec_publish.cpp - alerts, the login reply and the queue of levee as a CrowdSec
// machine (crowdsec_publish.hpp).
#include "daemon/crowdsec_publish.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/clock.hpp"
#include "core/units.hpp"

namespace levee {
namespace {

constexpr uint64_t kNsPerMs = 1'000'000;
// A decision shorter than this would end before the fleet pulls it.
constexpr uint64_t kMinRemainingNs = 1'000'000'000;

bool ends_soon(const CsBan& b, uint64_t now_unix_ns) { return b.until_unix_ns < now_unix_ns + kMinRemainingNs; }

nlohmann::json alert_json(const CsBan& b, uint64_t now_unix_ns) {
  const char* scope = b.range ? "Range" : "Ip";
  const std::string now = format_time(now_unix_ns, TimeDigits::Millis);
  // The fields LAPI 1.4.6 requires (events, capacity, leakspeed, ...) are there even when
  // empty: a missing one is refused with a 500.
  return {{"scenario", b.scenario},
          {"scenario_hash", ""},
          {"scenario_version", ""},
          {"message", fmt::format("levee banned {} for {} ({})", b.value, format_duration(b.duration_ns), b.scenario)},
          {"events_count", 1},
          {"start_at", now},
          {"stop_at", now},
          {"capacity", 0},
          {"leakspeed", "0"},
          {"simulated", false},
          {"events", nlohmann::json::array()},
          {"source", {{"scope", scope}, {"value", b.value}}},
          {"decisions", nlohmann::json::array({{{"duration", cs_go_duration_ms(b.until_unix_ns - now_unix_ns)},
                                                {"origin", kCsMachineOrigin},
                                                {"scenario", b.scenario},
                                                {"scope", scope},
                                                {"type", "ban"},
                                                {"value", b.value}}})}};
}

}  // namespace

std::string cs_go_duration_ms(uint64_t ns) { return fmt::format("{}ms", ns / kNsPerMs); }

CsAlerts cs_alerts(const std::vector<CsBan>& bans, uint64_t now_unix_ns) {
  nlohmann::json out = nlohmann::json::array();
  for (const CsBan& b : bans)
    if (!ends_soon(b, now_unix_ns)) out.push_back(alert_json(b, now_unix_ns));
  return {out.dump(), out.size()};
}

Result<CsLogin> parse_cs_login(std::string_view body) {
  const auto hint = "is the url that of a CrowdSec Local API?";
  const nlohmann::json root = nlohmann::json::parse(body, nullptr, false);
  if (root.is_discarded() || !root.is_object())
    return Error{"the Local API's login reply is not a JSON object", 0, hint};
  const auto token = root.find("token");
  if (token == root.end() || !token->is_string() || token->get_ref<const std::string&>().empty())
    return Error{"the Local API's login reply has no token", 0, hint};
  // It goes into every request's Authorization header: a JWT's characters only, never a
  // line break that would end the header and write another.
  const auto& t = token->get_ref<const std::string&>();
  if (!std::all_of(t.begin(), t.end(), [](char c) { return c > ' ' && c < 0x7f; }))
    return Error{"the Local API's login reply has a token of other than printable characters", 0, hint};
  CsLogin l;
  l.token = token->get<std::string>();
  if (const auto e = root.find("expire"); e != root.end() && e->is_string())
    l.expire_unix_ns = parse_rfc3339(e->get_ref<const std::string&>()).value_or(0);
  return l;
}

std::string cs_login_json(const std::string& machine_id, const std::string& password) {
  return nlohmann::json{{"machine_id", machine_id}, {"password", password}, {"scenarios", nlohmann::json::array()}}
      .dump();
}

void CsBanQueue::push(CsBan b) {
  while (q_.size() >= cap_) {
    q_.pop_front();
    ++dropped_;
  }
  q_.push_back({next_seq_++, std::move(b)});
}

CsBanQueue::Batch CsBanQueue::front(size_t n) const {
  Batch out;
  for (size_t i = 0; i < n && i < q_.size(); ++i) {
    out.bans.push_back(q_[i].ban);
    out.last = q_[i].seq;
  }
  return out;
}

void CsBanQueue::pop_through(uint64_t last) {
  while (!q_.empty() && q_.front().seq <= last) q_.pop_front();
}

size_t CsBanQueue::expire(uint64_t now_unix_ns) {
  const size_t before = q_.size();
  std::erase_if(q_, [&](const Entry& e) { return ends_soon(e.ban, now_unix_ns); });
  return before - q_.size();
}

void CsBanQueue::set_cap(size_t cap) {
  cap_ = cap < 1 ? 1 : cap;
  while (q_.size() > cap_) {
    q_.pop_front();
    ++dropped_;
  }
}

}  // namespace levee
