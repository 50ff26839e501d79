#include "cli/orphaned.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "datapath/pins.hpp"

namespace levee::cli {

void warn_if_orphaned(const Pinned& p) {
  if (!orphaned(p)) return;
  fmt::print(stderr,
             "levee: warning: {0}'s filter is orphaned: the interface it was attached to is gone and nothing is "
             "filtered; what follows is what its maps still hold (clear with: levee detach {0}, then attach it "
             "again)\n",
             p.iface);
}

void warn_if_orphaned(const std::string& iface) {
  if (auto p = open_pinned(iface)) warn_if_orphaned(*p);
}

}  // namespace levee::cli
