// error_fold.hpp - the errors a thread of levee run says (the CrowdSec bouncer's pulls,
// the publisher's requests), folded so that a Local API that stays down does not fill the
// journal, yet nothing is kept back: a new error, or the first after a success, is said at
// once; the same error again within `window` of its last saying is only counted; when it
// comes after the window it is said again, with how many times it came meanwhile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace levee::daemon {

inline constexpr uint64_t kErrorFoldWindowNs = 10ull * 60 * 1'000'000'000;

class ErrorFold {
 public:
  explicit ErrorFold(uint64_t window_ns = kErrorFoldWindowNs) : window_ns_(window_ns) {}
  // The line to say for `message` at `now_ns` (any monotonic clock), or nothing: folded.
  std::optional<std::string> error(const std::string& message, uint64_t now_ns);
  // A success: true if it ends errors (the caller says so); the next error is new.
  bool recovered();
  bool failing() const { return !last_.empty(); }

 private:
  uint64_t window_ns_;
  std::string last_;  // the error said last ("": none since a success)
  uint64_t said_ns_ = 0;
  uint64_t folded_ = 0;  // times it came since it was said
};

}  // namespace levee::daemon
