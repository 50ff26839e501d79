#include "datapath/events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "datapath/kernel.hpp"
#include "policy/class_ids.hpp"
#include "policy/policy.hpp"

namespace levee {

namespace {

constexpr auto kBanPollEvery = std::chrono::seconds(1);

// The class an id names in the policy now, or nullptr.
const lv_class* class_of_id(const lv_policy& p, unsigned id) {
  if (id >= LV_MAX_CLASSES) return nullptr;
  for (uint8_t i : class_order(p))
    if (i == id) return &p.classes[id];
  return nullptr;
}

// The key's address with the prefix its class keys it by (a host when unknown).
std::string address_of(const uint32_t (&addr)[4], uint8_t family, const lv_class* c) {
  const bool v4 = lv_key_family(family) == LV_AF_INET;
  unsigned prefix = v4 ? 32 : 128;
  if (c) prefix = v4 ? c->prefix4 : c->prefix6;
  return key_address(addr, family, prefix);
}

}  // namespace

EventRecord decode_event(const lv_event& e, const lv_policy& p, const Clocks& clocks, const std::string& iface) {
  EventRecord r;
  r.type = e.type;
  r.time_unix_ns = clocks.to_unix(e.time_ns);
  r.iface = iface;
  r.family = lv_key_family(e.family) == LV_AF_INET ? 4 : 6;
  r.class_id = e.class_id;
  const lv_class* c = class_of_id(p, e.class_id);
  if (c) r.class_name = name_of(c->name);
  r.address = address_of(e.addr, e.family, c);
  switch (e.type) {
    case LV_EV_ENGAGED:
    case LV_EV_RELEASED:
      r.address.clear();  // the class as a whole
      r.syn_auto = c && (c->flags & LV_CLASS_SYN_AUTO);
      break;
    case LV_EV_ESCALATED:
    case LV_EV_DEESCALATED:
      if (c) r.address = key_address(e.addr, e.family, r.family == 4 ? c->autop.watch_prefix4 : c->autop.watch_prefix6);
      break;
    case LV_EV_ANSWER_LIMITED:
      r.address = key_address(e.addr, e.family, r.family == 4 ? p.answer.prefix4 : p.answer.prefix6);
      break;
    default:
      break;
  }
  if ((e.type == LV_EV_ENGAGED || e.type == LV_EV_ESCALATED || e.type == LV_EV_ANSWER_LIMITED ||
       e.type == LV_EV_BANNED) &&
      c)
    r.monitor = c->flags & LV_CLASS_MONITOR;
  r.reason = e.reason;
  r.count = e.count;
  r.value = e.value;
  r.suppressed = e.suppressed;
  if (e.type == LV_EV_BANNED && c) r.every_class = c->flags & LV_CLASS_BAN_ALL;
  return r;
}

EventRecord decode_ban_end(const BanEnds::Ended& e, const lv_policy& p, const Clocks& clocks,
                           const std::string& iface) {
  EventRecord r;
  r.type = LV_EV_BAN_ENDED;
  r.time_unix_ns = clocks.to_unix(e.at_ns);
  r.iface = iface;
  r.family = lv_key_family(e.key.family) == LV_AF_INET ? 4 : 6;
  r.class_id = e.ban.class_id;  // the class that imposed it (the key of an every-class ban names none)
  const lv_class* c = class_of_id(p, e.ban.class_id);
  if (c) r.class_name = name_of(c->name);
  r.address = address_of(e.key.addr, e.key.family, c);
  r.count = e.ban.offences;
  r.value = e.ban.duration_ns;
  r.every_class = e.key.class_id == LV_ALL_CLASSES;
  r.lifted = e.lifted;
  return r;
}

EventRecord decode_release(const Released& e, const lv_policy& p, const Clocks& clocks, const std::string& iface) {
  EventRecord r;
  r.type = e.type;
  r.time_unix_ns = clocks.to_unix(clocks.now_mono_ns);
  r.iface = iface;
  r.class_id = e.class_id;
  const lv_class* c = class_of_id(p, e.class_id);
  if (c) r.class_name = name_of(c->name);
  if (e.type == LV_EV_DEESCALATED) {
    r.family = lv_key_family(e.key.family) == LV_AF_INET ? 4 : 6;
    r.address = key_address(e.key.addr, e.key.family,
                            c ? (r.family == 4 ? c->autop.watch_prefix4 : c->autop.watch_prefix6) : 0);
  }
  r.reason = e.type == LV_EV_RELEASED ? LV_R_ADMISSION : LV_R_ESCALATED;
  r.value = clocks.now_mono_ns - e.since_ns;
  return r;
}

bool BanEnds::Less::operator()(const lv_key& a, const lv_key& b) const { return std::memcmp(&a, &b, sizeof a) < 0; }

std::vector<BanEnds::Ended> BanEnds::update(const std::vector<std::pair<lv_key, lv_ban>>& records, uint64_t now) {
  auto banning = [&](const lv_ban& b) { return static_cast<int64_t>(b.until_ns - now) > 0; };
  std::vector<Ended> out;
  std::map<lv_key, lv_ban, Less> next;
  for (const auto& [k, b] : records) {
    auto it = active_.find(k);
    if (it != active_.end() && it->second.since_ns != b.since_ns) {
      // Another ban began on this record: the one we knew had ended before it.
      out.push_back({k, it->second, it->second.until_ns, false});
    } else if (it != active_.end() && !banning(b)) {
      out.push_back({k, b, b.until_ns, false});
      continue;
    }
    if (banning(b)) next.emplace(k, b);
  }
  // Known bans whose record is gone: over and evicted or pruned, or lifted early.
  std::map<lv_key, lv_ban, Less> present;
  for (const auto& [k, b] : records) present.emplace(k, b);
  for (const auto& [k, b] : active_) {
    if (present.contains(k)) continue;
    const bool over = static_cast<int64_t>(b.until_ns - now) <= 0;
    out.push_back({k, b, over ? b.until_ns : now, !over});
  }
  std::sort(out.begin(), out.end(), [](const Ended& a, const Ended& b) { return a.at_ns < b.at_ns; });
  active_ = std::move(next);
  return out;
}

Result<std::unique_ptr<EventSource>> EventSource::open(const std::string& iface, ClockSource clocks) {
  LV_TRY(preflight("read the events of"));
  LV_TRY_ASSIGN(auto pins, open_pinned(iface));
  return open(std::move(pins), std::move(clocks));
}

Result<std::unique_ptr<EventSource>> EventSource::open(Pinned pins, ClockSource clocks) {
  const std::string iface = pins.iface;
  if (!pins.events.valid())
    return Error{fmt::format("{} was attached by a levee without the event ring ({}/{} is missing)", iface,
                             pin_dir(iface), LV_MAP_EVENTS),
                 0, fmt::format("detach and attach again: levee detach {}", iface)};
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(pins));
  std::unique_ptr<EventSource> s(new EventSource());
  s->iface_ = iface;
  s->pins_ = std::move(pins);
  s->policy_.emplace(std::move(pm));
  LV_TRY_ASSIGN(auto shared, SharedMap::map(s->pins_.shared.get()));
  s->shared_.emplace(std::move(shared));
  s->ring_ = ring_buffer__new(s->pins_.events.get(), &EventSource::on_sample, s.get(), nullptr);
  if (!s->ring_) return sys_error(fmt::format("open the event ring of {}", iface));
  s->clock_source_ = std::move(clocks);
  s->clocks_ = s->clock_source_();
  // Learn which bans are active now: their ends are reported, not their past.
  LV_TRY(s->poll_bans(s->clocks_.now_mono_ns, [](const EventRecord&) { return true; }));
  s->next_ban_poll_ = std::chrono::steady_clock::now() + kBanPollEvery;
  return s;
}

