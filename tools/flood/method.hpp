// method.hpp - choosing how to send: the live-frames sender when it loads and its probe
// frames reach the peer, else (with --method auto) the packet method.
//
// The probe is a real call of the live sender: its frames and the time it took count in
// the run's outcome.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "device.hpp"
#include "options.hpp"
#include "run.hpp"

namespace levee::flood {

struct Method {
  std::string name;                  // "live" or "packet"
  std::unique_ptr<LiveSender> live;  // set when name is "live"
  uint64_t probe_packets = 0;        // the probe's frames, sent already
  int64_t probe_ns = 0;              // how long the probe's call took
};

// Picks the method for the options, loads and probes the live sender, falls back to
// packet (with a warning) unless --method live insists. stats_before is read again when
// the probe's frames vanished (they do not count). Throws std::runtime_error.
Method choose_method(const Options& o, const FloodSpec& spec, const RunPlan& plan, const Device& dev,
                     std::optional<LinkStats>& stats_before);

}  // namespace levee::flood
