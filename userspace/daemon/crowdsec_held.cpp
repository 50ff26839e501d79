#include "daemon/crowdsec_held.hpp"

#include <algorithm>
#include <optional>

#include "rules.h"

namespace levee {
namespace {

// The value a wanted decision with time left is held with, or nothing.
std::optional<lv_cs_value> value_of(const CrowdsecSpec& spec, const CsDecision& d, uint64_t now) {
  if (d.duration_ns <= 0 || !cs_wanted(spec, d)) return std::nullopt;
  return lv_cs_value{now + static_cast<uint64_t>(d.duration_ns), d.id};
}

}  // namespace

void CsHeldSet::adopt(std::span<const CsEntry> entries) {
  held_.clear();
  for (const CsEntry& e : entries) held_[e.net] = e.value;
  next_expiry_ = 0;
  recount();
}

void CsHeldSet::recount() {
  counts_ = CsCounts{};
  for (const auto& [net, v] : held_) ++counts_.n[cs_family_index(net)][cs_range_index(net)];
}

bool CsHeldSet::take_room(const Cidr& net) {
  uint64_t& n = counts_.n[cs_family_index(net)][cs_range_index(net)];
  if (n >= cap_) return false;
  ++n;
  return true;
}

CsPlan CsHeldSet::plan(const CrowdsecSpec& spec, const CsStream& s, bool startup_pull, uint64_t now_mono_ns) {
  CsPlan plan;
  if (startup_pull)
    startup(spec, s, now_mono_ns, plan);
  else
    incremental(spec, s, now_mono_ns, plan);
  return plan;
}

void CsHeldSet::startup(const CrowdsecSpec& spec, const CsStream& s, uint64_t now, CsPlan& plan) {
  // Its "deleted" list is every expired or deleted decision still in the database:
  // nothing to act on, whatever is held and not in "new" goes below.
  std::map<Cidr, lv_cs_value, CidrLess> want;
  for (const CsDecision& d : s.added) {
    const auto v = value_of(spec, d, now);
    if (!v) continue;
    auto [it, fresh] = want.try_emplace(d.net, *v);
    if (!fresh && it->second.expires_ns < v->expires_ns) it->second = *v;
  }
  for (const auto& [net, v] : held_)
    if (!want.contains(net)) plan.remove.push_back(net);
  // Room first for what the maps hold already, then for new networks while there is.
  counts_ = CsCounts{};
  for (const auto& [net, v] : want)
    if (held_.contains(net)) take_room(net);
  for (auto it = want.begin(); it != want.end();) {
    const auto& [net, v] = *it;
    const auto had = held_.find(net);
    if (had == held_.end() && !take_room(net)) {
      ++plan.over;
      it = want.erase(it);
      continue;
    }
    // The same decision held already: its expiry stays (a pull's duration is what is
    // left of it, the same instant give or take the pull's latency).
    if (had != held_.end() && had->second.id == v.id)
      it->second = had->second;
    else
      plan.put.push_back(CsEntry{net, v});
    ++it;
  }
  held_ = std::move(want);
  next_expiry_ = 0;
}

void CsHeldSet::incremental(const CrowdsecSpec& spec, const CsStream& s, uint64_t now, CsPlan& plan) {
  // Each network's last change in the reply: a network deleted and added again in one
  // reply is written, not removed.
  std::map<Cidr, std::optional<lv_cs_value>, CidrLess> change;
  for (const CsDecision& d : s.deleted) {
    const auto it = held_.find(d.net);
    if (it == held_.end() || it->second.id != d.id) continue;  // not held, or another decision of it
    change[d.net] = std::nullopt;
    held_.erase(it);
    --counts_.n[cs_family_index(d.net)][cs_range_index(d.net)];
  }
  for (const CsDecision& d : s.added) {
    const auto v = value_of(spec, d, now);
    if (!v) continue;
    if (!held_.contains(d.net) && !take_room(d.net)) {
      ++plan.over;
      continue;
    }
    auto [it, fresh] = held_.try_emplace(d.net, *v);
    if (!fresh) {
      if (it->second.id == v->id) continue;
      it->second = *v;
    }
    change[d.net] = *v;
    if (next_expiry_ && v->expires_ns < next_expiry_) next_expiry_ = v->expires_ns;
  }
  for (const auto& [net, v] : change) {
    if (v)
      plan.put.push_back(CsEntry{net, *v});
    else
      plan.remove.push_back(net);
  }
}

std::vector<Cidr> CsHeldSet::expire(uint64_t now_mono_ns) {
  std::vector<Cidr> gone;
  if (next_expiry_ && now_mono_ns < next_expiry_) return gone;
  uint64_t next = 0;
  for (auto it = held_.begin(); it != held_.end();) {
    if (!lv_cs_in_force(&it->second, now_mono_ns)) {
      gone.push_back(it->first);
      --counts_.n[cs_family_index(it->first)][cs_range_index(it->first)];
      it = held_.erase(it);
      continue;
    }
    if (!next || it->second.expires_ns < next) next = it->second.expires_ns;
    ++it;
  }
  next_expiry_ = next;
  return gone;
}

}  // namespace levee
