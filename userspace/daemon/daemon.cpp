#include "daemon/daemon.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <type_traits>

#include "core/clock.hpp"
#include "core/lock.hpp"
#include "core/quote.hpp"
#include "core/signals.hpp"
#include "daemon/attachment.hpp"
#include "daemon/bouncer.hpp"
#include "daemon/cookie_keys.hpp"
#include "daemon/event_lines.hpp"
#include "daemon/health.hpp"
#include "daemon/known_good.hpp"
#include "daemon/log.hpp"
#include "daemon/maintenance.hpp"
#include "daemon/metrics_server.hpp"
#include "daemon/publisher.hpp"
#include "daemon/reload.hpp"
#include "daemon/syn_watch.hpp"
#include "datapath/attach.hpp"
#include "datapath/events.hpp"
#include "datapath/inspect.hpp"
#include "datapath/kernel.hpp"
#include "datapath/known_good.hpp"
#include "datapath/live.hpp"
#include "datapath/local_routes.hpp"
#include "datapath/pins.hpp"
#include "export/events.hpp"
#include "policy/config.hpp"

namespace levee {
namespace {

using Clock = std::chrono::steady_clock;
using daemon::say;

class Daemon {
 public:
  explicit Daemon(const DaemonOptions& o) : o_(o), attachment_(o, health_), event_lines_(o.iface) {}

  Status run();

 private:
  Status start();
  // Until SIGTERM/SIGINT; true if someone else detached the filter.
  bool loop();
  Status stop(bool detached_by_other);
  void hangup();
  Status open_events_file();
  void open_events();
  void open_known_good();
  // [crowdsec]: the bouncer started with the file's settings and its key file's key
  // (read by the caller, before anything changes), started again if either changed, or
  // stopped.
  void start_bouncer(const CrowdsecSpec& spec, std::string key);
  // publish = true: the publisher started, or given the new settings (its queue kept);
  // else stopped. `password` read by the caller, as the key.
  void start_publisher(const CrowdsecSpec& spec, std::string password);
  void walk();
  void age_known_good();
  void rotate_cookie_key();
  void follow_local();
  void watch_syn();
  bool write_event(const EventRecord& r);

