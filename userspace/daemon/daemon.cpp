#include "daemon/daemon.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "bpf/kernel.hpp"
#include "bpf/loader.hpp"
#include "bpf/pins.hpp"
#include "bpf/prune.hpp"
#include "core/clock.hpp"
#include "core/lock.hpp"
#include "core/signals.hpp"
#include "core/version.hpp"
#include "export/events.hpp"
#include "export/metrics.hpp"
#include "export/render_units.hpp"
#include "policy/config.hpp"

namespace levee {
namespace {

using Clock = std::chrono::steady_clock;

// The daemon's lines for the operator (stderr: the journal under systemd). Events go
// to their own stream.
template <typename... Args>
void say(const std::string& iface, fmt::format_string<Args...> f, Args&&... args) {
  fmt::print(stderr, "levee run {}: {}\n", iface, fmt::format(f, std::forward<Args>(args)...));
  std::fflush(stderr);
}

// Signals reach the main loop only: threads started in this scope (the HTTP server and
// its workers inherit the mask) never take SIGHUP, SIGINT or SIGTERM, so a signal always
// interrupts the main thread's wait.
class BlockDaemonSignals {
 public:
  BlockDaemonSignals() {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : {SIGHUP, SIGINT, SIGTERM}) sigaddset(&s, sig);
    pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~BlockDaemonSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

class Daemon {
 public:
  explicit Daemon(const DaemonOptions& o) : o_(o) {}
  ~Daemon() { stop_server(); }

  Status run();

 private:
  Status open_events_file();
  Status start_server();
  void stop_server();
  Status start_filter(Policy p);
  void reload();
  void say_reload_notes(const ReloadResult& r);
  void maintain();
  Result<MetricsSnapshot> snapshot();
  bool write_event(const EventRecord& r);

  const DaemonOptions& o_;
  std::optional<Pinned> pins_;
  std::unique_ptr<EventSource> events_;
  FILE* events_out_ = stdout;

  std::mutex mu_;  // guards health_ and walk_ (the server thread reads them)
  DaemonHealth health_;
  std::optional<WalkCounts> walk_;

