// local_routes.hpp - the host's own addresses for SYN authentication (lv_local,
// bpf/syn_where.h): the local routes of the network namespace levee runs in, as the
// kernel's routing table "local" holds them (every address of every interface, and
// prefixes routed to the host as a whole: AnyIP), read with one netlink dump.
//
// The datapath answers a SYN only to the host's own addresses or to hosts it forwards
// to. `levee attach` writes them before the program runs, `levee run` follows them.
#pragma once

#include <vector>

#include "core/result.hpp"
#include "levee_abi.h"

namespace levee {

// The local routes (RTN_LOCAL in table RT_TABLE_LOCAL), IPv4 and IPv6, as lv_local keys
// (IPv4-mapped), sorted and without duplicates.
Result<std::vector<lv_local_key>> local_routes();

// Make the map lv_local (its descriptor) hold exactly `want`: what is new added, what is
// gone removed (additions first, so no address is missing in between). `want` sorted
// as local_routes() sorts it. The number of keys changed.
Result<size_t> sync_local(int map_fd, const std::vector<lv_local_key>& want);

}  // namespace levee
