// show.cpp - `levee show IFACE ADDRESS`: what levee knows of one address.
#include <fmt/format.h>

#include "bpf/loader.hpp"
#include "cli/commands.hpp"
#include "export/format.hpp"

namespace levee::cli {

Status show(const ShowArgs& a) {
  auto r = levee::show(a.iface, a.address);  // checks the address before anything else
  if (!r) return r.error();
  const uint64_t now = Clocks::read().now_unix_ns;
  if (a.json)
    fmt::print("{}\n", show_json(a.iface, *r, now).dump());
  else
    fmt::print("{}", show_text(a.iface, *r, now));
  return {};
}

}  // namespace levee::cli
