#include "core/lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

namespace levee {

Result<IfaceLock> IfaceLock::acquire(const std::string& iface, std::chrono::milliseconds patience) {
  if (mkdir(kLockDir, 0700) != 0 && errno != EEXIST)
    return sys_error(fmt::format("create {}", kLockDir));
  const std::string path = fmt::format("{}/{}.lock", kLockDir, iface);
  Fd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.valid()) return sys_error(fmt::format("open {}", path));

  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return sys_error(fmt::format("lock {}", path));
    if (std::chrono::steady_clock::now() >= deadline) {
      char holder[32] = {};
      ssize_t n = pread(fd.get(), holder, sizeof holder - 1, 0);
      std::string pid = n > 0 ? std::string(holder, static_cast<size_t>(n)) : "unknown";
      while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
      return Error{fmt::format("another levee (pid {}) is changing {}", pid, iface), 0,
                   "wait for it to finish and retry"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string me = fmt::format("{}\n", getpid());
  if (ftruncate(fd.get(), 0) == 0) (void)!pwrite(fd.get(), me.data(), me.size(), 0);
  return IfaceLock(std::move(fd));
}

}  // namespace levee
