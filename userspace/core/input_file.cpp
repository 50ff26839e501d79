#include "core/input_file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>

#include "core/fd.hpp"

namespace levee {
namespace {

constexpr size_t kChunk = 64 << 10;

std::string size_text(size_t bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  return bytes >= kMiB && bytes % kMiB == 0 ? fmt::format("{} MiB", bytes / kMiB) : fmt::format("{} bytes", bytes);
}

Error too_large(const std::string& name, const InputRules& r) {
  return usage_error(fmt::format("{}: {} is larger than {}", name, r.what, size_text(r.max_bytes)),
                     r.too_large_hint.empty() ? r.hint : r.too_large_hint);
}

// One read(2) into `out`; 0 at the end, -1 with errno on failure.
ssize_t read_some(int fd, std::string& out) {
  const size_t had = out.size();
  out.resize(had + kChunk);
  ssize_t n = 0;
  do {
    n = ::read(fd, out.data() + had, kChunk);
  } while (n < 0 && errno == EINTR);
  out.resize(had + static_cast<size_t>(n > 0 ? n : 0));
  return n;
}

Result<std::string> read_regular(int fd, const std::string& name, const InputRules& r, const struct stat& st) {
  // /proc and /sys say 0 and are read to their end like any other file.
  if (static_cast<uint64_t>(st.st_size) > r.max_bytes) return too_large(name, r);
  std::string text;
  for (;;) {
    const ssize_t n = read_some(fd, text);
    if (n < 0) return Error{fmt::format("{}: cannot read {}", name, r.what), errno, r.hint, r.usage};
    if (n == 0) return text;
    if (text.size() > r.max_bytes) return too_large(name, r);  // it grew since fstat
  }
}

// A pipe or FIFO: each part within pipe_wait, or an error. poll(2) first: a FIFO opened
// without a writer reads as at its end until one comes, and poll waits for that writer.
Result<std::string> read_pipe(int fd, const std::string& name, const InputRules& r) {
  std::string text;
  const auto wait_ms = static_cast<int>(r.pipe_wait.count());
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Error{fmt::format("{}: cannot wait for {}", name, r.what), errno, r.hint, r.usage};
    if (ready == 0)
      return Error{fmt::format("{}: nothing came through the pipe for {} s", name,
                               std::chrono::duration<double>(r.pipe_wait).count()),
                   0, "start what writes it first (a FIFO waits for a writer), or give a regular file"};
    const ssize_t n = read_some(fd, text);
    if (n < 0 && errno == EAGAIN) continue;
    if (n < 0) return Error{fmt::format("{}: cannot read {}", name, r.what), errno, r.hint, r.usage};
    if (n == 0) return text;
    if (text.size() > r.max_bytes) return too_large(name, r);
  }
}

}  // namespace

std::string_view file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a file";
}

Result<InputFile> read_input_fd(int fd, const std::string& name, const InputRules& r) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return Error{fmt::format("{}: cannot stat {}", name, r.what), errno, r.hint, r.usage};
  Result<std::string> text = std::string();
  if (S_ISREG(st.st_mode))
    text = read_regular(fd, name, r, st);
  else if (r.pipes && S_ISFIFO(st.st_mode))
    text = read_pipe(fd, name, r);
  else
    return usage_error(fmt::format("{}: {} is {}, not a regular file{}", name, r.what, file_kind(st.st_mode),
                                   r.pipes ? " or a pipe" : ""),
                       r.hint);
  if (!text) return text.error();
  return InputFile{std::move(text.value()), st.st_mode};
}

Result<InputFile> read_input(const std::string& path, const InputRules& r) {
  // O_NONBLOCK: an open(2) of a FIFO would wait for a writer (and of some devices for
  // a carrier); with it, open returns whatever the file is, and fstat judges it.
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) return Error{fmt::format("{}: cannot open {}", path, r.what), errno, r.hint, r.usage};
  return read_input_fd(fd.get(), path, r);
}

}  // namespace levee
