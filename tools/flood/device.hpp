// device.hpp - the interface levee-flood sends on: --netns entered, --dev found, its MTU
// checked against the frame size, and its veth peer (whose MAC and XDP program matter).
#pragma once

#include <cstddef>
#include <optional>

#include "netdev.hpp"
#include "options.hpp"

namespace levee::flood {

struct Device {
  int ifindex = 0;
  LinkInfo link;
  std::optional<LinkInfo> peer;  // nullopt: not a veth, or its peer cannot be seen
};

// Enters --netns and reads --dev and its peer; warns when --dev is down. Throws
// std::runtime_error (no such interface, `size` over its MTU).
Device open_device(const Options& o, size_t size);

}  // namespace levee::flood
