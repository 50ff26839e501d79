#include "datapath/session.hpp"

#include <utility>

#include "datapath/kernel.hpp"
#include "levee_abi.h"

namespace levee {

Result<Session> Session::open(const std::string& iface, std::string_view action) {
  LV_TRY(preflight(action));
  LV_TRY_ASSIGN(auto lock, IfaceLock::acquire(iface));
  LV_TRY_ASSIGN(auto p, open_pinned(iface));
  LV_TRY(refuse_orphaned(p));  // a change to it would succeed and filter nothing
  LV_TRY_ASSIGN(auto pm, map_pinned_policy(p));
  LV_TRY_ASSIGN(auto sh, SharedMap::map(p.shared.get()));
  return Session{std::move(lock), std::move(p), std::move(pm), std::move(sh)};
}

uint32_t Session::max_sources() const {
  const uint32_t n = map_max_entries(pins.state.get());
  return n ? n : LV_DEFAULT_MAX_SOURCES;
}

}  // namespace levee
