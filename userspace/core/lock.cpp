#include "core/lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

namespace levee {

namespace {

Result<Fd> open_lock_file(const std::string& path) {
  if (mkdir(kLockDir, 0700) != 0 && errno != EEXIST) return sys_error(fmt::format("create {}", kLockDir));
  Fd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.valid()) return sys_error(fmt::format("open {}", path));
  return fd;
}

std::string holder_pid(int fd) {
  char holder[32] = {};
  ssize_t n = pread(fd, holder, sizeof holder - 1, 0);
  std::string pid = n > 0 ? std::string(holder, static_cast<size_t>(n)) : "unknown";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

void write_pid(int fd) {
  std::string me = fmt::format("{}\n", getpid());
  if (ftruncate(fd, 0) == 0) (void)!pwrite(fd, me.data(), me.size(), 0);
}

}  // namespace

Result<IfaceLock> IfaceLock::acquire(const std::string& iface, std::chrono::milliseconds patience) {
  const std::string path = fmt::format("{}/{}.lock", kLockDir, iface);
  LV_TRY_ASSIGN(auto fd, open_lock_file(path));
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return sys_error(fmt::format("lock {}", path));
    if (std::chrono::steady_clock::now() >= deadline)
      return Error{fmt::format("another levee (pid {}) is changing {}", holder_pid(fd.get()), iface), 0,
                   "wait for it to finish and retry"};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  write_pid(fd.get());
  return IfaceLock(std::move(fd));
}

Result<IfaceLock> IfaceLock::daemon(const std::string& iface) {
  const std::string path = fmt::format("{}/{}.daemon", kLockDir, iface);
  LV_TRY_ASSIGN(auto fd, open_lock_file(path));
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return sys_error(fmt::format("lock {}", path));
    return Error{fmt::format("{} already has a levee run (pid {})", iface, holder_pid(fd.get())), 0,
                 fmt::format("one daemon per interface: stop it first (systemctl stop levee@{})", iface)};
  }
  write_pid(fd.get());
  return IfaceLock(std::move(fd));
}

}  // namespace levee
