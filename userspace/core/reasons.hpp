// reasons.hpp - names of the datapath's verdict reasons, as printed and exported.
#pragma once

#include <array>
#include <string_view>

#include "levee_abi.h"

namespace levee {

struct ReasonInfo {
  unsigned id;
  std::string_view name;
  std::string_view help;
};

// Every reason the datapath can count, in ABI order. Reserved ids are absent.
inline constexpr std::array kReasons{
    ReasonInfo{LV_R_CONFORMING, "conforming", "within its source's limit"},
    ReasonInfo{LV_R_NOT_IP, "not_ip", "not IPv4/IPv6 (ARP, LLDP, ...): never limited"},
    ReasonInfo{LV_R_ALLOW, "allow", "on the allow list: never limited"},
    ReasonInfo{LV_R_MONITORED, "monitored",
               "would have been dropped, passed because its class is in monitor mode (see would_drop)"},
    ReasonInfo{LV_R_PROXIED, "proxied",
               "an ACK that returned a valid cookie: its source is known-good, its connection handed to the "
               "listener (syn_auth, proxy mode)"},
    ReasonInfo{LV_R_RETRIED, "retried",
               "the SYN a client retried after its RST returned a valid cookie: passed once to the listener, without "
               "state (syn_auth, reset mode)"},
    ReasonInfo{LV_R_OPENING, "opening",
               "TCP of a connection the host is opening (the listener answered its SYN), of a source that has not "
               "proved its address: passed without state, the stack checks it (syn_auth)"},
    ReasonInfo{LV_R_RATE, "rate", "over its source's packet rate limit"},
    ReasonInfo{LV_R_MALFORMED, "malformed", "truncated or inconsistent Ethernet/VLAN/IP header"},
    ReasonInfo{LV_R_VLAN_DEPTH, "vlan_depth", "more than two VLAN tags"},
    ReasonInfo{LV_R_MAP_FULL, "map_full", "no state could be created for a new source"},
    ReasonInfo{LV_R_CONTENDED, "contended", "lost the per-source update race repeatedly"},
    ReasonInfo{LV_R_DENY, "deny", "on the deny list"},
    ReasonInfo{LV_R_BYTES, "bytes", "over its source's byte rate limit"},
    ReasonInfo{LV_R_EXT_DEPTH, "ext_depth",
               "more IPv6 extension headers than levee walks, or a TCP header deeper in the frame than SYN "
               "authentication reads"},
    ReasonInfo{LV_R_BAN, "ban", "its source is banned for going over its limit"},
    ReasonInfo{LV_R_ADMISSION, "admission",
               "a new source over its class's new-source budget (its own, or the autopilot's)"},
    ReasonInfo{LV_R_NETWORK, "network", "over the limit of its enclosing network (/24, /48, ...)"},
    ReasonInfo{LV_R_CLASS_LIMIT, "class_limit", "over the limit of its class as a whole"},
    ReasonInfo{LV_R_NEWCOMER, "newcomer",
               "a source admitted during an attack, over what such sources share while its class is engaged"},
    ReasonInfo{LV_R_ESCALATED, "escalated", "its network was escalated by the autopilot: over that network's limit"},
    ReasonInfo{LV_R_CHALLENGED, "challenged",
               "a SYN of a source that has not proved its address, answered by levee with a SYN-ACK carrying a cookie "
               "(syn_auth)"},
    ReasonInfo{LV_R_UNVERIFIED, "unverified",
               "TCP of a source that has not proved its address: no SYN, no valid cookie, no connection (syn_auth)"},
    ReasonInfo{LV_R_VERIFIED, "verified",
               "a RST that returned a valid cookie: the SYN its client retries may pass, once (syn_auth, reset "
               "mode)"},
    ReasonInfo{LV_R_ANSWER_LIMIT, "answer_limit",
               "a SYN left unanswered: SYN-ACKs towards its network, or in all, over their rate (syn_auth)"},
    ReasonInfo{LV_R_CROWDSEC, "crowdsec", "its source is under a CrowdSec ban decision ([crowdsec], levee run)"},
    ReasonInfo{LV_R_MARTIAN, "martian",
               "a SYN no stack answers: from or to an address or MAC that is not unicast, or to an address this host "
               "neither owns nor forwards (syn_auth)"},
    ReasonInfo{LV_R_NO_LISTENER, "no_listener", "a SYN to a port of this host without a listener (syn_auth)"},
};

// Whether monitor mode counts this reason as a would-be drop instead of dropping.
constexpr bool monitorable(unsigned reason) { return reason < 32 && ((LV_MONITORABLE >> reason) & 1u); }

// The name of an enum lv_handoff_result, as exported.
inline const char* handoff_result_name(unsigned r) {
  switch (r) {
    case LV_HO_HANDED:
      return "handed";
    case LV_HO_NO_LISTENER:
      return "no_listener";
    case LV_HO_REFUSED:
      return "refused";
    default:
      return "no_metadata";
  }
}

// The reasons lv_percpu.would can count: the monitorable ones, and the deny list's
// unless the policy drops it in monitor mode too ([lists] deny_in_monitor = "drop").
constexpr bool would_drop_reason(unsigned reason) { return monitorable(reason) || reason == LV_R_DENY; }

}  // namespace levee