EventSource::~EventSource() {
  if (ring_) ring_buffer__free(ring_);
}

int EventSource::on_sample(void* ctx, void* data, size_t size) {
  auto* self = static_cast<EventSource*>(ctx);
  lv_event e{};
  std::memcpy(&e, data, std::min(size, sizeof e));
  ++self->handed_;
  if (e.type == LV_EV_ESCALATED && self->releasing_) {
    const lv_policy& p = self->policy_->active();
    lv_key k{};
    std::memcpy(k.addr, e.addr, sizeof k.addr);
    k.class_id = e.class_id;
    k.family = static_cast<uint8_t>(lv_key_family(e.family) | LV_KEY_WATCH);
    k.epoch = e.class_id < LV_MAX_CLASSES ? p.classes[e.class_id].epoch : 0;
    self->releases_.track(k);
  }
  if (self->sink_ && !(*self->sink_)(decode_event(e, self->policy_->active(), self->clocks_, self->iface_))) {
    // Stop here: this sample is consumed, the ones after it stay in the ring.
    self->stop_ = true;
    return -ECANCELED;
  }
  return 0;
}

Status EventSource::poll_bans(uint64_t now, const Sink& fn) {
  std::vector<std::pair<lv_key, lv_ban>> records;
  LV_TRY(for_each_ban(pins_.bans.get(), [&](const lv_key& k, const lv_ban& b) { records.emplace_back(k, b); }));
  // Ban ends are events too, and a flood of banned sources must not become a flood of
  // ban ends: they spend the interface's event rate ([interface] events_per_second)
  // from the one budget the datapath's events take from (lv_shared), and carry what
  // they suppressed like the datapath's do (send_own).
  for (const BanEnds::Ended& e : bans_.update(records, now)) {
    if (stop_) break;  // the rest are lost: a caller that stops wants no more
    send_own(decode_ban_end(e, policy_->active(), clocks_, iface_), now, fn);
  }
  return {};
}

