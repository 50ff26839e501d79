// senders.hpp - running the sender threads: the run plan, the signals only the main
// thread takes, and the threads of the chosen method with what they did summed.
#pragma once

#include "method.hpp"
#include "options.hpp"
#include "run.hpp"

namespace levee::flood {

// How long, how fast and on which CPUs; warns when threads must share CPUs.
RunPlan make_plan(const Options& o, int ifindex);

// Signals go to the main thread only (the senders block them: a signal would cut a
// live-frames call short and its frames could not be counted).
void block_stop_signals();

// Sends the rest of plan.count (the probe's frames are sent already) with the method's
// threads while the main thread waits for SIGINT/SIGTERM; the probe's frames and call
// time count in the outcome. Throws std::runtime_error (packet socket checks).
Outcome send_flood(const FloodSpec& spec, const RunPlan& plan, const Method& m);

}  // namespace levee::flood
