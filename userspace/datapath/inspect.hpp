// inspect.hpp - what levee reads of an attached interface without changing it:
// `levee status` (the attachment, its policy, its maps' fill), `levee show` (one
// address), and the counters of `levee stats` and the metrics.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "datapath/filters.hpp"
#include "datapath/handoff.hpp"
#include "datapath/lists.hpp"
#include "datapath/maps.hpp"
#include "datapath/pins.hpp"
#include "levee_abi.h"

namespace levee {

// What `levee status` shows for one interface.
struct IfaceStatus {
  std::string iface;
  std::string problem;       // why it could not be read; nothing else is set then
  bool defunct = false;      // the interface went away; the link no longer does anything
  bool other_netns = false;  // attached in another network namespace than the caller's
  unsigned ifindex = 0;
  std::string mode;  // native, generic, or "" when defunct
  uint32_t prog_id = 0;
  uint32_t link_id = 0;
  std::string source;              // where the policy came from
  std::vector<lv_class> classes;   // in first-match order
  std::vector<uint8_t> class_ids;  // their ids (what override bitmasks and keys use)
  std::vector<lv_override> overrides;
  size_t allow = 0, deny = 0, override_entries = 0;  // list entries, both families
  uint64_t generation = 0;
  uint32_t max_sources = 0;
  uint64_t sources = 0;       // lv_state entries of sources
  uint64_t networks = 0;      // lv_state entries of networks (network limits)
  uint32_t policy_flags = 0;  // enum lv_policy_flags of the active slot
  uint64_t full_at = 0;       // LV_POL_REFUSE_FULL: the source count new ones are refused at
  uint32_t max_bans = 0;
  uint64_t bans_active = 0;        // ban records banning now
  uint64_t ban_records = 0;        // every record, active or remembered for its offences
  std::vector<uint64_t> admitted;  // per class (in first-match order): new sources admitted
  std::vector<lv_guard> guards;    // per class (in first-match order): its autopilot
  uint64_t now_ns = 0;             // CLOCK_MONOTONIC when the guards were read
  // From the walk: sources on probation, networks the autopilot watches, and those of
  // them escalated and not yet calm.
  uint64_t probation = 0, watched = 0;
  // CrowdSec decisions in the filter's maps (levee run's bouncer), and of those the ones
  // not expired: what status can know without asking the daemon.
  uint64_t crowdsec = 0, crowdsec_in_force = 0;
  // levee run's CrowdSec publisher (publish = true), as its state file says
  // (core/lock.hpp's publish_state_path; `levee status` reads it).
  struct Publish {
    std::string machine;
    bool up = false;
    uint64_t published = 0, errors = 0, queued = 0, dropped = 0;
  };
  std::optional<Publish> publish;
  // levee run's CrowdSec bouncer, as its state file says (bouncer_state_path).
  struct Bouncer {
    bool up = false;
    uint64_t for_ns = 0;  // how long its pulls have worked (up) or failed
    uint64_t pull_errors = 0, pull_timeouts = 0;
    std::string last_error;  // the failing pull's, without its hint ("" when up)
  };
  std::optional<Bouncer> bouncer;
  struct Escalation {
    lv_key key;  // the network (LV_KEY_WATCH), masked to its class's watch prefix
    lv_watch watch;
  };
  std::vector<Escalation> escalated;
  // SYN authentication, when a class has it: what lv_control holds, levee's tc filter as
  // found on the interface now, and this network namespace's sysctls (the listener's).
  struct SynAuth {
    bool proxying = false;              // lv_control.handoff: SYN-ACKs are proxy mode's
    uint32_t tcp_off = 0;               // LV_TCP_OFF_*: options the SYN-ACKs leave out
    TcPlace tc;                         // where the attach put levee's tc filter; handle 0: none (reset mode only)
    bool own_hook = false;              // levee created the clsact hook
    bool tc_present = false;            // levee's program is in the filter there now
    uint32_t marks_per_network = 0;     // known_good_per_network (0: no bound)
    unsigned prefix4 = 0, prefix6 = 0;  // ...per network of these (the answer prefixes)
    TcpSysctls sysctls;                 // read now
  };
  std::optional<SynAuth> syn;
  // The known-good filter's half packets read (walk only: a scrape has it from levee run).
  std::optional<GoodFill> known_good;
  uint32_t good_epoch = 0;  // its ageings (lv_control.good_epoch)
};

// walk = false skips what needs a walk of lv_state and lv_bans (sources, networks,
// bans_active, ban_records stay 0): what a metrics scrape reads at any map size.
Result<IfaceStatus> query_status(const Pinned& p, bool walk = true);

// `levee show`: what levee knows of one address.
struct ShowClass {
  std::string name;
  unsigned class_id = 0;
  lv_class cls{};
  std::optional<std::string> override_name;  // limits replaced for this address
  lv_limit pkt{}, bytes{};                   // the limits that apply
  lv_state state{};
  bool has_state = true;            // false: only its network's state or a ban is known
  std::optional<lv_state> network;  // its network's state (a class with a network limit)
  std::optional<lv_ban> ban;        // its ban record in this class
  std::optional<lv_ban> ban_all;    // its ban record in every class (applies here too)
  // The autopilot (struct lv_auto): its state on probation (LV_KEY_PROBATION: admitted
  // while the class was not calm; under the same limits); whether it is known-good (a
  // class with LV_CLASS_AUTO_ADMIT; nullopt in another, or if the filter could not be
  // read); its network as the watch keys it (LV_CLASS_ESCALATE), if watched.
  std::optional<lv_state> probation;
  std::optional<bool> known_good;
  std::optional<lv_watch> watch;
  uint64_t now_ns = 0;
};
struct ShowResult {
  std::string address;
  std::optional<ListRow> list;     // the list entry deciding for it
  std::vector<ShowClass> classes;  // classes it has state in (on probation too), a network's state,
                                   // a ban, an escalated network or a known-good mark
  std::optional<lv_ban> ban_all;   // its ban record in every class
  uint64_t now_ns = 0;             // CLOCK_MONOTONIC when it was read
};
Result<ShowResult> show(const std::string& iface, const std::string& address);

// Counters summed over CPUs, each class's counted from when it got its id.
Result<Counters> interface_counters(const Pinned& p);

// Counters per class, summed over CPUs, with the class names of the active policy.
struct ClassCounters {
  std::string name;
  unsigned id = 0;
  lv_class_counters counters{};
  bool monitor = false;  // the class monitors now (its own mode or the interface's)
};
Result<std::vector<ClassCounters>> class_counters(const Pinned& p);
// The same from what the caller has read already (query_status, interface_counters).
std::vector<ClassCounters> class_counters(const IfaceStatus& s, const Counters& c);

}  // namespace levee
