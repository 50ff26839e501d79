// attachment.hpp - the filter `levee run` keeps in place, checked every turn of its loop.
//
// The daemon holds its filter's objects open (the link and every map), so the kernel
// keeps the program attached whatever happens to the pins. Each check tells apart:
//
//   pins there, link attached        the normal case
//   pins gone,  link detached        `levee detach` by someone else: the daemon ends
//   pins gone,  link attached        bpffs unmounted (or the directory removed): the
//                                    filter keeps dropping while the daemon holds it; it
//                                    is pinned again from the open fds as soon as
//                                    /sys/fs/bpf is a BPF filesystem again
//   pins there, link detached        the interface is gone, and its link with it: the
//                                    dead pins are removed at once, and the filter is
//                                    attached again from the config when an interface of
//                                    that name is back
//
// Each change is said once (log), counted (Health: levee_filter_attached, _pinned,
// _recoveries_total). Until the filter is whole again, walks and reloads that need the
// pins are not possible (whole() says so).
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "core/result.hpp"
#include "daemon/health.hpp"
#include "daemon/options.hpp"
#include "datapath/pins.hpp"
#include "export/metrics.hpp"

namespace levee::daemon {

class Attachment {
 public:
  Attachment(const DaemonOptions& o, Health& health) : o_(o), health_(health) {}

  // The pins start_filter made or adopted.
  Status open();
  // False when someone else detached the filter (the daemon should end).
  bool check();
  // The filter is attached and pinned: the pins can be opened by name.
  bool whole() const { return state_ == State::Whole; }
  // The objects were replaced (attached again): readers of the old ones must reopen.
  bool take_replaced() { return std::exchange(replaced_, false); }
  // The loop's thread only.
  const Pinned& pins() const { return *pins_; }
  // A scrape, from the metrics server's threads.
  Result<MetricsSnapshot> snapshot() const;
  // At the stop: closes the objects; true if the filter stays (attached and pinned).
  // Says what happens to one nobody else holds.
  bool close();

 private:
  enum class State { Whole, Unpinned, Gone };
  void lost_pins();
  void try_repin();
  void iface_gone();
  void try_reattach();
  void say_once(const std::string& line);

  const DaemonOptions& o_;
  Health& health_;
  mutable std::mutex mu_;  // pins_ against the scrapes
  std::optional<Pinned> pins_;
  State state_ = State::Whole;
  bool suspect_ = false;  // pins missing once: a detach may be between its two steps
  bool replaced_ = false;
  std::string last_said_;
};

}  // namespace levee::daemon
