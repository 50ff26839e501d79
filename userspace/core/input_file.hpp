// input_file.hpp - every file levee reads (the config, the CrowdSec key and password
// files, a blocklist, levee's own state files, /proc and /sys) is read here, and never
// waited on.
//
// open(2) of a FIFO waits for a writer, and read(2) of a FIFO, a socket or a terminal
// waits for whatever may never come: a FIFO given as the CrowdSec key file held levee
// run's main loop until the next signal. So a file is opened with O_NONBLOCK (open
// returns at once whatever it is), then fstat(2) decides: a regular file is read whole,
// up to its cap; anything else is refused in one line naming what it is, before a byte
// is read. Only a caller that means to read a pipe (`levee deny import`, which takes a
// pipe or standard input) allows one, and waits at most `pipe_wait` for each part of it:
// a FIFO with no writer, or a writer that stalls, ends the read with an error.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace levee {

// /proc and /sys files levee reads (meminfo, a sysctl, an interface's MTU) are a few
// KiB at most.
inline constexpr size_t kMaxKernelFileBytes = size_t{1} << 20;

struct InputRules {
  std::string_view what;            // "the config file", as messages name it
  size_t max_bytes = 0;             // larger is refused whole
  std::string hint;                 // what to give instead, for every refusal
  std::string too_large_hint = {};  // for a file over max_bytes, if not `hint`
  bool pipes = false;               // a pipe or FIFO is read too (with pipe_wait)
  bool usage = true;                // a file that cannot be opened or read: exit 2 (else 1)
  std::chrono::milliseconds pipe_wait{30'000};
};

struct InputFile {
  std::string text;
  mode_t mode = 0;  // st_mode of what was read (a secret refuses o+r)
};

// `path` read whole by the rules, or one error: it cannot be opened ("PATH: cannot open
// the config file: No such file or directory"), is not a regular file ("PATH: the
// config file is a FIFO, not a regular file"), is larger than max_bytes, or (a pipe)
// sent nothing for pipe_wait.
Result<InputFile> read_input(const std::string& path, const InputRules& rules);

// The same from a descriptor already open (standard input for `-`), named `name` in
// messages; it is neither closed nor changed (its flags are shared with other processes).
Result<InputFile> read_input_fd(int fd, const std::string& name, const InputRules& rules);

// "a directory", "a FIFO", "a socket", "a character device (a terminal?)", ...: what
// a file of mode `mode` is, for messages.
std::string_view file_kind(mode_t mode);

}  // namespace levee
