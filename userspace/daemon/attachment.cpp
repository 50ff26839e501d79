#include "daemon/attachment.hpp"

#include <fmt/format.h>

#include <utility>

#include "daemon/log.hpp"
#include "daemon/metrics_server.hpp"
#include "daemon/reload.hpp"
#include "datapath/attach.hpp"
#include "datapath/kernel.hpp"
#include "policy/config.hpp"

namespace levee::daemon {

Status Attachment::open() {
  LV_TRY_ASSIGN(auto pins, open_pinned(o_.iface));
  std::lock_guard g(mu_);
  pins_ = std::move(pins);
  return {};
}

bool Attachment::check() {
  if (state_ == State::Gone) {
    try_reattach();
    return true;
  }
  const bool attached = link_attached(*pins_);
  if (state_ == State::Unpinned) {
    if (attached) {
      try_repin();
    } else {
      // Gone while unpinned: nothing pinned to remove, only the interface to wait for.
      say(o_.iface, "{} is gone too: levee run attaches again from {} when it is back", o_.iface, o_.config);
      health_.attached(false);
      state_ = State::Gone;
    }
    return true;
  }
  const bool dir = pin_dir_exists(o_.iface);
  if (dir && attached) {
    suspect_ = false;
    return true;
  }
  if (!dir && !attached) return false;  // levee detach: the operator's choice
  if (dir) {
    iface_gone();
    return true;
  }
  // A detach renames the directory away a moment before it detaches the link: only pins
  // missing at two checks in a row (a turn of the loop apart) are lost.
  if (!std::exchange(suspect_, true)) return true;
  suspect_ = false;
  lost_pins();
  return true;
}

void Attachment::lost_pins() {
  const bool mounted = check_bpffs().ok();
  say(o_.iface,
      "the pins of the filter are gone ({}): it keeps filtering while levee run holds it, and is pinned again "
      "as soon as {} is a BPF filesystem; until then levee commands and reloads cannot reach it, and stopping "
      "levee run ends it",
      mounted ? fmt::format("no {}", pin_dir(o_.iface)) : fmt::format("{} is not a mounted BPF filesystem", kBpffs),
      kBpffs);
  health_.pinned(false);
  state_ = State::Unpinned;
  last_said_.clear();
  try_repin();
}

void Attachment::try_repin() {
  if (auto st = repin(*pins_); !st) {
    say_once(fmt::format("not pinned again yet: {}", st.error().message()));
    return;
  }
  health_.repinned();
  state_ = State::Whole;
  say(o_.iface, "pinned the running filter again in {}: levee commands reach it again", pin_dir(o_.iface));
}

void Attachment::iface_gone() {
  say(o_.iface,
      "{} is gone, and its XDP link with it: removing its pins; levee run attaches again from {} when an "
      "interface of that name is back",
      o_.iface, o_.config);
  health_.attached(false);
  state_ = State::Gone;
  last_said_.clear();
  if (auto st = detach(o_.iface); !st) say(o_.iface, "could not remove the pins: {}", st.error().message());
}

void Attachment::try_reattach() {
  if (!iface_index(o_.iface)) return;  // not back yet
  auto p = load_config(o_.config, o_.iface);
  if (!p) {
    say_once(fmt::format("{} is back, but not attached again: {}", o_.iface, p.error().message()));
    return;
  }
  if (auto st = start_filter(o_, std::move(*p)); !st) {
    say_once(fmt::format("{} is back, but not attached again: {}", o_.iface, st.error().message()));
    return;
  }
  auto pins = open_pinned(o_.iface);
  if (!pins) {
    say_once(fmt::format("{} is attached again but its pins cannot be opened: {}", o_.iface, pins.error().message()));
    return;
  }
  {
    std::lock_guard g(mu_);
    pins_ = std::move(pins.value());
  }
  state_ = State::Whole;
  replaced_ = true;
  health_.reattached();
  health_.pinned(true);
}

void Attachment::say_once(const std::string& line) {
  if (line == last_said_) return;  // a check every quarter second: say a reason once
  last_said_ = line;
  say(o_.iface, "{}", line);
}

Result<MetricsSnapshot> Attachment::snapshot() const {
  std::lock_guard g(mu_);
  if (!pins_) return Error{fmt::format("{}: levee run holds no filter", o_.iface), 0, ""};
  return metrics_snapshot(o_.iface, *pins_, health_);
}

bool Attachment::close() {
  const State s = state_;
  {
    std::lock_guard g(mu_);
    pins_.reset();
  }
  if (s == State::Unpinned)
    say(o_.iface, "the filter had no pins ({} was gone): it ended with levee run", kBpffs);
  else if (s == State::Gone)
    say(o_.iface, "{} was gone: no filter was attached", o_.iface);
  return s == State::Whole;
}

}  // namespace levee::daemon
