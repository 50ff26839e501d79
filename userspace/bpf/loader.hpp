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
};

struct AttachResult {
  std::string mode;      // "native" or "generic": what the kernel gave us
  std::string fallback;  // why native was not used in auto mode, or ""
  uint32_t prog_id = 0;
};

Result<AttachResult> attach(const AttachOptions& o);
Status detach(const std::string& iface);

// What `levee status` shows for one interface.
struct IfaceStatus {
  std::string iface;
  bool defunct = false;      // the interface went away; the link no longer does anything
  bool other_netns = false;  // attached in another network namespace than the caller's
  unsigned ifindex = 0;
  std::string mode;          // native, generic, or "" when defunct
  uint32_t prog_id = 0;
  uint32_t link_id = 0;
  std::string source;        // where the policy came from
  std::vector<lv_class> classes;    // in first-match order
  std::vector<uint8_t> class_ids;   // their ids (what override bitmasks and keys use)
  std::vector<lv_override> overrides;
  size_t allow = 0, deny = 0, override_entries = 0;  // list entries, both families
  uint64_t generation = 0;
  uint32_t max_sources = 0;
  uint64_t sources = 0;
};

Result<IfaceStatus> query_status(const Pinned& p);

// `levee set`: change one class's limits live; per-source state is kept. The class is
// named, or the only one. Unset fields keep their value.
struct LimitChange {
  std::optional<std::string> class_name;
  std::optional<uint64_t> rate, burst, bytes_rate, bytes_burst;
  std::optional<unsigned> prefix4, prefix6;
  bool empty() const { return !rate && !burst && !bytes_rate && !bytes_burst && !prefix4 && !prefix6; }
};
Result<ClassSpec> set_limits(const std::string& iface, const LimitChange& change);

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
  uint64_t now_ns = 0;
};
struct ShowResult {
  std::string address;
  std::optional<ListRow> list;  // the list entry deciding for it
  std::vector<ShowClass> classes;  // classes it has state in
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

const char* mode_name(lv_attach_mode m);

}  // namespace levee
