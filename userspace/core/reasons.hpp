// reasons.hpp - names of the datapath's verdict reasons, as printed and exported.
#pragma once

#include <array>
#include <string_view>

#include "levee_abi.h"

namespace levee {

struct ReasonInfo {
  unsigned id;
  std::string_view name;
  std::string_view help;  // what it means, for the reference: CLI.md's table is generated from it
};

// Every reason the datapath can count, in ABI order. Reserved ids are absent.
inline constexpr std::array kReasons{
    ReasonInfo{LV_R_CONFORMING, "conforming", "within its source's limit"},
    ReasonInfo{LV_R_NOT_IP, "not_ip", "not IPv4/IPv6 (ARP, LLDP, ...): never limited"},
    ReasonInfo{LV_R_ALLOW, "allow", "on the allow list: never limited"},
    ReasonInfo{LV_R_MONITORED, "monitored",
               "would have been dropped, passed because its class is in monitor mode (`would_drop` says why)"},
    ReasonInfo{LV_R_PROXIED, "proxied",
               "an ACK that returned a valid cookie (`syn_auth`, proxy mode), of a connection the host does not "
               "have yet: levee's tc program hands it to the listener (`syn_handoffs` counts how that went); its "
               "source is known-good when the ACK also echoed levee's timestamp"},
    ReasonInfo{LV_R_RETRIED, "retried",
               "the SYN a client retried after its RST returned a valid cookie (`syn_auth`, reset mode): passed "
               "once to the listener, without state"},
    ReasonInfo{LV_R_OPENING, "opening",
               "TCP of a connection the host is opening (the listener answered its SYN), of a source that has not "
               "proved its address (`syn_auth`): passed without state, the stack checks it"},
    ReasonInfo{LV_R_RATE, "rate", "over its source's packet limit"},
    ReasonInfo{LV_R_MALFORMED, "malformed",
               "truncated frame (also a runt padded with zeros: an 802.3 length too short for LLC or beyond the "
               "frame), or an IPv4/IPv6 header that is inconsistent (version, IHL, total or payload length beyond "
               "the frame)"},
    ReasonInfo{LV_R_VLAN_DEPTH, "vlan_depth", "more than two VLAN tags: not parsed, so not let through unlimited"},
    ReasonInfo{LV_R_MAP_FULL, "map_full", "the kernel could not create state for a new source"},
    ReasonInfo{LV_R_CONTENDED, "contended",
               "a source's state changed under this packet four times in a row (fails closed)"},
    ReasonInfo{LV_R_DENY, "deny", "on the deny list"},
    ReasonInfo{LV_R_BYTES, "bytes", "over its source's byte limit"},
    ReasonInfo{LV_R_EXT_DEPTH, "ext_depth",
               "more IPv6 extension headers than levee walks, or a TCP header deeper in the frame than SYN "
               "authentication reads: not parsed, so not let through"},
    ReasonInfo{LV_R_BAN, "ban", "its source is banned for going over its limit"},
    ReasonInfo{LV_R_ADMISSION, "admission",
               "a new source over its class's new-source budget (its own, or the autopilot's): no state created"},
    ReasonInfo{LV_R_NETWORK, "network", "over the limit of its enclosing network (`network` in the class)"},
    ReasonInfo{LV_R_CLASS_LIMIT, "class_limit", "over the limit of its class as a whole (`total` in the class)"},
    ReasonInfo{LV_R_NEWCOMER, "newcomer",
               "a source admitted on probation while its class was not calm, over the allowance such sources share "
               "while the class's autopilot is engaged"},
    ReasonInfo{LV_R_ESCALATED, "escalated", "its network was escalated by the autopilot: over that network's limit"},
    ReasonInfo{LV_R_CHALLENGED, "challenged",
               "a SYN of a source that has not proved its address (not known-good) in a class with `syn_auth`, "
               "answered by levee with a SYN-ACK that carries a cookie (`XDP_TX`): the stack never sees it"},
    ReasonInfo{LV_R_UNVERIFIED, "unverified",
               "TCP of a source that has not proved its address (`syn_auth`): not a SYN, no valid cookie, no "
               "connection the host has"},
    ReasonInfo{LV_R_VERIFIED, "verified",
               "a RST that returned a valid cookie (`syn_auth`, reset mode): the SYN its client retries may pass, "
               "once; it proves nothing more (any host resets a SYN-ACK it did not ask for), and the RST goes no "
               "further"},
    ReasonInfo{LV_R_ANSWER_LIMIT, "answer_limit",
               "a SYN left unanswered (`syn_auth`): SYN-ACKs towards its network, or in all, over their rate"},
    ReasonInfo{LV_R_CROWDSEC, "crowdsec",
               "its source is under a CrowdSec ban decision (`[crowdsec]`, pulled by `levee run`); checked after the "
               "allow and deny lists"},
    ReasonInfo{LV_R_MARTIAN, "martian",
               "a SYN no stack answers (`syn_auth`): from or to an address or MAC that is not unicast, or to an "
               "address this host neither owns nor forwards"},
    ReasonInfo{LV_R_NO_LISTENER, "no_listener", "a SYN to a port of this host without a listener (`syn_auth`)"},
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
