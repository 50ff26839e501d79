// daemon.hpp - `levee run`: one interface's filter kept by a foreground process.
//
// Start: the config is read and checked, the daemon's lock taken (one `levee run` per
// interface), the metrics address bound and the events file opened — all before the
// kernel is touched, so a start that fails changes nothing. Then the interface is
// attached from the config, or, when levee's pins are already there (a restart, an
// upgrade, a daemon killed with -9), adopted: the config is reloaded into the pinned
// maps with `levee reload`'s atomic flip, and every per-source bucket, ban and counter
// stays as it was.
//
// Running: the datapath's events go out as JSON lines; every prune_every the map is
// walked once (idle state pruned, the known-source filter refreshed, sources and bans
// counted for the gauges); SIGHUP reopens the events file (logrotate), then reloads the
// config (a bad file changes nothing and is reported, the daemon keeps going).
//
// Stop (SIGTERM, SIGINT): the filter stays attached, pinned, still dropping, unless
// detach_on_exit. A `levee detach` by someone else ends the daemon too (exit 0: the
// operator's choice, which systemd's Restart=on-failure respects).
//
// Changes race nothing: the daemon's reloads and prunes take the interface's lock like
// every CLI command, so `levee set` or `levee deny add` meanwhile are serialised.
//
// daemon.cpp holds the start, the loop and the stop; the steps it calls are files of
// their own: reload.* (attach or adopt, SIGHUP's reload), attachment.* (the filter
// kept in place: pinned again after bpffs, attached again after the interface),
// maintenance.* (the walk), metrics_server.* (the endpoint), health.* (what the loop
// records for it), event_lines.* (the events file, whole lines or counted drops),
// log.hpp (the lines for the operator). The steps take the daemon's options from
// options.hpp, not from this file.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "core/result.hpp"
#include "daemon/options.hpp"

namespace levee {

// Runs until SIGTERM/SIGINT (returns success) or a fatal error.
Status run_daemon(const DaemonOptions& o);

// "9740", ":9740", "127.0.0.1:9740", "[::1]:9740", "0.0.0.0:9740": a host (default
// 127.0.0.1: metrics are private unless asked) and a port.
Result<std::pair<std::string, uint16_t>> parse_listen_address(const std::string& text);

}  // namespace levee
