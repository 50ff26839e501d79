// render_show.hpp - `levee show`: what levee knows of one address (its list entry, and
// in each class its state, on probation too, its network's, its bans, its known-good
// mark and its network as the autopilot watches it), and what the limiter would do with
// its next packet, computed with bpf/shared/limiter.h, as text or JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "datapath/inspect.hpp"

namespace levee {

// What the limiter would do now with a state under limits: tokens (packet limit only),
// byte tokens (byte limit only) and the wait until its next packet would pass (the
// later of the two limits; 0: now). `levee top` shows the same for its rows.
struct ShowLimiter {
  std::optional<uint64_t> tokens;       // packets it could send at once (packet limit only)
  std::optional<uint64_t> byte_tokens;  // bytes likewise (byte limit only)
  uint64_t wait_ns = 0;                 // until its next packet would pass; 0: now
};
ShowLimiter limiter_view(const lv_state& s, const lv_limit& pkt, const lv_limit& bytes, uint64_t now_ns);

// For each class the address has state in: its own state under the limits that apply.
ShowLimiter show_limiter(const ShowClass& c);
// Its state on probation under the same limits (an empty view without one).
ShowLimiter show_probation_limiter(const ShowClass& c);
// Its network's state as the limiter sees it (the class's network limits), if known.
std::optional<ShowLimiter> show_network_limiter(const ShowClass& c);
// The ban that applies to the address in a class: the class's record or the
// every-class one, whichever bans now (the one ending later), else the class's, else
// the every-class one; nullptr if neither exists.
const lv_ban* show_ban(const ShowClass& c);
// The class's key as the datapath builds it: the address masked to the class prefix.
std::string show_source(const ShowResult& r, const ShowClass& c);

// JSON field names are a contract (README, "levee show").
nlohmann::json show_json(const std::string& iface, const ShowResult& r, uint64_t now_unix_ns);
std::string show_text(const std::string& iface, const ShowResult& r, uint64_t now_unix_ns);

}  // namespace levee
