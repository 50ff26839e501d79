// policy.hpp - what an operator asks levee to do on an interface, validated, and
// compiled into what the datapath reads (one lv_policy slot and the list tries).
//
// A Policy comes from a config file (policy/config.hpp) or from the command line's
// --rate/--burst shorthand (one_class_policy). Everything that can be wrong with it is
// found by validate() before anything is written to the kernel.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.hpp"
#include "core/iface.hpp"
#include "core/result.hpp"
#include "levee_abi.h"
#include "policy/cidr.hpp"
#include "policy/limits.hpp"

namespace levee {

// Where a setting came from, for errors: "levee.toml:12".
struct Where {
  std::string file;
  unsigned line = 0;
  std::string key;  // e.g. "class[2].match.port"

  std::string describe() const;  // "levee.toml:12: class[2].match.port"
};

enum class Proto : uint8_t { Tcp, Udp, Icmp, Icmp6, Other };
std::optional<Proto> parse_proto(std::string_view s);  // tcp, udp, icmp, icmpv6, other
const char* proto_name(Proto p);

struct PortRange {
  uint16_t first = 0, last = 0;
  bool operator==(const PortRange&) const = default;
};

// A class matches a packet when every condition given holds; an empty Match matches
// everything.
struct Match {
  std::vector<Proto> protos;     // any of these; empty: any protocol
  std::vector<PortRange> ports;  // destination port in any range; empty: any port
  bool syn = false;              // TCP with SYN and without ACK only

  bool empty() const { return protos.empty() && ports.empty() && !syn; }
};

// One limit: `rate` per second with bursts of `burst`. rate 0: no limit of this kind.
struct Rate {
  uint64_t rate = 0;
  uint64_t burst = 0;
  bool set() const { return rate != 0; }
  bool operator==(const Rate&) const = default;
};

inline constexpr uint64_t kMaxRateBytes = 100'000'000'000;  // 800 Gbit/s per source
inline constexpr uint64_t kMaxBurstBytes = 1'000'000'000'000;

inline constexpr uint64_t kNsPerMs = 1'000'000;
inline constexpr uint64_t kHourNs = 3600 * LV_NSEC_PER_SEC;

// The limit of each enclosing network of a class as a whole: every source of one /24
// (IPv4) or /48 (IPv6), say, shares it. `prefix4`/`prefix6` are at most the class's.
struct NetworkLimit {
  unsigned prefix4 = 24;
  unsigned prefix6 = 48;
  Rate packets;
  Rate bytes;
  Where where;  // the network table, for errors
  bool set() const { return packets.set() || bytes.set(); }
};

// The limit of a class as a whole, all its sources together.
struct TotalLimit {
  Rate packets;
  Rate bytes;
  Where where;
  bool set() const { return packets.set() || bytes.set(); }
};

// Escalating bans: a source over its packet or byte limit is dropped until `ban_ns`
// after its last packet over the limit; an offence within `forget_ns` of the end of
// its previous ban doubles the ban, up to `max_ns`.
struct BanSpec {
  uint64_t ban_ns = 0;       // 0: no bans
  uint64_t max_ns = 0;       // 0: the default, max(ban_ns, 1h)
  uint64_t forget_ns = 0;    // 0: the default, 1h
  bool all_classes = false;  // the source is banned in every class, not only this one
  Where where;               // the ban key (of the class, or of [defaults])
  Where scope_where;         // the ban_scope key, for the every-class prefix check
  bool set() const { return ban_ns != 0; }
  uint64_t max_or_default() const { return max_ns ? max_ns : std::max(ban_ns, kHourNs); }
  uint64_t forget_or_default() const { return forget_ns ? forget_ns : kHourNs; }
};

// The default burst of new sources: a tenth of a second's worth, at least one.
inline uint64_t default_new_sources_burst(uint64_t rate) { return std::max<uint64_t>(1, rate / 10); }

struct ClassSpec {
  std::string name;
  Match match;
  Rate packets;  // packets/s, packets
  Rate bytes;    // bytes/s, bytes
  unsigned prefix4 = 32;
  unsigned prefix6 = 64;
  Where where;
  Rate new_sources;      // sources per second that may get state (admission), per class
  NetworkLimit network;  // per enclosing network
  TotalLimit total;      // the class as a whole
  BanSpec ban;
  bool monitor = false;  // the class's own mode: count would-be drops, drop nothing