bool EventSource::send_own(EventRecord r, uint64_t now, const Sink& fn) {
  if (!shared_->take_event(policy_->active().events, now)) {
    ++own_suppressed_;
    return false;
  }
  r.suppressed = static_cast<uint32_t>(std::min<uint64_t>(own_suppressed_, UINT32_MAX));
  own_suppressed_ = 0;
  ++handed_;
  stop_ = !fn(r);
  return true;
}

Status EventSource::poll_releases(uint64_t now, const Sink& fn) {
  LV_TRY_ASSIGN(auto released, releases_.poll(pins_, *shared_, policy_->active(), now));
  for (const Released& e : released) {
    if (stop_) break;
    send_own(decode_release(e, policy_->active(), clocks_, iface_), now, fn);
  }
  return {};
}

Result<size_t> EventSource::poll(std::chrono::milliseconds timeout, const Sink& fn) {
  using clock = std::chrono::steady_clock;
  const auto until = clock::now() + timeout;
  handed_ = 0;
  stop_ = false;
  sink_ = &fn;
  clocks_ = clock_source_();
  // The sink lives only for this call.
  class Unset {
   public:
    explicit Unset(const Sink*& s) : s_(s) {}
    Unset(const Unset&) = delete;
    Unset& operator=(const Unset&) = delete;
    ~Unset() { s_ = nullptr; }

   private:
    const Sink*& s_;
  } unset{sink_};
  while (!stop_) {
    const auto wake = std::min(until, next_ban_poll_);
    const int ms = static_cast<int>(
        std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(wake - clock::now()).count()));
    const int n = ring_buffer__poll(ring_, ms);
    if (stop_) break;
    if (n == -EINTR) break;  // a signal: the caller decides
    if (n < 0) return sys_error(fmt::format("read the event ring of {}", iface_), -n);
    if (clock::now() >= next_ban_poll_) {
      clocks_ = clock_source_();
      LV_TRY(poll_bans(clocks_.now_mono_ns, fn));
      if (releasing_) LV_TRY(poll_releases(clocks_.now_mono_ns, fn));
      next_ban_poll_ = clock::now() + kBanPollEvery;
    }
    if (clock::now() >= until) break;
  }
  return handed_;
}

}  // namespace levee
