// report.hpp - the outcome of a run: one line, or with --json one object, on stdout,
// then its warnings and errors on stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "options.hpp"
#include "run.hpp"
#include "spec.hpp"

namespace levee::flood {

// What was sent and how, beside the outcome.
struct RunSummary {
  const FloodSpec& spec;
  const FrameRequest& req;
  const RunPlan& plan;
  const std::string& method;        // "live" or "packet", as run
  std::optional<uint64_t> dropped;  // the interface's tx_dropped over the run
};

// Prints the outcome; returns the exit status (kExitError when a sender failed).
int report(const Options& o, const RunSummary& run, const Outcome& out);

}  // namespace levee::flood
