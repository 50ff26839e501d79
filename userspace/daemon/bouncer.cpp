#include "daemon/bouncer.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/clock.hpp"
#include "core/lock.hpp"
#include "core/units.hpp"
#include "daemon/block_signals.hpp"
#include "daemon/log.hpp"
#include "daemon/state_file.hpp"
#include "export/render_units.hpp"

namespace levee::daemon {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr auto kBackoffFirst = 1s;
constexpr auto kBackoffMax = 30s;
// A startup pull now and then, errors or not: the Local API's incremental stream can
// miss a decision committed just after a pull that its creation time precedes (seen with
// `cscli decisions import` while pulling), and only a full pull brings it.
constexpr auto kFullPullEvery = 5min;

double seconds_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

// The lv_cs_present bits of the maps that hold entries.
uint32_t present_bits(const CsCounts& c) {
  uint32_t bits = 0;
  for (unsigned f = 0; f < 2; ++f)
    for (unsigned r = 0; r < 2; ++r)
      if (c.n[f][r]) bits |= cs_present_bit(static_cast<CsMap>(r ? kCsNet4 + f : kCsHost4 + f));
  return bits;
}

}  // namespace

Bouncer::Bouncer(std::string iface, const CrowdsecSpec& spec, std::string key, Health& health)
    : iface_(std::move(iface)), spec_(spec), key_(std::move(key)), health_(health), client_(spec, key_) {}

Bouncer::~Bouncer() {
  stop();
  if (!state_.empty()) std::remove(bouncer_state_path(iface_).c_str());
}

void Bouncer::start() {
  BlockDaemonSignals blocked;
  thread_ = std::thread([this] { run(); });
}

void Bouncer::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  client_.cancel();
  if (thread_.joinable()) thread_.join();
}

void Bouncer::resync() {
  {
    std::lock_guard lock(mu_);
    resync_ = true;
  }
  cv_.notify_all();
}

bool Bouncer::wait(std::chrono::nanoseconds d) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, d, [this] { return stopping_ || resync_; });
  if (resync_) {
    resync_ = false;
    maps_.reset();
  }
  return !stopping_;
}

void Bouncer::run() {
  say(iface_, "crowdsec: pulling decisions from http://{}:{} every {}", spec_.host, spec_.port,
      format_duration(spec_.poll_ns));
  std::chrono::nanoseconds backoff = kBackoffFirst;
  while (true) {
    expire();
    if (turn()) {
      backoff = kBackoffFirst;
      if (!wait(std::chrono::nanoseconds(spec_.poll_ns))) return;
      continue;
    }
    if (!wait(backoff)) return;
    backoff = std::min<std::chrono::nanoseconds>(backoff * 2, kBackoffMax);
  }
}

