// loader.hpp - attach, detach, inspect and change levee on an interface.
//
// attach: preflight (privileges, bpffs, interface, no other XDP program, not already
// attached) -> validate and compile the policy -> load the embedded skeleton -> write
// the policy and lists -> create the XDP link -> pin link and maps into a staging
// directory -> rename it into place. Any failure unwinds: the staging directory is
// removed and the link fd closes, which detaches. Nothing is left half-applied.
//
// Every change to an attached interface (set, reload, a list edit) takes the
// interface's lock, builds the complete next policy and lists, and publishes them in
// one flip (PolicyMap::publish): it applies whole or not at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bpf/maps.hpp"
#include "bpf/pins.hpp"
#include "bpf/policy_map.hpp"
#include "core/result.hpp"
#include "levee_abi.h"
#include "policy/policy.hpp"

namespace levee {

struct AttachOptions {
  std::string iface;
  Policy policy;
  lv_attach_mode mode = LV_MODE_AUTO;
  uint32_t max_sources = LV_DEFAULT_MAX_SOURCES;
  uint32_t max_bans = LV_DEFAULT_MAX_BANS;
};

struct AttachResult {
  std::string mode;      // "native" or "generic": what the kernel gave us
  std::string fallback;  // why native was not used in auto mode, or ""
  uint32_t prog_id = 0;
};

// Attach options from a config file's policy: its [interface] mode, max_sources and
// max_bans where it sets them, the defaults elsewhere.
AttachOptions attach_options(const std::string& iface, Policy p);

Result<AttachResult> attach(const AttachOptions& o);
Status detach(const std::string& iface);

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
};

// walk = false skips what needs a walk of lv_state and lv_bans (sources, networks,
// bans_active, ban_records stay 0): what a metrics scrape reads at any map size.
Result<IfaceStatus> query_status(const Pinned& p, bool walk = true);

// `levee set`: change one class's limits live, and/or the interface's monitor switch,
// in one publish; per-source state is kept. The class is named, or the only one. Unset
// fields keep their value. new_sources 0 and ban 0 turn those off.
struct LimitChange {
  std::optional<std::string> class_name;
  std::optional<uint64_t> rate, burst, bytes_rate, bytes_burst;
  std::optional<unsigned> prefix4, prefix6;
  std::optional<uint64_t> new_sources, new_sources_burst;
  std::optional<uint64_t> ban_ns, ban_max_ns, forget_ns;
  std::optional<bool> monitor;  // the interface's switch (LV_POL_MONITOR)
  bool class_changes() const {
    return rate || burst || bytes_rate || bytes_burst || prefix4 || prefix6 || new_sources || new_sources_burst ||
           ban_ns || ban_max_ns || forget_ns;
  }
  bool empty() const { return !class_changes() && !monitor; }
};
struct SetResult {
  std::optional<ClassSpec> changed;     // the class as it is now, when one changed
  bool monitor = false;                 // the interface's switch, now
  std::vector<std::string> monitoring;  // classes that monitor now (their own mode or the switch)
  size_t classes = 0;
};
Result<SetResult> set_limits(const std::string& iface, const LimitChange& change);

// `levee unban`: lift the bans of one address, in every class (or one) and the
// every-class record, and let its sources conform again at once.
struct LiftedBan {
  std::string scope;    // a class's name, or "" for the every-class record
  bool banned = false;  // it was banning (else only its offence history is forgotten)
  uint64_t remaining_ns = 0;
  uint32_t offences = 0;
};
struct UnbanResult {
  std::vector<LiftedBan> lifted;
  size_t states_released = 0;  // sources whose state was held back by a ban
};
Result<UnbanResult> unban(const std::string& iface, const std::string& address,
                          const std::optional<std::string>& class_name);

// `levee reload`: replace classes, overrides and the config's list entries in one flip.
// Entries added from the command line or imported stay (an override entry whose
// override is gone is dropped and reported).
struct ReloadResult {
  uint64_t generation = 0;
  size_t classes = 0, list_entries = 0, kept_runtime = 0;
  std::vector<std::string> dropped;  // runtime entries that no longer apply, and why
  std::vector<std::string> notes;    // settings a reload cannot change
};
Result<ReloadResult> reload(const std::string& iface, const Policy& p);

// `levee allow|deny|override add|del|list`, `levee deny import`.
struct ListEdit {
  lv_list_kind kind = LV_LIST_DENY;
  std::vector<Cidr> add, del;
  std::string override_name;     // kind == LV_LIST_OVERRIDE, for add
  uint64_t expires_unix_ns = 0;  // deny add only
  lv_list_origin origin = LV_ORIGIN_CLI;
};
struct ListEditResult {
  size_t added = 0, replaced = 0, deleted = 0, missing = 0;
};
Result<ListEditResult> edit_lists(const std::string& iface, const ListEdit& e);

struct ListRow {
  Cidr cidr;
  lv_list_kind kind;
  std::string override_name;
  uint64_t expires_unix_ns = 0;  // 0: never
  lv_list_origin origin;
};
Result<std::vector<ListRow>> list_rows(const std::string& iface);

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
  uint64_t now_ns = 0;
};
struct ShowResult {
  std::string address;
  std::optional<ListRow> list;     // the list entry deciding for it
  std::vector<ShowClass> classes;  // classes it has state in, a network's state or a ban
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
