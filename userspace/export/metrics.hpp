// metrics.hpp - Prometheus text exposition (format 0.0.4) of one interface.
//
// Rendering is a pure function of a snapshot, so its output is tested without a kernel
// and `levee run` serves exactly what the tests check. What a scrape reads is cheap at
// any number of sources: the per-CPU counters (one lookup), the policy (mapped) and the
// link's info. The gauges that need a walk of the per-source map (sources, bans) come
// from the daemon's periodic maintenance walk, with the time it ran beside them.
//
// Each class with the autopilot has its series (levee_autopilot_*): its state and counts
// as lv_guard holds them, read at every scrape; the sources on probation and the
// networks watched and escalated come from the walk.
//
// Counters are kept by the datapath per reason and per class, not per (class, reason):
// so packets by reason and packets by class are two families, each summing to every
// packet seen (levee_packets_total) or every packet that reached a class
// (levee_class_packets_total). One family with both labels would double count in any
// sum() over it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "datapath/inspect.hpp"
#include "datapath/maps.hpp"

namespace levee {

// What the daemon's last walk of lv_state and lv_bans counted.
struct WalkCounts {
  uint64_t sources = 0, networks = 0;
  uint64_t bans_active = 0, ban_records = 0;
  uint64_t at_unix_ns = 0;  // when it finished
  double seconds = 0;       // how long it took
  uint64_t probation = 0;   // sources on probation (the autopilot)
  uint64_t watched = 0;     // networks the autopilot watches
  uint64_t escalated = 0;   // of those, escalated and not calm
  uint64_t marked = 0;      // sources marked known-good by this walk
  uint64_t capped = 0;      // ...left unmarked: their network made its marks (known_good_per_network)
};

// The known-good filter as levee run last measured it (the half packets read).
struct GoodFilterHealth {
  double fill = 0;             // share of its bits set
  double false_positive = 0;   // estimated (datapath/filters.hpp, good_fill())
  uint64_t ageings = 0;        // by this levee run: every known_good_for, or early
  uint64_t early_ageings = 0;  // of those, early: the false positives over 1 %
};

// The daemon's own health.
struct DaemonHealth {
  uint64_t start_unix_ns = 0;
  uint64_t reloads_ok = 0, reloads_failed = 0;
  bool last_reload_ok = true;
  uint64_t last_success_unix_ns = 0;       // the start's load counts
  std::map<std::string, uint64_t> events;  // written, by type name
  uint64_t events_suppressed = 0;          // the datapath's "suppressed" counts, summed
  uint64_t events_dropped = 0;             // not written: the events file refused them (disk full)
  // The filter as the daemon keeps it: attached to the interface (false while the
  // interface is gone) and pinned in bpffs (false while only levee run holds it open).
  bool attached = true, pinned = true;
  uint64_t reattaches = 0, repins = 0;   // recoveries from each
  uint64_t tc_restores = 0;              // levee's tc filter put back after someone removed it
  uint64_t known_good_marked = 0;        // sources the walks marked known-good (WalkCounts.marked, summed)
  uint64_t known_good_capped = 0;        // ...and left unmarked for their network's bound (WalkCounts.capped)
  std::optional<GoodFilterHealth> good;  // the known-good filter, once measured
  uint64_t cookie_key_rotations = 0;     // SYN cookie keys drawn by this daemon (one per key epoch)
};

// levee run's CrowdSec bouncer ([crowdsec]): what it holds and how its pulls went.
struct BouncerHealth {
  uint64_t held[2][2] = {};        // decisions in the filter's maps, [IPv4, IPv6][Ip, Range]
  uint64_t last_pull_unix_ns = 0;  // the last successful pull; 0: none yet
  bool up = false;                 // the last pull succeeded
  uint64_t pulls = 0, pull_errors = 0;
  uint64_t pull_timeouts = 0;         // of the errors, pulls ended by their deadline ([crowdsec] timeout)
  double last_pull_seconds = 0;       // the last pull, from its request to its reply's end or its failure
  uint64_t applied = 0, removed = 0;  // decisions written into the maps, taken out of them
  uint64_t skipped = 0;               // stream entries not understood (counted, ignored)
  double last_apply_seconds = 0;      // the last pull, from its reply to its last change written
};

// levee run as a CrowdSec machine ([crowdsec] publish = true): its own bans shared.
struct PublisherHealth {
  bool up = false;                    // the last request to the Local API succeeded
  uint64_t published = 0;             // alerts the Local API accepted (one ban each)
  uint64_t errors = 0;                // requests that failed (each retried later)
  uint64_t queued = 0;                // bans waiting now
  uint64_t dropped_full = 0;          // dropped from a full queue (the oldest)
  uint64_t dropped_expired = 0;       // ended while they waited
  uint64_t logins = 0;                // logins to the Local API (a token each)
  uint64_t last_publish_unix_ns = 0;  // the last batch accepted; 0: none yet
};

struct MetricsSnapshot {
  std::string iface;
  std::string version;
  IfaceStatus status;  // from query_status(..., walk = false)
  Counters counters;
  std::vector<ClassCounters> classes;  // first-match order; status.admitted in the same order
  std::optional<WalkCounts> walk;
  std::optional<DaemonHealth> daemon;        // absent: no daemon families
  std::optional<BouncerHealth> bouncer;      // absent: no [crowdsec], no bouncer families
  std::optional<PublisherHealth> publisher;  // absent: no publish = true, no publisher families
};

// The text exposition: # HELP and # TYPE per family, every family once, labels escaped.
std::string render_metrics(const MetricsSnapshot& s);

// Label value escaping of the text format: backslash, double quote, newline.
std::string escape_label(const std::string& v);

}  // namespace levee
