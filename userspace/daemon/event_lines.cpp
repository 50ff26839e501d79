#include "daemon/event_lines.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "daemon/log.hpp"

namespace levee::daemon {
namespace {

// write(2) until the whole line is out; the errno of the failure otherwise, with what
// went out in `done`.
int write_all(int fd, std::string_view line, size_t& done) {
  done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return n < 0 ? errno : ENOSPC;  // 0 bytes taken: no room
    }
  }
  return 0;
}

}  // namespace

bool EventLines::write(int fd, std::string_view line) {
  struct stat st {};
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  size_t done = 0;
  const int err = write_all(fd, line, done);
  if (err == 0) {
    if (dropped_)
      say(iface_, "writing events again; {} event{} could not be written and {} lost", dropped_,
          dropped_ == 1 ? "" : "s", dropped_ == 1 ? "is" : "are");
    dropped_ = 0;
    return true;
  }
  // A part of the line went out: take it back (levee run is the file's only writer;
  // O_APPEND put it at the end, where st_size was).
  if (done && regular) (void)!ftruncate(fd, st.st_size);
  if (dropped_++ == 0)
    say(iface_,
        "cannot write events: {}; dropping them (counted in levee_events_dropped_total) until they can be "
        "written, filtering goes on",
        std::strerror(err));
  return false;
}

}  // namespace levee::daemon