  std::atomic<bool> ready_{false};  // pins_ is set: scrapes may read it
  std::unique_ptr<httplib::Server> server_;
  std::thread server_thread_;
};

Status Daemon::open_events_file() {
  if (o_.events_path.empty()) return {};
  FILE* f = std::fopen(o_.events_path.c_str(), "a");
  if (!f)
    return sys_error(fmt::format("open the events file {}", o_.events_path), errno,
                     "give a writable path with --events, or leave it out for stdout");
  if (events_out_ != stdout) std::fclose(events_out_);
  events_out_ = f;
  return {};
}

Status Daemon::start_server() {
  if (!o_.metrics) return {};
  server_ = std::make_unique<httplib::Server>();
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    if (!ready_.load(std::memory_order_acquire)) {  // bound before the filter is attached
      res.status = 503;
      res.set_content("levee run is starting\n", "text/plain; charset=utf-8");
      return;
    }
    auto s = snapshot();
    if (!s) {
      res.status = 500;
      res.set_content(s.error().message() + "\n", "text/plain; charset=utf-8");
      return;
    }
    res.set_content(render_metrics(*s), "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(fmt::format("levee run {}: metrics at /metrics\n", o_.iface), "text/plain; charset=utf-8");
  });
  const auto& [host, port] = *o_.metrics;
  if (!server_->bind_to_port(host, port))
    return Error{fmt::format("cannot serve metrics on {}:{}", host, port), 0,
                 "the port is in use or the address is not one of this host's; give another with --metrics"};
  BlockDaemonSignals blocked;
  server_thread_ = std::thread([this] { server_->listen_after_bind(); });
  return {};
}

void Daemon::stop_server() {
  if (!server_) return;
  server_->stop();
  if (server_thread_.joinable()) server_thread_.join();
  server_.reset();
}

Status Daemon::start_filter(Policy p) {
  const std::string& iface = o_.iface;
  if (pin_dir_exists(iface)) {
    // Adopt: what is pinned keeps running; only the policy is replaced, as levee reload does.
    LV_TRY_ASSIGN(auto pins, open_pinned(iface));
    LV_TRY_ASSIGN(auto st, query_status(pins, false));  // also refuses pins of another ABI version
    if (st.other_netns)
      return Error{fmt::format("{}'s pinned filter is attached in another network namespace", iface), 0,
                   "run levee run in the namespace of the interface"};
    if (!st.defunct) {
      LV_TRY_ASSIGN(auto r, levee::reload(iface, p));
      say(iface,
          "adopted the running filter (program {}, {} mode): state and counters kept; policy generation {} from {}",
          st.prog_id, st.mode, r.generation, p.source);
      say_reload_notes(r);
      if (o_.mode && *o_.mode != LV_MODE_AUTO && mode_name(*o_.mode) != st.mode)
        say(iface,
            "note: --mode {} applies when levee run attaches; the running filter stays in {} mode "
            "(levee detach {} first to change it)",
            mode_name(*o_.mode), st.mode, iface);
      return {};
    }
    // The interface was removed and has come back (a driver reload, a recreated veth):
    // the pinned link filters nothing any more, and its state was of the old device.
    say(iface, "the pinned filter belongs to a removed instance of {} (program {}): replacing it", iface, st.prog_id);
    pins = Pinned{};  // close the pins before they are removed
    LV_TRY(detach(iface));
  }
  AttachOptions a = attach_options(iface, std::move(p));
  if (o_.mode) a.mode = *o_.mode;
  LV_TRY_ASSIGN(auto r, attach(a));
  if (!r.fallback.empty()) say(iface, "{}; using generic mode", r.fallback);
  say(iface, "attached in {} mode (program {}): policy from {}, {} sources at most", r.mode, r.prog_id, a.policy.source,
      group_digits(a.max_sources));
  return {};
}

// What a reload left out or could not change, as `levee reload` prints it.
void Daemon::say_reload_notes(const ReloadResult& r) {
  for (const auto& d : r.dropped) say(o_.iface, "dropped {}", d);
  for (const auto& n : r.notes) say(o_.iface, "note: {}", n);
}

void Daemon::reload() {
  auto p = load_config(o_.config, o_.iface);
  Result<ReloadResult> r = p ? levee::reload(o_.iface, *p) : Result<ReloadResult>(p.error());
  {
    std::lock_guard g(mu_);
    if (r) health_.last_success_unix_ns = unix_now_ns();
    health_.last_reload_ok = r.ok();
    ++(r ? health_.reloads_ok : health_.reloads_failed);
  }
  if (!r) {
    say(o_.iface, "reload failed, the running policy is unchanged: {}", r.error().message());
    return;
  }
  say(o_.iface, "reloaded {}: policy generation {}, {} classes, {} list entries", o_.config, r->generation, r->classes,
      group_digits(r->list_entries));
  say_reload_notes(*r);
  if (auto e = open_events_file(); !e) say(o_.iface, "{}", e.error().message());
}

// One walk of the maps: prune idle state (which also counts what it keeps and refreshes
// the known-source filter), or with idle off only count.
void Daemon::maintain() {
  const auto t0 = Clock::now();
  WalkCounts w;
  if (o_.idle_ns) {
    auto r = prune(o_.iface, o_.idle_ns);
    if (!r) {
      say(o_.iface, "maintenance walk failed: {}", r.error().message());
      return;
    }
    w.sources = r->sources_kept;
    w.networks = r->networks_kept;
    w.ban_records = r->bans_kept;
    w.bans_active = r->bans_active;
    if (r->sources_removed || r->networks_removed || r->bans_removed)
      say(o_.iface, "pruned {} idle sources, {} networks, {} ban records", group_digits(r->sources_removed),
          group_digits(r->networks_removed), group_digits(r->bans_removed));
  } else {
    auto st = query_status(*pins_, true);
    if (!st) {
      say(o_.iface, "maintenance walk failed: {}", st.error().message());
      return;
    }
    w.sources = st->sources;
    w.networks = st->networks;
    w.ban_records = st->ban_records;
    w.bans_active = st->bans_active;
  }
  w.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  w.at_unix_ns = unix_now_ns();
  std::lock_guard g(mu_);
  walk_ = w;
}

Result<MetricsSnapshot> Daemon::snapshot() {
  MetricsSnapshot s;
  s.iface = o_.iface;
  s.version = levee_version();
  LV_TRY_ASSIGN(auto st, query_status(*pins_, false));
  LV_TRY_ASSIGN(auto c, interface_counters(*pins_));
  s.counters = c;
  s.classes = class_counters(st, c);
  s.status = std::move(st);
  std::lock_guard g(mu_);
  s.walk = walk_;
  s.daemon = health_;
  return s;
}

bool Daemon::write_event(const EventRecord& r) {
  fmt::print(events_out_, "{}\n", event_json(r).dump());
  std::fflush(events_out_);  // a line as it happens: tail -f, a log shipper
  std::lock_guard g(mu_);
  ++health_.events[event_type_name(r.type)];
  health_.events_suppressed += r.suppressed;
  return true;
}

Status Daemon::run() {
  const std::string& iface = o_.iface;
  // Signals first: a SIGTERM while it attaches ends it after the attach, cleanly (the
  // default action would kill it between the attach and its loop).
  Signals signals(Signals::Hangup::Catch);
  LV_TRY(check_privileges("run"));
  LV_TRY(check_bpffs());
  // Everything that can fail without touching the kernel, first.
  LV_TRY_ASSIGN(auto p, load_config(o_.config, iface));
  LV_TRY_ASSIGN(auto lock, IfaceLock::daemon(iface));
  LV_TRY(open_events_file());
  LV_TRY(start_server());

  {
    std::lock_guard g(mu_);
    health_.start_unix_ns = unix_now_ns();
  }
  LV_TRY(start_filter(std::move(p)));
  {
    std::lock_guard g(mu_);
    health_.reloads_ok = 1;
    health_.last_success_unix_ns = unix_now_ns();
  }
  LV_TRY_ASSIGN(auto pins, open_pinned(iface));
  pins_ = std::move(pins);
  ready_.store(true, std::memory_order_release);
  if (auto ev = EventSource::open(iface))
    events_ = std::move(ev.value());
  else
    say(iface, "no events: {}", ev.error().message());
  if (o_.metrics) say(iface, "metrics on http://{}:{}/metrics", o_.metrics->first, o_.metrics->second);

  const auto every = std::chrono::nanoseconds(o_.prune_every_ns);
  auto next_walk = Clock::now();
  bool detached_by_other = false;
  const EventSource::Sink sink = [this](const EventRecord& r) { return write_event(r); };
  while (!Signals::stopped()) {
    if (Signals::take_hangup()) reload();
    if (!pin_dir_exists(iface)) {
      detached_by_other = true;
      break;
    }
    if (Clock::now() >= next_walk) {
      maintain();
      next_walk = Clock::now() + every;
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::clamp<Clock::duration>(next_walk - Clock::now(), Clock::duration::zero(), std::chrono::milliseconds(250)));
    if (events_) {
      auto n = events_->poll(wait + std::chrono::milliseconds(1), sink);
      if (!n) say(iface, "reading events failed: {}", n.error().message());
    } else {
      Signals::sleep_until(Clock::now() + wait);
    }
  }
  stop_server();
  events_.reset();
  pins_.reset();
  if (events_out_ != stdout) std::fclose(events_out_);
  events_out_ = stdout;

  if (detached_by_other) {
    say(iface, "the filter was detached (levee detach): levee run ends");
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

}  // namespace

Result<std::pair<std::string, uint16_t>> parse_listen_address(const std::string& text) {
  std::string host = "127.0.0.1", port = text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find("]:");
    if (close == std::string::npos)
      return usage_error(fmt::format("--metrics '{}' is not an address", text), "give e.g. [::1]:9740");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    if (text.find(':') != colon)
      return usage_error(fmt::format("--metrics '{}': put an IPv6 address in brackets", text), "give e.g. [::1]:9740");
    if (colon > 0) host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  unsigned long v = 0;
  const bool digits = !port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos;
  if (digits) v = std::stoul(port);
  if (!digits || v < 1 || v > 65535)
    return usage_error(fmt::format("--metrics '{}' has no valid port", text), "give e.g. 9740 or 127.0.0.1:9740");
  return std::pair{host, static_cast<uint16_t>(v)};
}

Status run_daemon(const DaemonOptions& o) {
  Daemon d(o);
  return d.run();
}

}  // namespace levee
