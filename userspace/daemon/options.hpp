// options.hpp - what `levee run` was started with: the daemon's options, apart from the
// daemon (daemon.hpp), so that the steps it calls (reload, attachment, maintenance)
// depend on them and not on the daemon above them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "levee_abi.h"

namespace levee {

struct DaemonOptions {
  std::string iface;                                        // from the command line, or the config's [interface] name
  std::string config;                                       // the policy file
  std::optional<lv_attach_mode> mode;                       // --mode (attach only; the config's otherwise)
  std::optional<std::pair<std::string, uint16_t>> metrics;  // host, port
  std::string events_path;                                  // "": stdout
  bool detach_on_exit = false;
  uint64_t prune_every_ns = 30ull * 1'000'000'000;
  uint64_t idle_ns = 10ull * 60 * 1'000'000'000;  // 0: the walk only counts
};

}  // namespace levee
