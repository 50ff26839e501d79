// syn_model.hpp - the reference of the SYN path: what levee must answer to a frame
// (tests/model/syn_frames.hpp makes them) in a TCP class with SYN authentication, and
// with what. Written from the rules, not from bpf/: RFC 9293 (a SYN is a SYN without
// RST, FIN or ACK; the data offset; the checksum over the pseudo-header; the options),
// RFC 7323 (window scale at most 14, timestamps), RFC 8200 (hop-by-hop first; a
// fragment is not a datagram), RFC 791/1122 (the header checksum; martian addresses)
// and levee's docs (CONFIG "SYN authentication", ARCHITECTURE "Judging a SYN",
// "Answering"): the verdict and reason, and for an answer every byte of the SYN-ACK:
// MACs swapped and tags kept, a bare IP header from the SYN's destination to its
// source, the ports swapped, SYN|ACK, the numbers (proxy: seq the cookie, ack the
// ISN + 1; reset: ack the cookie, seq its complement), window 65535, the options (proxy:
// levee's MSS, window scale 7, SACK permitted, timestamps, each only where the SYN
// offered it and the namespace's sysctls allow it, packed as Linux packs them), both
// checksums, and the frame cut to its end.
//
// The parse is the reference parser's (parse_model.hpp). The one thing the model does
// not compute is the cookie: a keyed MAC of the clock's period. For that, and only that,
// it asks a CookieOracle, which the callers build on the shared rule
// (bpf/shared/syncookie.h, itself checked against SipHash's published vectors in the
// unit tests): is this cookie good for this connection now, and is this TSval one levee
// gives it now. The cookie's option byte (an MSS index into the kernel's table, the
// window scale, SACK and timestamp bits) is written out here by hand.
//
// Where several rules refuse a SYN, its reason is the first of: flags and data offset
// (malformed), MACs and addresses (martian), the destination (martian, no_listener),
// the checksum (malformed); ARCHITECTURE's order. Last come the datagram's own faults a
// host's stack drops it for before TCP sees it: an IPv4 header checksum that is wrong,
// a fragment of a datagram not yet whole, a hop-by-hop header not first (malformed),
// and a source that is one of the host's own addresses (martian).
#pragma once

#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "parse_model.hpp"
#include "syn_frames.hpp"
#include "syncookie.h"

namespace levee::model {

// How levee answers a SYN to a listener of the host: by proxy (lv_control.handoff, a
// class not in reset mode) or by reset; the options the namespace turned off
// (LV_TCP_OFF_*), and levee's MSS per family.
struct SynSetting {
  bool proxy = false;
  uint32_t tcp_off = 0;
  uint16_t mss4 = 1460, mss6 = 1440;
};

struct CookieOracle {
  // The cookie's whole MAC if `cookie` is good for `in` now (its option byte as given).
  std::function<std::optional<uint64_t>(const lv_cookie_in& in, uint32_t cookie)> wide;
  // Is `tsval` a SYN-ACK timestamp levee gives now for the cookie whose MAC is `wide`?
  std::function<bool(uint64_t wide, uint32_t tsval)> tsval;
};

// Which rule decided.
enum class SynRule : uint8_t {
  Parse,
  OutsideGate,
  NotSyn,
  RstCookie,
  AckCookie,
  Flags,
  DataOffset,
  GroupMac,
  NotUnicast,
  NotOurs,
  NotOursLinkLocal,
  NoListener,
  Checksum,
  Ipv4HeaderChecksum,
  Fragment,
  HopByHopNotFirst,
  SourceIsHost,
  NoRoom,
  Answered,
  AnsweredAfterZeroMss,
  kCount
};
const char* rule_name(SynRule r);

// The SYN-ACK levee must send: `bytes` with the cookie's fields left for the program's
// (`seq_at`, `ack_at`, `tsval_at`: 0 where none), checked with the oracle.
struct SynAckPlan {
  Frame bytes;
  bool proxy = false;
  lv_cookie_in in{};
  uint8_t opts = 0;  // the cookie's option byte
  size_t l3 = 0, l4 = 0, tsval_at = 0;
  size_t syn_l4 = 0;  // where the SYN's TCP header was
};

struct SynExpect {
  uint32_t verdict = 0;  // XDP_*
  uint32_t reason = 0;   // LV_R_*
  SynRule rule = SynRule::Parse;
  bool decided = true;  // false: a guessed cookie (2^-23), whose fate depends on state
  size_t l4 = 0;        // where the TCP header is (0: the parse refused the frame)
  std::optional<SynAckPlan> answer;
};

SynExpect syn_expect(std::span<const uint8_t> f, const SynWorld& w, const SynSetting& s, const CookieOracle& o);
// "" when `out`, the frame the program sent, is the answer `plan` says; else the first
// difference.
std::string synack_differs(const SynAckPlan& plan, std::span<const uint8_t> out, const CookieOracle& o);

}  // namespace levee::model
