// reload.hpp - `levee run`'s policy in the kernel: at the start the interface is attached
// from the config, or its pinned filter adopted (the config reloaded into it, every
// bucket, ban and counter kept); on SIGHUP the config is reloaded, and a bad file changes
// nothing. Each says what it did, and what a reload left out, as `levee reload` does.
#pragma once

#include "core/result.hpp"
#include "daemon/health.hpp"
#include "daemon/options.hpp"
#include "policy/policy.hpp"

namespace levee::daemon {

Status start_filter(const DaemonOptions& o, Policy p);

// The config reloaded into the running filter, recorded in `health`; false if it failed
// (said, and the running policy is unchanged). `autop`, if given, gets the file's
// autopilot settings on success (the daemon's own: known-good sources), `crowdsec` its
// [crowdsec] (the daemon's bouncer).
bool reload_config(const DaemonOptions& o, Health& health, AutoSpec* autop = nullptr, CrowdsecSpec* crowdsec = nullptr);

}  // namespace levee::daemon
