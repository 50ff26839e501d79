#include "export/metrics.hpp"

#include <fmt/format.h>

#include "core/reasons.hpp"
#include "export/render_status.hpp"
#include "policy/policy.hpp"

namespace levee {

std::string escape_label(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

namespace {

using Labels = std::vector<std::pair<const char*, std::string>>;

// Appends families in order; each family's HELP/TYPE once, then its samples.
class Writer {
 public:
  explicit Writer(const std::string& iface) : iface_(escape_label(iface)) {}

  void family(const char* name, const char* type, const char* help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    name_ = name;
  }
  // A sample of the current family; every sample carries iface first.
  template <typename T>  // integers as they are; doubles in the shortest form that reads back
  void sample(const Labels& labels, T v) {
    line(labels, fmt::format("{}", v));
  }
  std::string take() { return std::move(out_); }

 private:
  void line(const Labels& labels, const std::string& value) {
    out_ += name_;
    out_ += "{iface=\"" + iface_ + "\"";
    for (const auto& [k, v] : labels) out_ += fmt::format(",{}=\"{}\"", k, escape_label(v));
    out_ += "} " + value + "\n";
  }
  std::string iface_, out_;
  const char* name_ = "";
};

double seconds(uint64_t unix_ns) { return static_cast<double>(unix_ns) / 1e9; }

// Packets and bytes by verdict and reason, and monitor mode's would-be drops.
void reason_families(Writer& w, const Counters& c) {
  // Every reason the datapath counts, zeros too: a series exists before its first packet,
  // so rate() and alerts see it start at 0 instead of appearing mid-flood.
  w.family("levee_packets_total", "counter",
           "Packets the XDP program saw, by verdict and the reason for it (summed over CPUs).");
  for (const ReasonInfo& r : kReasons)
    w.sample({{"verdict", lv_reason_drops(r.id) ? "dropped" : "passed"}, {"reason", std::string(r.name)}},
             c.by_reason[r.id].packets);
  w.family("levee_bytes_total", "counter", "Bytes of those packets (frame length), by verdict and reason.");
  for (const ReasonInfo& r : kReasons)
    w.sample({{"verdict", lv_reason_drops(r.id) ? "dropped" : "passed"}, {"reason", std::string(r.name)}},
             c.by_reason[r.id].bytes);

  w.family("levee_syn_handoffs_total", "counter",
           "SYN authentication's proxy mode: ACKs that returned a valid cookie, by what became of them: handed "
           "(the listener has the connection), no_listener (the stack reset it), refused (the kernel refused the "
           "request socket), no_metadata (the driver kept no XDP metadata).");
  for (unsigned h = 0; h < LV_HO_MAX; ++h) w.sample({{"result", std::string(handoff_result_name(h))}}, c.handoff[h]);

  w.family("levee_would_drop_packets_total", "counter",
           "Monitor mode: packets that would have been dropped (passed as reason monitored), by reason.");
  for (const ReasonInfo& r : kReasons)
    if (would_drop_reason(r.id)) w.sample({{"reason", std::string(r.name)}}, c.would[r.id].packets);
  w.family("levee_would_drop_bytes_total", "counter", "Monitor mode: bytes that would have been dropped, by reason.");
  for (const ReasonInfo& r : kReasons)
    if (would_drop_reason(r.id)) w.sample({{"reason", std::string(r.name)}}, c.would[r.id].bytes);
}

// Packets and bytes by class and verdict, and the sources each class admitted.
void class_families(Writer& w, const MetricsSnapshot& s) {
  w.family("levee_class_packets_total", "counter",
           "Packets that reached a traffic class of the policy, by class and verdict.");
  for (const ClassCounters& k : s.classes) {
    w.sample({{"class", k.name}, {"verdict", "passed"}}, k.counters.passed.packets);
    w.sample({{"class", k.name}, {"verdict", "dropped"}}, k.counters.dropped.packets);
  }
  w.family("levee_class_bytes_total", "counter", "Bytes of those packets, by class and verdict.");
  for (const ClassCounters& k : s.classes) {
    w.sample({{"class", k.name}, {"verdict", "passed"}}, k.counters.passed.bytes);
    w.sample({{"class", k.name}, {"verdict", "dropped"}}, k.counters.dropped.bytes);
  }
  w.family("levee_class_admitted_sources_total", "counter",
           "New sources a class with a new-source budget admitted (gave state to).");
  for (size_t i = 0; i < s.classes.size() && i < s.status.admitted.size(); ++i)
    w.sample({{"class", s.classes[i].name}}, s.status.admitted[i]);
}

// One sample per class with the autopilot's admission (or with `escalates`: its
// escalation); the family is left out when no class has it.
template <typename Value>
void autopilot_family(Writer& w, const IfaceStatus& st, bool escalation, const char* name, const char* type,
                      const char* help, Value value) {
  bool announced = false;
  for (size_t i = 0; i < st.classes.size(); ++i) {
    const AutopilotView v = autopilot_view(st, i);
    if (escalation ? !v.escalates : v.admission != Admission::Auto) continue;
    if (!announced) w.family(name, type, help);
    announced = true;
    w.sample({{"class", name_of(st.classes[i].name)}}, value(v));
  }
}

// Per class, the autopilot's state and counts (lv_guard, read by guard.h's rules).
void autopilot_families(Writer& w, const IfaceStatus& st) {
  using V = const AutopilotView&;
  autopilot_family(w, st, false, "levee_autopilot_engaged", "gauge",
                   "1 while the class's admission autopilot is engaged (not calm; in monitor mode: would be).",
                   [](V v) { return uint64_t{v.state == AutopilotView::Engaged ? 1u : 0u}; });
  autopilot_family(w, st, false, "levee_autopilot_threshold_sources_per_second", "gauge",
                   "The autopilot's threshold in force: new sources per second (margin x baseline, at least the "
                   "floor).",
                   [](V v) { return v.threshold; });
  autopilot_family(w, st, false, "levee_autopilot_baseline_sources_per_second", "gauge",
                   "New sources per second the autopilot learnt as normal (from calm periods).",
                   [](V v) { return static_cast<double>(v.guard.baseline) / (1u << LV_GUARD_FP); });
  autopilot_family(w, st, false, "levee_autopilot_engagements_total", "counter",
                   "Times the class's admission autopilot engaged.", [](V v) { return v.guard.engagements; });
  autopilot_family(w, st, false, "levee_autopilot_arrivals_total", "counter",
                   "New sources that arrived while the class was calm (what the autopilot learns from).",
                   [](V v) { return v.guard.arrivals; });
  autopilot_family(w, st, false, "levee_autopilot_probation_total", "counter",
                   "New sources admitted on probation (while the class was not calm).",
                   [](V v) { return v.guard.probation; });
  autopilot_family(w, st, false, "levee_autopilot_promoted_total", "counter",
                   "Sources on probation promoted to ordinary sources once the class was calm.",
                   [](V v) { return v.guard.promoted; });
  autopilot_family(w, st, false, "levee_autopilot_known_good_admitted_total", "counter",
                   "Known-good sources let past the engaged autopilot's threshold.",
                   [](V v) { return v.guard.good_admitted; });
  autopilot_family(w, st, true, "levee_autopilot_escalations_total", "counter",
                   "Networks the class's autopilot escalated (limited as a whole).",
                   [](V v) { return v.guard.escalations; });
}

// The attachment and the policy in force.
void attachment_families(Writer& w, const IfaceStatus& st, const std::string& version) {
  w.family("levee_info", "gauge", "The attachment: levee version, XDP mode, program id (value 1).");
  w.sample({{"version", version},
            {"xdp_mode", st.mode.empty() ? "none" : st.mode},
            {"program_id", std::to_string(st.prog_id)}},
           uint64_t{1});
  w.family("levee_monitor", "gauge", "1 when the interface's monitor switch is on (levee set --mode monitor).");
  w.sample({}, uint64_t{(st.policy_flags & LV_POL_MONITOR) ? 1u : 0u});
  w.family("levee_config_generation", "gauge", "Generation of the policy in force (each reload or change adds one).");
  w.sample({}, st.generation);
  w.family("levee_sources_max", "gauge", "Source states the per-source map holds at most (--max-sources).");
  w.sample({}, uint64_t{st.max_sources});
  w.family("levee_bans_max", "gauge", "Ban records the ban map holds at most ([interface] max_bans).");
  w.sample({}, uint64_t{st.max_bans});
}

// What the daemon's last maintenance walk counted.
void walk_families(Writer& w, const WalkCounts& k, const IfaceStatus& st) {
  w.family("levee_sources", "gauge", "Sources with state, at the last maintenance walk.");
  w.sample({}, k.sources);
  w.family("levee_networks", "gauge", "Network states (network limits), at the last maintenance walk.");
  w.sample({}, k.networks);
  w.family("levee_state_fill_ratio", "gauge",
           "Entries of the per-source map (sources and networks) over its size, at the last walk.");
  w.sample({}, st.max_sources ? static_cast<double>(k.sources + k.networks) / st.max_sources : 0.0);
  w.family("levee_bans_active", "gauge", "Ban records banning now, at the last maintenance walk.");
  w.sample({}, k.bans_active);
  w.family("levee_ban_records", "gauge", "Ban records (active, or kept for their offence count), at the last walk.");
  w.sample({}, k.ban_records);
  w.family("levee_sources_on_probation", "gauge",
           "Sources on probation (admitted while their class was not calm), at the last maintenance walk.");
  w.sample({}, k.probation);
  w.family("levee_watched_networks", "gauge", "Networks the autopilot watches, at the last maintenance walk.");
  w.sample({}, k.watched);
  w.family("levee_escalated_networks", "gauge",
           "Networks escalated by the autopilot and not yet calm, at the last maintenance walk.");
  w.sample({}, k.escalated);
  w.family("levee_state_walk_timestamp_seconds", "gauge", "When the last maintenance walk finished (Unix time).");
  w.sample({}, seconds(k.at_unix_ns));
  w.family("levee_state_walk_duration_seconds", "gauge", "How long the last maintenance walk took.");
  w.sample({}, k.seconds);
}

// SYN authentication's proxy as the filter has it now (a class with syn_auth only).
void syn_families(Writer& w, const IfaceStatus& st) {
  if (!st.syn) return;
  const IfaceStatus::SynAuth& y = *st.syn;
  w.family("levee_syn_proxying", "gauge",
           "1 while SYN authentication answers in proxy mode, 0 while in reset mode (no tc filter, "
           "net.ipv4.tcp_syncookies 0).");
  w.sample({}, uint64_t{y.proxying ? 1u : 0u});
  if (y.tc.handle) {
    w.family("levee_syn_tc_filter_present", "gauge",
             "1 while levee's tc filter is at its place on the ingress hook, 0 while someone removed it (levee run "
             "puts it back).");
    w.sample({}, uint64_t{y.tc_present ? 1u : 0u});
  }
  w.family("levee_syn_tcp_option_offered", "gauge",
           "1 for a handshake option levee's SYN-ACKs offer, 0 for one the listener's namespace turned off "
           "(net.ipv4 sysctls).");
  for (const auto& [bit, name] : {std::pair{LV_TCP_OFF_TS, "timestamps"}, std::pair{LV_TCP_OFF_SACK, "sack"},
                                  std::pair{LV_TCP_OFF_WSCALE, "window_scaling"}})
    w.sample({{"option", name}}, uint64_t{(y.tcp_off & bit) ? 0u : 1u});
}

// The known-good filter: how full levee run last found it, its ageings, the marks its
// bound per network left out.
void known_good_families(Writer& w, const MetricsSnapshot& s) {
  const DaemonHealth& d = *s.daemon;
  w.family("levee_known_good_marks_capped_total", "counter",
           "Sources left unmarked known-good because their network had made known_good_per_network marks since the "
           "last ageing, by who proved them: syn_auth (a handshake), walk (levee run's judge).");
  w.sample({{"by", "syn_auth"}}, s.counters.marks_capped);
  w.sample({{"by", "walk"}}, d.known_good_capped);
  if (!d.good) return;
  w.family("levee_known_good_fill", "gauge",
           "Share of the bits set in the known-good filter's half packets read, at the last maintenance walk.");
  w.sample({}, d.good->fill);
  w.family("levee_known_good_false_positive_ratio", "gauge",
           "Share of sources never marked that the known-good filter would take for known-good, estimated from its "
           "fill at the last walk; levee run ages it early above 0.01.");
  w.sample({}, d.good->false_positive);
  w.family("levee_known_good_ageings_total", "counter",
           "Ageings of the known-good filter by this levee run: every known_good_for (scheduled), or early when its "
           "false positives went over 1 % (early).");
  w.sample({{"kind", "scheduled"}}, d.good->ageings - d.good->early_ageings);
  w.sample({{"kind", "early"}}, d.good->early_ageings);
}

// The daemon's own health.
void daemon_families(Writer& w, const DaemonHealth& d) {
  w.family("levee_daemon_start_time_seconds", "gauge", "When this levee run started (Unix time).");
  w.sample({}, seconds(d.start_unix_ns));
  w.family("levee_reloads_total", "counter", "Config loads by this levee run (the start's and SIGHUP's), by result.");
  w.sample({{"result", "success"}}, d.reloads_ok);
  w.sample({{"result", "failure"}}, d.reloads_failed);
  w.family("levee_config_last_reload_success", "gauge", "1 if the last config load succeeded, 0 if it failed.");
  w.sample({}, uint64_t{d.last_reload_ok ? 1u : 0u});
  w.family("levee_config_last_reload_success_timestamp_seconds", "gauge",
           "When the config was last loaded successfully (Unix time).");
  w.sample({}, seconds(d.last_success_unix_ns));
  w.family("levee_events_total", "counter", "Events this levee run wrote, by type.");
  for (const char* type : {"limited", "banned", "ban_ended", "admission", "map_full", "engaged", "released",
                           "escalated", "deescalated", "answer_limited", "syn_proxy", "tcp_options", "tc_filter"}) {
    auto it = d.events.find(type);
    w.sample({{"type", type}}, it == d.events.end() ? uint64_t{0} : it->second);
  }
  w.family("levee_events_suppressed_total", "counter",
           "Events the datapath did not send (over [interface] events_per_second), as the events it sent report.");
  w.sample({}, d.events_suppressed);
  w.family(
      "levee_events_dropped_total", "counter",
      "Events this levee run could not write (the events file refused them: disk full, I/O error, its reader gone).");
  w.sample({}, d.events_dropped);
  w.family("levee_known_good_marked_total", "counter",
           "Known-good marks by this levee run's maintenance walks (a source that keeps behaving is marked "
           "again at every walk).");
  w.sample({}, d.known_good_marked);
  w.family("levee_syn_cookie_key_rotations_total", "counter",
           "SYN cookie keys this levee run drew: one per key epoch (68.7 s) while it runs; a filter without a "
           "daemon keeps the keys drawn at attach.");
  w.sample({}, d.cookie_key_rotations);
  w.family("levee_filter_attached", "gauge",
           "1 while the filter is attached to the interface, 0 while the interface is gone (levee run attaches "
           "again when it is back).");
  w.sample({}, uint64_t{d.attached ? 1u : 0u});
  w.family("levee_filter_pinned", "gauge",
           "1 while the filter's pins are in bpffs, 0 while only levee run holds it (bpffs unmounted; it pins "
           "again when bpffs is back).");
  w.sample({}, uint64_t{d.pinned ? 1u : 0u});
  w.family("levee_filter_recoveries_total", "counter",
           "Times levee run put its filter back: attached again after the interface came back, pinned again "
           "after bpffs did, its tc filter (SYN authentication's proxy) put back after someone removed it.");
  w.sample({{"action", "reattach"}}, d.reattaches);
  w.sample({{"action", "repin"}}, d.repins);
  w.sample({{"action", "tc_filter"}}, d.tc_restores);
}

// levee run's CrowdSec bouncer.
void bouncer_families(Writer& w, const BouncerHealth& b) {
  w.family("levee_crowdsec_decisions", "gauge",
           "CrowdSec decisions the filter holds (dropped as reason crowdsec until they expire), by family and scope.");
  for (unsigned f = 0; f < 2; ++f)
    for (unsigned sc = 0; sc < 2; ++sc)
      w.sample({{"family", f ? "ipv6" : "ipv4"}, {"scope", sc ? "range" : "ip"}}, b.held[f][sc]);
  w.family("levee_crowdsec_up", "gauge", "1 if the last pull of the CrowdSec Local API's decisions succeeded.");
  w.sample({}, uint64_t{b.up ? 1u : 0u});
  w.family("levee_crowdsec_last_pull_timestamp_seconds", "gauge",
           "When the CrowdSec decisions were last pulled successfully (Unix time; 0: not yet).");
  w.sample({}, seconds(b.last_pull_unix_ns));
  w.family("levee_crowdsec_pulls_total", "counter", "Pulls of the CrowdSec Local API's decision stream, by result.");
  w.sample({{"result", "success"}}, b.pulls);
  w.sample({{"result", "failure"}}, b.pull_errors);
  w.family("levee_crowdsec_pull_timeouts_total", "counter",
           "Pulls ended by their deadline ([crowdsec] timeout): the Local API did not send its whole reply in time "
           "(counted among the failures too).");
  w.sample({}, b.pull_timeouts);
  w.family("levee_crowdsec_pull_duration_seconds", "gauge",
           "How long the last pull took, from its request to the end of its reply, or to its failure.");
  w.sample({}, b.last_pull_seconds);
  w.family("levee_crowdsec_decisions_applied_total", "counter", "CrowdSec decisions written into the filter.");
  w.sample({}, b.applied);
  w.family("levee_crowdsec_decisions_removed_total", "counter",
           "CrowdSec decisions taken out of the filter: deleted, expired, or no longer held by the Local API.");
  w.sample({}, b.removed);
  w.family("levee_crowdsec_decisions_skipped_total", "counter",
           "Entries of the decision stream levee could not take (another scope, a bad address or duration, no room "
           "left in its map).");
  w.sample({}, b.skipped);
  w.family("levee_crowdsec_apply_duration_seconds", "gauge",
           "How long the last pull took from its reply to its last change written (parse, plan, writes).");
  w.sample({}, b.last_apply_seconds);
}

// levee run as a CrowdSec machine.
void publisher_families(Writer& w, const PublisherHealth& p) {
  w.family("levee_crowdsec_publish_up", "gauge",
           "1 if the last request of levee's own bans to the CrowdSec Local API succeeded.");
  w.sample({}, uint64_t{p.up ? 1u : 0u});
  w.family("levee_crowdsec_alerts_published_total", "counter",
           "Bans of levee's own policy the CrowdSec Local API accepted as alerts (one decision each).");
  w.sample({}, p.published);
  w.family("levee_crowdsec_publish_errors_total", "counter",
           "Requests to the CrowdSec Local API that failed (login or alerts); what they carried is sent again.");
  w.sample({}, p.errors);
  w.family("levee_crowdsec_publish_queue", "gauge", "Bans waiting to be published (the Local API away or behind).");
  w.sample({}, p.queued);
  w.family("levee_crowdsec_publish_dropped_total", "counter",
           "Bans never published: the queue was full (the oldest dropped) or the ban ended while it waited.");
  w.sample({{"why", "full"}}, p.dropped_full);
  w.sample({{"why", "expired"}}, p.dropped_expired);
  w.family("levee_crowdsec_publish_last_timestamp_seconds", "gauge",
           "When the CrowdSec Local API last accepted levee's bans (Unix time; 0: not yet).");
  w.sample({}, seconds(p.last_publish_unix_ns));
}

}  // namespace

std::string render_metrics(const MetricsSnapshot& s) {
  Writer w(s.iface);
  reason_families(w, s.counters);
  class_families(w, s);
  attachment_families(w, s.status, s.version);
  autopilot_families(w, s.status);
  syn_families(w, s.status);
  if (s.walk) walk_families(w, *s.walk, s.status);
  if (s.daemon) daemon_families(w, *s.daemon);
  if (s.daemon) known_good_families(w, s);
  if (s.bouncer) bouncer_families(w, *s.bouncer);
  if (s.publisher) publisher_families(w, *s.publisher);
  return w.take();
}

}  // namespace levee
