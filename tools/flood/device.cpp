// device.cpp - finding the interface to send on and checking the frame fits (device.hpp).
#include "device.hpp"

#include <net/if.h>

#include <stdexcept>
#include <string>

namespace levee::flood {

Device open_device(const Options& o, size_t size) {
  if (!o.netns.empty()) enter_netns(o.netns);
  Device d;
  d.ifindex = static_cast<int>(if_nametoindex(o.dev.c_str()));
  if (!d.ifindex) throw std::runtime_error("no interface " + o.dev + (o.netns.empty() ? "" : " in netns " + o.netns));
  auto link = get_link(d.ifindex);
  if (!link) throw std::runtime_error("cannot read interface " + o.dev + " over rtnetlink");
  d.link = *link;
  if (!(d.link.flags & IFF_UP)) warn(o.dev + " is down: nothing will arrive");
  d.peer = get_peer(d.link);
  size_t max_size = (d.link.mtu ? d.link.mtu : 1500) + 14 + (o.vlan >= 0 ? 4 : 0);
  if (size > max_size)
    throw std::runtime_error("--size " + std::to_string(size) + " exceeds the MTU of " + o.dev + " (at most " +
                             std::to_string(max_size) + " bytes)");
  return d;
}

}  // namespace levee::flood