bool Bouncer::turn() {
  if (!maps_) {
    auto m = CrowdsecMaps::open(iface_);
    if (!m) return error(m.error()), false;
    auto held = m->read();
    if (!held) return error(held.error()), false;
    held_.adopt(*held);
    maps_.emplace(std::move(m.value()));
    present_ = present_bits(held_.counts());  // what the adopted maps hold keeps its bits until removed
    startup_ = true;
  }
  const auto t0 = SteadyClock::now();
  if (t0 >= next_full_) startup_ = true;
  const bool startup = startup_;
  auto body = client_.pull(startup);
  stats_.last_pull_seconds = client_.last_seconds();
  if (!body) {
    stats_.pull_timeouts += client_.last_timed_out();
    return error(body.error()), false;
  }
  const double pull_s = seconds_since(t0);
  // From the reply to the last entry written: the parse, the plan, the writes.
  const auto t1 = SteadyClock::now();
  auto stream = parse_cs_stream(*body);
  body->clear();
  body->shrink_to_fit();
  if (!stream) return error(stream.error()), false;
  const CsPlan plan = held_.plan(spec_, *stream, startup, Clocks::read().now_mono_ns);
  if (Status st = plan.empty() ? Status{} : apply(plan); !st) {
    maps_.reset();  // start over from what the maps hold
    return error(st.error()), false;
  }
  stats_.last_apply_seconds = seconds_since(t1);
  stats_.skipped += stream->skipped + plan.over;
  if (plan.over && said_full_.error("full", Clocks::read().now_mono_ns))
    say(iface_,
        "crowdsec: the Local API holds more decisions than levee's maps ({} of each kind: addresses and ranges, "
        "IPv4 and IPv6): {} of this pull are not enforced (counted in levee_crowdsec_decisions_skipped_total)",
        group_digits(LV_MAX_CS_ENTRIES), group_digits(plan.over));
  stats_.last_pull_unix_ns = Clocks::read().now_unix_ns;
  ++stats_.pulls;
  startup_ = false;
  if (startup) next_full_ = SteadyClock::now() + kFullPullEvery;
  if (const bool recovered = said_.recovered(); startup || recovered)
    say(iface_,
        "crowdsec: {} pull: {} decisions held ({} written, {} removed, {} skipped); pulled in {:.3f} s, "
        "applied in {:.3f} s",
        startup ? "startup" : "first good", held_.size(), plan.put.size(), plan.remove.size(), stream->skipped, pull_s,
        stats_.last_apply_seconds);
  publish(true);
  // A startup pull of 100k decisions parses into ~100 MB of JSON values, freed by now:
  // give the heap back rather than keep it resident until the next one.
  if (startup) malloc_trim(0);
  return true;
}

Status Bouncer::apply(const CsPlan& plan) {
  // A map's bit is set before its first entry is written, and cleared only after the
  // counts say it is empty: the datapath never skips a map holding one in force.
  const uint32_t present = present_bits(held_.counts());
  uint32_t writing = present;
  for (const CsEntry& e : plan.put) writing |= cs_present_bit(cs_map_of(e.net));
  maps_->set_present(writing | present_);
  LV_TRY(maps_->put(plan.put));
  LV_TRY(maps_->remove(plan.remove));
  maps_->set_present(present);
  present_ = present;
  stats_.applied += plan.put.size();
  stats_.removed += plan.remove.size();
  return {};
}

void Bouncer::expire() {
  if (!maps_) return;
  const std::vector<Cidr> gone = held_.expire(Clocks::read().now_mono_ns);
  if (gone.empty()) return;
  if (Status st = apply(CsPlan{{}, gone}); !st) {
    maps_.reset();
    error(st.error());
    return;
  }
  publish(!said_.failing());
}

void Bouncer::publish(bool up) {
  const CsCounts c = held_.counts();
  for (unsigned f = 0; f < 2; ++f)
    for (unsigned r = 0; r < 2; ++r) stats_.held[f][r] = c.n[f][r];
  stats_.up = up;
  health_.bouncer(stats_);
  // For `levee status` (state_file.hpp), when what it shows changed.
  if (state_.empty() || up != stats_up_) since_unix_ns_ = Clocks::read().now_unix_ns;
  stats_up_ = up;
  const std::string state = nlohmann::json{{"pid", getpid()},
                                           {"up", up},
                                           {"since_unix_ns", since_unix_ns_},
                                           {"pull_errors", stats_.pull_errors},
                                           {"pull_timeouts", stats_.pull_timeouts},
                                           {"last_error", up ? "" : last_error_what_}}
                                .dump();
  if (state != state_) write_state_file(bouncer_state_path(iface_), state);
  state_ = state;
}

void Bouncer::error(const Error& e) {
  ++stats_.pull_errors;
  startup_ = true;                  // after any error, every decision again: reconcile
  if (client_.cancelled()) return;  // stopping: a pull cut short is no news
  last_error_what_ = e.what;
  if (const auto line = said_.error(e.message(), Clocks::read().now_mono_ns))
    say(iface_, "crowdsec: {} (the filter keeps the decisions it holds; retrying)", *line);
  publish(false);
}

}  // namespace levee::daemon
