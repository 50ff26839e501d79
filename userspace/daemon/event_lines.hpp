// event_lines.hpp - the events file written one whole line at a time, and what happens
// when it cannot be: a disk that is full (or any write error) drops the event, counts
// it, and the daemon and the datapath go on; the first drop and the first line written
// after drops are said once each. A line the disk took only part of is cut off again,
// so a reader never finds half a JSON object, and the next line starts a line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace levee::daemon {

class EventLines {
 public:
  explicit EventLines(std::string iface) : iface_(std::move(iface)) {}
  // The line (with its newline) onto fd, whole or not at all; false if dropped.
  bool write(int fd, std::string_view line);

 private:
  std::string iface_;
  uint64_t dropped_ = 0;  // since the last line written
};

}  // namespace levee::daemon
