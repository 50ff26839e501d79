// policy.hpp - what an operator asks levee to do on an interface: classes, limits,
// lists, overrides and the attachment's settings.
//
// A Policy comes from a config file (policy/config.hpp) or from the command line's
// --rate/--burst shorthand (one_class_policy). validate() (policy/validate.hpp) finds
// everything that can be wrong with it before anything is written to the kernel;
// compile() (policy/compile.hpp) turns it into what the datapath reads.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/iface.hpp"
#include "core/result.hpp"
#include "levee_abi.h"
#include "policy/cidr.hpp"
#include "policy/crowdsec.hpp"
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
  std::vector<Proto> protos;      // any of these; empty: any protocol
  std::vector<PortRange> ports;   // destination port in any range; empty: any port
  bool syn = false;               // TCP with SYN and without ACK only
  std::vector<PortRange> sports;  // source port in any range (never with ports); empty: any

  bool empty() const { return protos.empty() && ports.empty() && sports.empty() && !syn; }
  bool ported() const { return !ports.empty() || !sports.empty(); }
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

inline constexpr uint64_t kSecondNs = LV_NSEC_PER_SEC;
inline constexpr uint64_t kDayNs = 24 * kHourNs;

// The bounds of [auto]'s counts (validate.cpp has those of its durations).
inline constexpr uint64_t kMaxAutoFloor = 10'000'000;  // as new_sources
inline constexpr uint64_t kMaxAutoMargin = 1'000;
inline constexpr uint64_t kMaxNetworkSources = 1'000'000;

// The autopilot's settings ([auto]), one set for the whole interface (struct lv_auto
// says what the datapath does with them; docs/CONFIG.md, "Autopilot", why). Every class
// carries a copy (ClassSpec::autop), so a class compiles and reads back on its own.
struct AutoSpec {
  // New sources per second the threshold never goes below, however quiet the class
  // was: a class that learnt 2 arrivals/s must not find its tenth client in a second
  // abnormal. 1000/s is more than most servers see arrive, little for a flood.
  uint64_t floor = 1000;
  // The threshold is this many times the learnt arrivals per second: 4x takes a busy
  // hour's or a deploy's reconnections in its stride without engaging.
  uint64_t margin = 4;
  // The threshold's tolerance: a tenth of a second of its rate (100 arrivals at the
  // floor) at once are still normal. More would let a spoofed flood plant as many
  // ordinary sources in its first millisecond, before anything is abnormal; a storm of
  // reconnections larger than it goes on probation, not refused.
  uint64_t burst_ns = 100 * kNsPerMs;
  // Abnormal arrivals this long engage the class: long enough that a spike stays on
  // probation, short enough that a flood is refused within a quarter of a second.
  uint64_t sustain_ns = 250 * kNsPerMs;
  // Calm again after this long without an abnormal arrival (or, for an escalated
  // network, a refused packet): 30 s outlasts the pauses of a pulsed flood.
  uint64_t release_ns = 30 * kSecondNs;
  // A source's network, as the escalation watches it: a /16 (IPv4), what one provider
  // or hosting customer commonly holds, or a /48 (IPv6), one site: a flood of random
  // IPv6 sources spread over a provider's /32 then escalates nothing that holds clients
  // beside it. At most the class's prefix.
  unsigned network_prefix4 = 16;
  unsigned network_prefix6 = 48;
  // A network's limit: this many sources' worth of the class's per-source packet limit
  // (rate x 64, burst x 64). 64 busy clients behind one network pass; a flood spread
  // over a network's addresses, each within its own limit, does not.
  uint64_t network_sources = 64;
  // An explicit network limit instead (network_rate, network_burst): network_sources
  // does not apply then, and a class without a packet limit may escalate too.
  std::optional<Rate> network_rate;
  // For the daemon (not compiled into the class): a source that behaved this long is
  // marked known-good, and the mark lasts this long. A minute is longer than a spoofed
  // packet's life; a day covers a client's daily return.
  uint64_t known_good_after_ns = 60 * kSecondNs;
  uint64_t known_good_for_ns = kDayNs;
  Where where;  // the [auto] table, for errors

  bool operator==(const AutoSpec& o) const;  // the settings, not where they were given
  bool network_rate_set() const { return network_rate && network_rate->set(); }
};

// A class's admission of new sources (new_sources): the autopilot ("auto", the
// default), none ("off"), or an operator's budget (a number: ClassSpec::new_sources).
enum class Admission : uint8_t { Auto, Off, Budget };
const char* admission_name(Admission a);  // "auto", "off", "budget"

