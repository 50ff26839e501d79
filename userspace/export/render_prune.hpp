// render_prune.hpp - `levee prune`: what one prune removed and kept, as text or JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "datapath/prune.hpp"

namespace levee {

// As docs/JSON.md describes `levee prune` (a test holds it to that).
nlohmann::json prune_json(const std::string& iface, uint64_t idle_ns, const PruneResult& r);
std::string prune_text(const std::string& iface, uint64_t idle_ns, const PruneResult& r);

}  // namespace levee
