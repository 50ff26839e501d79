// lock.hpp - one controller at a time changes an interface.
//
// An exclusive flock on /run/levee/<iface>.lock, held for the duration of a change
// (attach, set, detach). The kernel drops it if the holder dies, so a killed command
// never leaves a stale lock. Readers (stats, status) do not take it.
#pragma once

#include <chrono>
#include <string>

#include "core/fd.hpp"
#include "core/result.hpp"

namespace levee {

inline constexpr const char* kLockDir = "/run/levee";

// What levee run's CrowdSec publisher last reported, /run/levee/<iface>.publish (JSON),
// for `levee status`: written whole (a rename) when it changes, removed when it stops.
inline std::string publish_state_path(const std::string& iface) {
  return std::string(kLockDir) + "/" + iface + ".publish";
}
// The same of its CrowdSec bouncer, /run/levee/<iface>.crowdsec: how its pulls go.
inline std::string bouncer_state_path(const std::string& iface) {
  return std::string(kLockDir) + "/" + iface + ".crowdsec";
}

// The SYN cookies' keys a detach leaves for the next attach, /run/levee/<iface>.cookies
// (datapath/cookie_file.hpp).
inline std::string cookie_keys_path(const std::string& iface) {
  return std::string(kLockDir) + "/" + iface + ".cookies";
}

class IfaceLock {
 public:
  // Waits up to `patience` for another controller to finish, then gives up with an
  // error naming the holder's pid.
  static Result<IfaceLock> acquire(const std::string& iface,
                                   std::chrono::milliseconds patience = std::chrono::seconds(10));
  // The lock `levee run` holds for its whole life, /run/levee/<iface>.daemon: a second
  // daemon for the interface is refused at once, naming the first one's pid.
  static Result<IfaceLock> daemon(const std::string& iface);

 private:
  explicit IfaceLock(Fd fd) : fd_(std::move(fd)) {}
  Fd fd_;
};

}  // namespace levee