enum class SynAuth { Off, Cookie, Proxy, Reset, Auto };

struct Policy;
// Whether some class of the policy has SYN authentication.
bool has_syn_auth(const Policy& p);

// [syn_auth]: what SYN authentication may answer (struct lv_answer). SYN-ACKs towards one
// network (/answer_prefix4, /answer_prefix6) share answer_rate: that keeps a flood
// spoofing one victim's network from turning levee into its hose, and 1,000 new
// connections a second from one /24 is more than a carrier-grade NAT sends one server.
// answer_cap is all of them together, divided among the CPUs: far above what a host
// answers, so that it is never what locks clients out of a flood of random sources.
// known_good_per_network bounds the known-good marks one of those networks makes in an
// ageing of the known-good filter (lv_answer.marks_per_network, bpf/shared/syn_cells.h), so that
// one /48's 65,536 /64s cannot fill the filter that remembers everyone: 256 is more
// clients than one /24 or /48 usually brings one server in a day. 0: no bound.
inline constexpr uint32_t kDefaultKnownGoodPerNetwork = 256;
struct SynAuthSpec {
  Rate per_network{1'000, 100};
  unsigned prefix4 = 24;
  unsigned prefix6 = 48;
  uint64_t cap = 5'000'000;
  uint32_t marks_per_network = kDefaultKnownGoodPerNetwork;
  // For the check of answer_rate against answer_cap: the key of the two the file gave
  // (answer_rate first), else the table.
  Where where;
  bool operator==(const SynAuthSpec& o) const {
    return per_network == o.per_network && prefix4 == o.prefix4 && prefix6 == o.prefix6 && cap == o.cap &&
           marks_per_network == o.marks_per_network;
  }
};

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

  // The autopilot: how the class admits new sources (new_sources), whether it escalates
  // networks that flood (escalate), and the interface's [auto] settings it does it with.
  Admission admission = Admission::Auto;  // Budget: new_sources is the budget
  bool escalate = true;                   // escalate = "auto"
  AutoSpec autop;

  // syn_auth: a TCP source with no state proves its address with a SYN cookie before it
  // gets any (bpf/synauth.h). "proxy" hands the proven connection to the local listener
  // at once (levee's tc program); "reset" has the client prove it with a RST and
  // connect again a second later, and works for a listener anywhere; "cookie" is proxy
  // where the kernel allows it, else reset. "auto" is "cookie" while the class's
  // autopilot is engaged, for sources without state only, and nothing while it is calm
  // (bpf/syn_auto.h). Unset, it is "auto" where the class can take it, else "off"
  // (syn_auth_in_force()); an explicit value is checked (validate()).
  SynAuth syn_auth = SynAuth::Auto;
  bool syn_auth_given = false;  // the file named it

  // syn_auth as the file gave it (any value but the default's "auto" counts as given).
  bool syn_auth_explicit() const { return syn_auth_given || syn_auth != SynAuth::Auto; }
  // Every packet of a TCP connection falls into the class (as far as its own match
  // says): it takes TCP, and neither by SYN nor by source port.
  bool takes_whole_tcp() const;
  // The mode compiled: an explicit one as given; unset, "auto" where the class takes
  // whole TCP connections and admits new sources by the autopilot, else "off".
  SynAuth syn_auth_in_force() const;

  // A limit on each source's packets or bytes (what a ban needs to be triggered).
  bool per_source_limited() const { return packets.set() || bytes.set(); }

  // The admission the class gets: a budget whenever new_sources is set (an explicit
  // budget wins over the mode), none for Budget without one (`levee set --new-sources
  // off`).
  Admission admission_in_force() const {
    if (new_sources.set()) return Admission::Budget;
    return admission == Admission::Auto ? Admission::Auto : Admission::Off;
  }

  // Is the network watch in force? It needs a network's limit: the class's per-source
  // packet limit (network_sources of it) or an explicit network_rate. A class with
  // escalate on and neither compiles without it; that is not an error.
  bool escalates() const { return escalate && (packets.set() || autop.network_rate_set()); }
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
  AutoSpec autop;                // [auto] as the file gave it (also in every class), for the daemon
  SynAuthSpec syn_auth;          // [syn_auth]
  CrowdsecSpec crowdsec;         // [crowdsec]: levee run's bouncer (the filter's policy ignores it)
};

// The --rate/--burst shorthand: one default class.
Policy one_class_policy(const Limits& l);

// A NUL-padded name of the datapath's (a class's, an override's, the policy's source).
template <size_t N>
std::string name_of(const char (&n)[N]) {
  return std::string(n, strnlen(n, N));
}

}  // namespace levee
