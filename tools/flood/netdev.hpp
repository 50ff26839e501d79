// netdev.hpp - what levee-flood asks the kernel about the interface it sends on.
//
// Everything goes through rtnetlink in the calling thread's network namespace (so it
// works after setns(), where /sys still shows the namespace it was mounted in).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "packet.hpp"

namespace levee::flood {

struct LinkStats {
  uint64_t tx_packets = 0;
  uint64_t tx_dropped = 0;
  uint64_t rx_packets = 0;
};

struct LinkInfo {
  int ifindex = 0;
  std::string name;
  std::string kind;  // "veth", ... ("" when the driver reports none)
  std::optional<pkt::Mac> mac;
  unsigned mtu = 0;
  unsigned flags = 0;  // IFF_*
  unsigned num_tx_queues = 0, num_rx_queues = 0;
  std::optional<int> link;          // IFLA_LINK: a veth's peer ifindex
  std::optional<int> link_netnsid;  // the peer's namespace, if not ours
  uint8_t xdp_attached = 0;         // XDP_ATTACHED_* (0 = none)
  LinkStats stats;
};

// Join /var/run/netns/NAME (or a path). Throws std::runtime_error.
void enter_netns(const std::string& name_or_path);

// RTM_GETLINK for one interface; with target_nsid, in that peer namespace.
// Returns nullopt if the kernel says there is no such link (or refuses).
std::optional<LinkInfo> get_link(int ifindex, std::optional<int> target_nsid = std::nullopt);

// The counters of one interface (get_link's stats); nullopt when it cannot be read.
std::optional<LinkStats> stats_of(int ifindex);

// Queues in use (ETHTOOL_GCHANNELS; rtnetlink reports only the allocated ones):
// {rx, tx}, nullopt if the driver does not say.
std::optional<std::pair<unsigned, unsigned>> active_queues(const std::string& dev);

// The veth peer of `self`, when it can be seen (nullopt otherwise).
std::optional<LinkInfo> get_peer(const LinkInfo& self);

pkt::Mac parse_mac(const std::string& s);  // throws std::invalid_argument
std::string format_mac(const pkt::Mac& m);

}  // namespace levee::flood
