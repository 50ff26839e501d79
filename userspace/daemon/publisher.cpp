#include "daemon/publisher.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/clock.hpp"
#include "core/lock.hpp"
#include "core/units.hpp"
#include "daemon/block_signals.hpp"
#include "daemon/log.hpp"
#include "daemon/state_file.hpp"

namespace levee::daemon {
namespace {

using namespace std::chrono_literals;

constexpr auto kBackoffFirst = 1s;
// Shorter than the bouncer's 30 s: a ban shared late protects the fleet for less of it.
constexpr auto kBackoffMax = 10s;
// Alerts per request: a flood's bans go out in a few requests, each well under LAPI's
// body limits, and one refused batch holds back no more than this.
constexpr size_t kBatch = 100;
// Queued bans are checked for their end this often while they wait.
constexpr auto kIdleCheck = 1s;

// For `levee status` (state_file.hpp).
void write_state(const std::string& iface, const std::string& machine, const PublisherHealth& p) {
  write_state_file(publish_state_path(iface), nlohmann::json{{"pid", getpid()},
                                                             {"machine", machine},
                                                             {"up", p.up},
                                                             {"published", p.published},
                                                             {"errors", p.errors},
                                                             {"queued", p.queued},
                                                             {"dropped", p.dropped_full + p.dropped_expired}}
                                                  .dump());
}

bool same(const PublisherHealth& a, const PublisherHealth& b) {
  return a.up == b.up && a.published == b.published && a.errors == b.errors && a.queued == b.queued &&
         a.dropped_full == b.dropped_full && a.dropped_expired == b.dropped_expired;
}

}  // namespace

std::optional<CsBan> ban_to_share(const EventRecord& r, uint64_t min_ban_ns) {
  // A monitor class only counts what it would ban: nothing the fleet should drop.
  if (r.type != LV_EV_BANNED || r.monitor || r.address.empty() || r.class_name.empty()) return std::nullopt;
  if (r.value < min_ban_ns) return std::nullopt;
  CsBan b;
  b.value = r.address;
  b.range = r.address.find('/') != std::string::npos;  // its class keys a network (prefix < /32, /128)
  b.scenario = std::string(kCsScenarioPrefix) + r.class_name;
  b.until_unix_ns = r.time_unix_ns + r.value;
  b.duration_ns = r.value;
  return b;
}

Publisher::Publisher(std::string iface, const CrowdsecSpec& spec, std::string password, Health& health)
    : iface_(std::move(iface)),
      health_(health),
      spec_(spec),
      password_(std::move(password)),
      queue_(spec.publish_queue),
      client_(std::make_unique<MachineClient>(spec, password_)) {}

Publisher::~Publisher() {
  stop();
  health_.publisher(std::nullopt);
  std::remove(publish_state_path(iface_).c_str());
}

void Publisher::start() {
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
    publish_health();
  }
  BlockDaemonSignals blocked;
  thread_ = std::thread([this] { run(); });
}

void Publisher::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  client_->cancel();
  if (thread_.joinable()) thread_.join();
}

void Publisher::reconfigure(const CrowdsecSpec& spec, std::string password) {
  {
    std::lock_guard lock(mu_);
    if (same_publish(spec_, spec) && password == password_) return;
  }
  stop();
  {
    std::lock_guard lock(mu_);
    spec_ = spec;
    password_ = std::move(password);
    queue_.set_cap(spec.publish_queue);
    client_ = std::make_unique<MachineClient>(spec, password_);
    stats_.up = false;  // a login at once says whether the new settings work
    said_.recovered();
  }
  start();
}

void Publisher::offer(const EventRecord& r) {
  {
    std::lock_guard lock(mu_);
    auto b = ban_to_share(r, spec_.publish_min_ban_ns);
    if (!b) return;
    queue_.push(std::move(*b));
    woken_ = true;
    publish_health();
  }
  cv_.notify_all();
}

bool Publisher::wait(std::chrono::nanoseconds d, bool on_offer) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, d, [&] { return stopping_ || (on_offer && woken_); });
  woken_ = false;
  return !stopping_;
}

void Publisher::run() {
  {
    std::lock_guard lock(mu_);
    say(iface_, "crowdsec: publishing bans of {} or more to http://{}:{} as machine {} (a queue of {})",
        format_duration(spec_.publish_min_ban_ns), spec_.host, spec_.port, spec_.machine_id, spec_.publish_queue);
  }
  std::chrono::nanoseconds backoff = kBackoffFirst;
  while (true) {
    bool more = false;
    if (turn()) {
      backoff = kBackoffFirst;
      std::lock_guard lock(mu_);
      more = !queue_.empty();
    } else {
      // A new ban does not cut the backoff short: a flood's bans would hammer a Local API
      // that is down. It waits in the queue for the next turn.
      if (!wait(backoff, false)) return;
      backoff = std::min<std::chrono::nanoseconds>(backoff * 2, kBackoffMax);
      continue;
    }
    if (!more && !wait(kIdleCheck, true)) return;
    std::lock_guard lock(mu_);
    if (stopping_) return;
  }
}

bool Publisher::turn() {
  CsBanQueue::Batch batch;
  CsAlerts alerts;
  {
    std::lock_guard lock(mu_);
    stats_.dropped_expired += queue_.expire(unix_now_ns());
    batch = queue_.front(kBatch);
    // Nothing to send and logged in: nothing to do.
    if (batch.bans.empty() && stats_.up) return publish_health(), true;
    alerts = cs_alerts(batch.bans, unix_now_ns());
  }
  // The request without the lock: offer() never waits for the Local API.
  const Status st = alerts.alerts ? client_->post_alerts(alerts.body) : client_->authorize();
  std::lock_guard lock(mu_);
  stats_.logins = client_->logins();
  if (!st && stopping_) return false;  // a request cut short by stop(): no news
  if (!st) {
    ++stats_.errors;
    stats_.up = false;
    if (const auto line = said_.error(st.error().message(), mono_now_ns()))
      say(iface_, "crowdsec: publishing: {} ({} ban{} queued; retrying)", *line, queue_.size(),
          queue_.size() == 1 ? "" : "s");
    publish_health();
    return false;
  }
  if (!batch.bans.empty()) queue_.pop_through(batch.last);
  stats_.published += alerts.alerts;
  stats_.dropped_expired += batch.bans.size() - alerts.alerts;  // ended on the way
  stats_.up = true;
  if (alerts.alerts) stats_.last_publish_unix_ns = unix_now_ns();
  if (said_.recovered()) say(iface_, "crowdsec: the Local API takes levee's bans again");
  publish_health();
  return true;
}

void Publisher::publish_health() {
  stats_.queued = queue_.size();
  stats_.dropped_full = queue_.dropped();
  health_.publisher(stats_);
  if (!written_ || !same(*written_, stats_)) {
    write_state(iface_, spec_.machine_id, stats_);
    written_ = stats_;
  }
}

}  // namespace levee::daemon
