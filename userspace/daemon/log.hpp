// log.hpp - the lines `levee run` writes for the operator: stderr (the journal under
// systemd), one line each, prefixed with the interface. Events go to their own stream.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <utility>

namespace levee::daemon {

template <typename... Args>
void say(const std::string& iface, fmt::format_string<Args...> f, Args&&... args) {
  fmt::print(stderr, "levee run {}: {}\n", iface, fmt::format(f, std::forward<Args>(args)...));
  std::fflush(stderr);
}

}  // namespace levee::daemon
