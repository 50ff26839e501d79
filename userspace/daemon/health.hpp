// health.hpp - what `levee run` records for its metrics: its own health (start, reloads,
// events written) and the counts of the last maintenance walk. The loop writes them and
// the metrics server's threads read them, so they are kept under one mutex.
#pragma once

#include <mutex>
#include <optional>

#include "export/events.hpp"
#include "export/metrics.hpp"

namespace levee::daemon {

class Health {
 public:
  void started();
  // A load of the config into the kernel, at the start or on SIGHUP.
  void reloaded(bool ok);
  void wrote(const EventRecord& r);
  // An event the events file refused (disk full).
  void dropped_event();
  // A new SYN cookie key drawn (cookie_keys.hpp).
  void rotated_cookie_key();
  void walked(const WalkCounts& w);
  // The known-good filter measured (and, `aged`, aged; `early`, for its false positives).
  void known_good(const GoodFilterHealth& now, bool aged, bool early);
  // levee's tc filter put back on the interface after someone removed it.
  void restored_tc_filter();
  // The filter's attachment and pins as the loop last found them.
  void attached(bool yes);
  void pinned(bool yes);
  void reattached();
  void repinned();
  // levee run's CrowdSec bouncer, after each of its pulls.
  void bouncer(const BouncerHealth& b);
  // levee run as a CrowdSec machine, after each change; nullopt: it stopped.
  void publisher(const std::optional<PublisherHealth>& p);
  // Into a scrape: s.walk and s.daemon.
  void read(MetricsSnapshot& s) const;

 private:
  mutable std::mutex mu_;
  DaemonHealth health_;
  std::optional<WalkCounts> walk_;
  std::optional<BouncerHealth> bouncer_;
  std::optional<PublisherHealth> publisher_;
};

}  // namespace levee::daemon
