#include "daemon/health.hpp"

#include "core/clock.hpp"

namespace levee::daemon {

void Health::started() {
  std::lock_guard g(mu_);
  health_.start_unix_ns = unix_now_ns();
}

void Health::reloaded(bool ok) {
  std::lock_guard g(mu_);
  if (ok) health_.last_success_unix_ns = unix_now_ns();
  health_.last_reload_ok = ok;
  ++(ok ? health_.reloads_ok : health_.reloads_failed);
}

void Health::wrote(const EventRecord& r) {
  std::lock_guard g(mu_);
  ++health_.events[event_type_name(r.type)];
  health_.events_suppressed += r.suppressed;
}

void Health::dropped_event() {
  std::lock_guard g(mu_);
  ++health_.events_dropped;
}

void Health::rotated_cookie_key() {
  std::lock_guard g(mu_);
  ++health_.cookie_key_rotations;
}

void Health::attached(bool yes) {
  std::lock_guard g(mu_);
  health_.attached = yes;
}

void Health::pinned(bool yes) {
  std::lock_guard g(mu_);
  health_.pinned = yes;
}

void Health::reattached() {
  std::lock_guard g(mu_);
  health_.attached = true;
  ++health_.reattaches;
}

void Health::repinned() {
  std::lock_guard g(mu_);
  health_.pinned = true;
  ++health_.repins;
}

void Health::walked(const WalkCounts& w) {
  std::lock_guard g(mu_);
  walk_ = w;
  health_.known_good_marked += w.marked;
  health_.known_good_capped += w.capped;
}

void Health::known_good(const GoodFilterHealth& now, bool aged, bool early) {
  std::lock_guard g(mu_);
  GoodFilterHealth& h = health_.good ? *health_.good : health_.good.emplace();
  h.fill = now.fill;
  h.false_positive = now.false_positive;
  h.ageings += aged;
  h.early_ageings += aged && early;
}

void Health::restored_tc_filter() {
  std::lock_guard g(mu_);
  ++health_.tc_restores;
}

void Health::bouncer(const BouncerHealth& b) {
  std::lock_guard g(mu_);
  bouncer_ = b;
}

void Health::publisher(const std::optional<PublisherHealth>& p) {
  std::lock_guard g(mu_);
  publisher_ = p;
}

void Health::read(MetricsSnapshot& s) const {
  std::lock_guard g(mu_);
  s.walk = walk_;
  s.daemon = health_;
  s.bouncer = bouncer_;
  s.publisher = publisher_;
}

}  // namespace levee::daemon
