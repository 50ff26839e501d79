// tc_filter.hpp - levee's tc filter among the filters of an interface's clsact hook: what
// the hook holds (a netlink dump), where levee's filter can go without touching anyone
// else's, and whether the filter at a place is levee's.
//
// libbpf's bpf_tc_* calls name one filter by its handle and priority; they cannot list a
// hook. Listing is what levee needs to pick a free place (another tool's filter may sit
// at any handle and priority; a priority taken by another kind of filter, or by a cls_bpf
// filter of another protocol, refuses every filter of ours), and to know whether a clsact
// hook levee created holds anything but levee's filter before it removes the hook.
#pragma once

#include <bpf/libbpf.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace levee {

// One entry of a hook's dump: a filter, or (handle 0) the head of a priority's filters.
struct TcFilter {
  uint32_t chain = 0;
  uint16_t priority = 0;
  uint16_t protocol = 0;  // host order (ETH_P_ALL: every protocol)
  uint32_t handle = 0;
  std::string kind;      // "bpf", "u32", "flower", ...
  uint32_t prog_id = 0;  // a cls_bpf filter's program
};

// Every entry of the interface's clsact ingress (or egress) hook, all chains; empty when
// the interface has no clsact qdisc.
Result<std::vector<TcFilter>> list_tc_filters(unsigned ifindex, bool ingress);

// Where levee puts its filter: the lowest priority from 1 whose filters of chain 0 are
// all cls_bpf of every protocol (a priority holds filters of one kind and protocol, so
// any other there refuses ours), and there the first handle from kTcHandle on that no
// filter has. nullopt when none of the first kTcPriorities is usable.
struct TcPlace {
  uint32_t handle = 0;
  uint16_t priority = 0;
  bool operator==(const TcPlace&) const = default;
};
inline constexpr uint32_t kTcHandle = 0x1ee;
inline constexpr uint16_t kTcPriorities = 64;
inline constexpr uint32_t kTcHandles = 256;
std::optional<TcPlace> free_tc_place(const std::vector<TcFilter>& filters);

// libbpf's names for the clsact ingress hook and one filter of it.
bpf_tc_hook tc_ingress_hook(unsigned ifindex);
bpf_tc_opts tc_filter_opts(TcPlace place);

// The id of the program in the cls_bpf filter at `place` of the ingress hook, 0 if none.
uint32_t tc_prog_id_at(unsigned ifindex, TcPlace place);

// A program's id and name from its fd (0 and "" if it cannot be read).
struct ProgIdentity {
  uint32_t id = 0;
  std::string name;
};
ProgIdentity prog_identity(int prog_fd);
ProgIdentity prog_identity_of_id(uint32_t id);

}  // namespace levee
