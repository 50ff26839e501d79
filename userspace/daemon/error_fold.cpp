#include "daemon/error_fold.hpp"

#include <fmt/format.h>

#include "export/render_units.hpp"

namespace levee::daemon {

std::optional<std::string> ErrorFold::error(const std::string& message, uint64_t now_ns) {
  if (message != last_) {
    last_ = message;
    said_ns_ = now_ns;
    folded_ = 0;
    return message;
  }
  if (now_ns - said_ns_ < window_ns_) {
    ++folded_;
    return std::nullopt;
  }
  std::string line = folded_ ? fmt::format("{} (again; {} more time{} in the last {})", message, folded_,
                                           folded_ == 1 ? "" : "s", format_remaining(now_ns - said_ns_))
                             : message;
  said_ns_ = now_ns;
  folded_ = 0;
  return line;
}

bool ErrorFold::recovered() {
  const bool was = !last_.empty();
  last_.clear();
  folded_ = 0;
  return was;
}

}  // namespace levee::daemon