  // A limit on each source's packets or bytes (what a ban needs to be triggered).
  bool per_source_limited() const { return packets.set() || bytes.set(); }
};

const char* list_kind_name(lv_list_kind k);      // "allow", "deny", "override"
const char* list_origin_name(lv_list_origin o);  // "config", "cli", "import"

struct ListEntry {
  Cidr cidr;
  lv_list_kind kind = LV_LIST_DENY;
  std::string override_name;     // kind == LV_LIST_OVERRIDE
  uint64_t expires_unix_ns = 0;  // deny only: wall-clock time it stops matching, 0 never
  lv_list_origin origin = LV_ORIGIN_CONFIG;
  Where where;
};

struct OverrideSpec {
  std::string name;
  std::vector<Cidr> cidrs;
  Rate packets;
  Rate bytes;
  std::vector<std::string> classes;  // class names it applies to; empty: all
  Where where;
};

// The datapath's events (lv_events) per second, all CPUs together, unless the file
// says otherwise ([interface] events_per_second). The burst is one second's worth, at
// most kMaxEventsBurst: the ring holds about 4,600 events, so a burst never fills it.
inline constexpr uint64_t kDefaultEventsPerSecond = 100;
inline constexpr uint64_t kMaxEventsPerSecond = 100'000;
inline constexpr uint64_t kMaxEventsBurst = 2'000;
inline Rate events_rate(uint64_t per_second) {
  return per_second ? Rate{per_second, std::min(per_second, kMaxEventsBurst)} : Rate{};
}

// Settings of the attachment itself. mode, max_sources and max_bans size or attach
// things (used by attach; a reload cannot change them); refuse_full and
// events_per_second are policy and a reload applies them.
struct InterfaceSettings {
  std::string name;  // the interface `levee run` keeps when none is given; "": any
  std::optional<lv_attach_mode> mode;
  std::optional<uint32_t> max_sources;
  std::optional<uint32_t> max_bans;
  bool refuse_full = false;                              // when_full = "refuse": a full map refuses new sources
  uint64_t events_per_second = kDefaultEventsPerSecond;  // 0: the datapath sends none
  bool attach_only() const { return mode || max_sources || max_bans; }
};

struct Policy {
  // First match wins; the last class is the default class, with an empty match.
  std::vector<ClassSpec> classes;
  std::vector<ListEntry> lists;  // allow, deny and override networks
  std::vector<OverrideSpec> overrides;
  InterfaceSettings iface;
  bool monitor = false;          // the interface's switch: every class monitors (attach --monitor)
  bool deny_in_monitor = false;  // the deny list drops even in monitor mode ([lists] deny_in_monitor)
  std::string source;            // the config file, or "command line"
};

// The --rate/--burst shorthand: one default class.
Policy one_class_policy(const Limits& l);

// Everything the kernel would refuse or that would not mean what it says, each error
// naming where it came from. `now_unix_ns` judges expiry times.
Status validate(const Policy& p, uint64_t now_unix_ns);

// The datapath's form of a validated policy.
struct CompiledPolicy {
  lv_policy slot{};              // generation left 0: the publisher sets it
  std::vector<uint8_t> new_ids;  // ids given to a class that did not hold them before
  std::vector<std::pair<lv_lpm4, lv_list_value>> list4;
  std::vector<std::pair<lv_lpm6, lv_list_value>> list6;
};

// Class ids by name, of a compiled slot: what a reload keeps.
using ClassIds = std::map<std::string, uint8_t>;
ClassIds class_ids(const lv_policy& slot);
// The ids of a compiled slot's classes in first-match order.
std::vector<uint8_t> class_order(const lv_policy& slot);
// An id per class (in the policy's order): a class named in `prior` keeps its id; a new
// class takes the lowest free id not just freed, so state left by a removed class is not
// handed straight to a new one.
std::vector<uint8_t> assign_class_ids(const std::vector<ClassSpec>& classes, const ClassIds& prior);

// With `prior` (the slot being replaced), classes keep their ids, epochs and counter
// baselines; an id given to a new class gets the next epoch (its old state is not
// found) and its baseline is left for the caller to take from the live counters.
CompiledPolicy compile(const Policy& p, const Clocks& clocks, const lv_policy* prior = nullptr);

// Compile one class: limits, prefix masks, ban times, its own mode, and the
// fast-reject flag when the tau of every limit covers two ticks of the cached clock's
// staleness. `cpus` (possible CPUs, 0: ask libbpf) sizes the lease of a class total.
// LV_CLASS_MONITOR is the class's own mode here; apply_interface() folds in the
// interface's switch.
lv_class compile_class(const ClassSpec& c, uint64_t tick_ns, unsigned cpus = 0);

// What a whole slot derives from its classes and the interface's monitor switch
// (LV_POL_MONITOR in s.flags): each class's LV_CLASS_MONITOR (its own mode or the
// switch), LV_POL_BAN_ALL and the every-class ban prefix (ban_mask4/6). Call after
// any change of a class or of the switch.
void apply_interface(lv_policy& s);

// Check what no single class shows: every class banning in every class counts sources
// with the same prefixes (one ban record per source for all of them).
Status check_ban_scopes(const std::vector<ClassSpec>& classes);

// The most of a class total one CPU draws at once: min(1 ms, tau / (2 x cpus)) over
// the total limits the class has; 0 without one (or with a burst of one).
uint64_t lease_ns(const lv_class& c, unsigned cpus);

// When a full map refuses new sources (LV_POL_REFUSE_FULL), the count it refuses at:
// a little under `max_entries`, because the LRU starts evicting before it is full
// (each CPU may hold a batch of free nodes).
uint64_t refuse_full_at(uint64_t max_entries, unsigned cpus);

// Possible CPUs, as the kernel sizes per-CPU maps (libbpf_num_possible_cpus), >= 1.
unsigned possible_cpus();

// Compile one class or override limit (exposed for tests).
lv_limit compile_packet_limit(const Rate& r);
lv_limit compile_byte_limit(const Rate& r);

// The class table alone (exposed for tests): first match wins, default last. `ids`
// gives each class's id (default: its position).
void compile_table(const std::vector<ClassSpec>& classes, lv_class_table& t, const std::vector<uint8_t>& ids = {});

// Recompute the fallbacks of every expiring entry: after_* is the most specific entry
// covering it that is still in force when it expires (never expires, or later), with
// that entry's expiry; then_* the most specific entry covering both that never expires.
template <typename Key>
void compute_fallbacks(std::vector<std::pair<Key, lv_list_value>>& entries);

// The datapath's keys for one address (a /32 or /128), as it builds them: IPv4
// IPv4-mapped, masked to a prefix, with the class's id and epoch. Its state in class
// `id`; its network's state there (LV_KEY_NETWORK, masked to the network prefix); its
// ban record in every class (class LV_ALL_CLASSES, masked to lv_policy.ban_mask*).
lv_key source_key(const Cidr& addr, const lv_class& c, unsigned id);
lv_key network_key(const Cidr& addr, const lv_class& c, unsigned id);
lv_key ban_all_key(const Cidr& addr, const lv_policy& p);

// A NUL-padded name of the datapath's (a class's, an override's, the policy's source).
template <size_t N>
std::string name_of(const char (&n)[N]) {
  return std::string(n, strnlen(n, N));
}

// Read a compiled slot back (status, show): class i's operator-facing view.
ClassSpec class_of(const lv_class& c);

}  // namespace levee