  const DaemonOptions& o_;
  std::optional<IfaceLock> lock_;
  daemon::Health health_;
  daemon::Attachment attachment_;  // the filter's objects, held open
  std::unique_ptr<EventSource> events_;
  FILE* events_out_ = stdout;
  daemon::EventLines event_lines_;
  // The known-good filter: the walk's judge of who behaved, the marks, their ageing.
  AutoSpec autop_;
  daemon::GoodJudge judge_{AutoSpec{}.known_good_after_ns};
  daemon::NetworkMarks marks_bound_;  // the judge's marks per network
  std::optional<PolicyMap> policy_;   // mapped for good_, which refers to it, and the cookie keys
  std::optional<KnownGood> good_;
  daemon::CookieKeys cookie_keys_;
  daemon::SynWatch syn_watch_{o_.iface, health_};
  Clock::time_point next_syn_watch_;
  Clock::time_point next_age_, last_age_;
  Clock::time_point next_local_;
  std::unique_ptr<daemon::Bouncer> bouncer_;      // [crowdsec]
  std::unique_ptr<daemon::Publisher> publisher_;  // [crowdsec] publish = true
  std::optional<daemon::MetricsServer> server_;   // last: stopped before what its scrapes read
};

Status Daemon::open_events_file() {
  if (o_.events_path.empty()) return {};
  // O_NONBLOCK, kept: a FIFO with no reader is refused at once instead of holding the
  // start or SIGHUP's loop in open(2), and a reader that falls behind costs events
  // (dropped and counted, as a full disk's), never the loop's time.
  const int fd =
      ::open(o_.events_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd < 0 && errno == ENXIO)
    return Error{fmt::format("the events file {} is a FIFO that nothing reads", o_.events_path), 0,
                 "start its reader first, or give a regular file with --events"};
  FILE* f = fd < 0 ? nullptr : fdopen(fd, "a");
  if (!f) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    return sys_error(fmt::format("open the events file {}", o_.events_path), err,
                     "give a writable path with --events, or leave it out for stdout");
  }
  if (events_out_ != stdout) std::fclose(events_out_);
  events_out_ = f;
  return {};
}

bool Daemon::write_event(const EventRecord& r) {
  if (publisher_) publisher_->offer(r);
  // A line as it happens (tail -f, a log shipper), whole or dropped and counted.
  if (event_lines_.write(fileno(events_out_), event_json(r).dump() + "\n"))
    health_.wrote(r);
  else
    health_.dropped_event();
  return true;
}

Status Daemon::start() {
  const std::string& iface = o_.iface;
  LV_TRY(preflight("run"));
  // Everything that can fail without touching the kernel, first.
  LV_TRY_ASSIGN(auto p, load_config(o_.config, iface));
  const CrowdsecSpec crowdsec = p.crowdsec;
  std::string cs_key, cs_password;
  if (crowdsec.enabled) {
    LV_TRY_ASSIGN(cs_key, read_cs_key(crowdsec.api_key_file));  // a bad key file changes nothing
  }
  if (crowdsec.publish) {
    LV_TRY_ASSIGN(cs_password, read_cs_password(crowdsec.machine_password_file));  // nor a bad password file
  }
  autop_ = p.autop;
  judge_.set_after(autop_.known_good_after_ns);
  // When the filter last aged is not known here (a restart): an early ageing may come at
  // the first walk, a scheduled one a known_good_for from now.
  last_age_ = Clock::now() - std::chrono::nanoseconds(daemon::kGoodEarliestAgeingNs);
  next_age_ = Clock::now() + std::chrono::nanoseconds(autop_.known_good_for_ns);
  LV_TRY_ASSIGN(lock_, IfaceLock::daemon(iface));
  LV_TRY(open_events_file());
  if (o_.metrics) {
    server_.emplace(iface, [this] { return attachment_.snapshot(); });
    LV_TRY(server_->start(o_.metrics->first, o_.metrics->second));
  }

  health_.started();
  LV_TRY(daemon::start_filter(o_, std::move(p)));
  health_.reloaded(true);
  LV_TRY(attachment_.open());
  if (server_) server_->ready();
  open_events();
  open_known_good();
  start_bouncer(crowdsec, std::move(cs_key));
  start_publisher(crowdsec, std::move(cs_password));
  if (o_.metrics) say(iface, "metrics on {}", daemon::metrics_url(o_.metrics->first, o_.metrics->second));
  return {};
}

// SIGHUP: the events file reopened (logrotate), then the config again. The file first and
// whatever the config holds: logrotate sends SIGHUP for its own reasons, and a bad config
// found then must not leave the events going to the rotated file.
void Daemon::hangup() {
  if (auto e = open_events_file(); !e) say(o_.iface, "{}", e.error().message());
  CrowdsecSpec crowdsec;
  if (!daemon::reload_config(o_, health_, &autop_, &crowdsec)) return;
  judge_.set_after(autop_.known_good_after_ns);
  // The file's settings and key again (a rotated key is read here): a bouncer whose
  // settings or key changed starts again from what the maps hold and reconciles with
  // its first pull; an unchanged one goes on, as does an unchanged publisher.
  std::string key, password;
  if (crowdsec.enabled) {
    auto k = read_cs_key(crowdsec.api_key_file);
    if (!k) {
      say(o_.iface, "crowdsec: {}", k.error().message());  // the running bouncer keeps its key
      return;
    }
    key = std::move(*k);
  }
  if (crowdsec.publish) {
    auto pw = read_cs_password(crowdsec.machine_password_file);
    if (!pw) {
      say(o_.iface, "crowdsec: {}", pw.error().message());  // both keep what they have
      return;
    }
    password = std::move(*pw);
  }
  start_bouncer(crowdsec, std::move(key));
  start_publisher(crowdsec, std::move(password));
}

void Daemon::start_publisher(const CrowdsecSpec& spec, std::string password) {
  if (!spec.publish) {
    if (publisher_) say(o_.iface, "crowdsec: publish is off now: levee's bans are no longer shared");
    publisher_.reset();
    return;
  }
  if (publisher_) return publisher_->reconfigure(spec, std::move(password));
  publisher_ = std::make_unique<daemon::Publisher>(o_.iface, spec, std::move(password), health_);
  publisher_->start();
}

void Daemon::start_bouncer(const CrowdsecSpec& spec, std::string key) {
  if (!spec.enabled) {
    if (bouncer_) say(o_.iface, "crowdsec: no [crowdsec] any more: the bouncer stops, its decisions expire");
    bouncer_.reset();
    return;
  }
  // Unchanged (settings and key): it goes on, a pull in progress included.
  if (bouncer_ && bouncer_->pulls_as(spec, key)) return;
  bouncer_.reset();
  bouncer_ = std::make_unique<daemon::Bouncer>(o_.iface, spec, std::move(key), health_);
  bouncer_->start();
}

void Daemon::open_events() {
  events_.reset();
  if (auto ev = EventSource::open(o_.iface)) {
    events_ = std::move(ev.value());
    events_->release_autopilot();
  } else {
    say(o_.iface, "no events: {}", ev.error().message());
  }
}

void Daemon::open_known_good() {
  good_.reset();
  policy_.reset();
  auto pm = map_pinned_policy(attachment_.pins());
  if (pm) {
    policy_.emplace(std::move(pm.value()));
    auto g = KnownGood::open(attachment_.pins(), *policy_);
    if (g) {
      good_.emplace(std::move(g.value()));
      return;
    }
    say(o_.iface, "no known-good sources: {}", g.error().message());
    return;
  }
  say(o_.iface, "no known-good sources: {}", pm.error().message());
}

// The maintenance walk: prune, count, judge who behaved; and the known-good filter aged
// every known_good_for.
void Daemon::walk() {
  daemon::WalkUse use{&judge_, good_ ? &*good_ : nullptr, &marks_bound_, [this](const lv_key& k) {
                        if (events_) events_->track_escalated(k);
                      }};
  if (auto w = daemon::maintenance_walk(o_, attachment_.pins(), use)) health_.walked(*w);
  age_known_good();
}

// Every known_good_for, or early when the half packets read lets more than 1 % of unknown
// sources through (kGoodMaxFalsePositive), at most once per kGoodEarliestAgeingNs.
void Daemon::age_known_good() {
  if (!good_) return;
  const auto ns = [](Clock::time_point t) { return static_cast<uint64_t>(t.time_since_epoch().count()); };
  static_assert(std::is_same_v<Clock::duration, std::chrono::nanoseconds>);
  const auto now = Clock::now();
  const GoodFill f = good_->fill();
  const daemon::Ageing due = daemon::ageing_due(f.false_positive, ns(now), ns(last_age_), ns(next_age_));
  if (due == daemon::Ageing::None) {
    health_.known_good({f.fill, f.false_positive}, false, false);
    return;
  }
  if (auto st = good_->age(); !st) {
    say(o_.iface, "ageing the known-good sources failed: {}", st.error().message());
    return;
  }
  last_age_ = now;
  next_age_ = now + std::chrono::nanoseconds(autop_.known_good_for_ns);
  const GoodFill after = good_->fill();
  const bool early = due == daemon::Ageing::Early;
  if (early)
    say(o_.iface,
        "the known-good filter aged early: {:.2f} % false positives estimated (fill {:.1f} %), over the {:.0f} % it "
        "keeps to; marks older than the last ageing are forgotten (now {:.2f} %)",
        100 * f.false_positive, 100 * f.fill, 100 * daemon::kGoodMaxFalsePositive, 100 * after.false_positive);
  health_.known_good({after.fill, after.false_positive}, true, early);
}

// A fresh SYN cookie key once per key epoch (cookie_keys.hpp): a check per turn of the
// loop, which turns at least every 250 ms, well inside the window of ~43 s.
void Daemon::rotate_cookie_key() {
  if (!policy_) return;
  auto r = cookie_keys_.rotate(mono_now_ns(), *policy_);
  if (!r)
    say(o_.iface, "rotating the SYN cookie key failed: {}", r.error().message());
  else if (*r)
    health_.rotated_cookie_key();
}

// The host's own addresses into lv_local (SYN authentication answers only for them, or
// for hosts it forwards to): its local routes read once a second, the map made equal.
void Daemon::follow_local() {
  if (Clock::now() < next_local_) return;
  next_local_ = Clock::now() + std::chrono::seconds(1);
  auto routes = local_routes();
  if (!routes) {
    say(o_.iface, "reading the host's local routes failed: {}", routes.error().message());
    return;
  }
  auto changed = sync_local(attachment_.pins().local.get(), *routes);
  if (!changed)
    say(o_.iface, "updating the host's addresses failed: {}", changed.error().message());
  else if (*changed)
    say(o_.iface, "the host's addresses changed: {} local routes now", routes->size());
}

// SYN authentication's proxy against the host, once a second (syn_watch.hpp).
void Daemon::watch_syn() {
  if (!policy_ || Clock::now() < next_syn_watch_) return;
  next_syn_watch_ = Clock::now() + std::chrono::seconds(1);
  syn_watch_.check(attachment_.pins(), *policy_, [this](const EventRecord& r) { write_event(r); });
}

bool Daemon::loop() {
  const auto every = std::chrono::nanoseconds(o_.prune_every_ns);
  auto next_walk = Clock::now();
  const EventSource::Sink sink = [this](const EventRecord& r) { return write_event(r); };
  while (!Signals::stopped()) {
    if (Signals::take_hangup()) hangup();
    if (!attachment_.check()) return true;
    if (attachment_.take_replaced()) {  // attached again: new maps
      open_events();
      open_known_good();
      syn_watch_.reset();
      if (bouncer_) bouncer_->resync();
    }
    if (Clock::now() >= next_walk && attachment_.whole()) {
      walk();
      next_walk = Clock::now() + every;
    }
    rotate_cookie_key();
    if (attachment_.whole()) {
      follow_local();
      watch_syn();
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::clamp<Clock::duration>(next_walk - Clock::now(), Clock::duration::zero(), std::chrono::milliseconds(250)));
    if (events_) {
      auto n = events_->poll(wait + std::chrono::milliseconds(1), sink);
      if (!n) say(o_.iface, "reading events failed: {}", n.error().message());
    } else {
      Signals::sleep_until(Clock::now() + wait);
    }
  }
  return false;
}

Status Daemon::stop(bool detached_by_other) {
  const std::string& iface = o_.iface;
  bouncer_.reset();
  publisher_.reset();
  if (server_) server_->stop();
  events_.reset();
  good_.reset();
  policy_.reset();
  const bool stays = attachment_.close();
  if (events_out_ != stdout) std::fclose(events_out_);
  events_out_ = stdout;

  if (detached_by_other) {
    say(iface, "the filter was detached (levee detach): levee run ends");
    return {};
  }
  if (!stays) {
    say(iface, "stopped");
    return {};
  }
  if (o_.detach_on_exit) {
    LV_TRY(detach(iface));
    say(iface, "stopped; detached (--detach-on-exit)");
    return {};
  }
  say(iface, "stopped; the filter stays attached and keeps its state (levee detach {} removes it)", iface);
  return {};
}

Status Daemon::run() {
  // Signals first: a SIGTERM while it attaches ends it after the attach, cleanly (the
  // default action would kill it between the attach and its loop).
  Signals signals(Signals::Hangup::Catch);
  LV_TRY(start());
  return stop(loop());
}

}  // namespace

Result<std::pair<std::string, uint16_t>> parse_listen_address(const std::string& text) {
  std::string host = "127.0.0.1", port = text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find("]:");
    if (close == std::string::npos)
      return usage_error(fmt::format("--metrics {} is not an address", quote_value(text)), "give e.g. [::1]:9740");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    if (text.find(':') != colon)
      return usage_error(fmt::format("--metrics {}: put an IPv6 address in brackets", quote_value(text)),
                         "give e.g. [::1]:9740");
    if (colon > 0) host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  unsigned long v = 0;
  const bool digits = !port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos;
  if (digits) v = std::stoul(port);
  if (!digits || v < 1 || v > 65535)
    return usage_error(fmt::format("--metrics {} has no valid port", quote_value(text)),
                       "give e.g. 9740 or 127.0.0.1:9740");
  return std::pair{host, static_cast<uint16_t>(v)};
}

Status run_daemon(const DaemonOptions& o) {
  Daemon d(o);
  return d.run();
}

}  // namespace levee
