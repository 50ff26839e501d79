#include "host_netns.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace levee::pkt {
namespace {

std::runtime_error failure(const std::string& what, int err) {
  return std::runtime_error(what + ": " + std::strerror(err));
}

}  // namespace

HostNetns::HostNetns(const std::vector<std::string>& local) {
  home_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home_ < 0) throw failure("open this thread's network namespace", errno);
  if (unshare(CLONE_NEWNET) != 0) {
    const int err = errno;
    close(home_);
    throw failure("unshare a network namespace", err);
  }
  sh("ip link set lo up");
  for (const std::string& a : local)
    sh("ip addr add " + a + (a.find(':') != std::string::npos ? "/128 dev lo nodad" : "/32 dev lo"));
}

HostNetns::~HostNetns() {
  for (int fd : fds_) close(fd);
  if (setns(home_, CLONE_NEWNET) != 0) std::abort();  // a thread left in the wrong namespace
  close(home_);
}

void HostNetns::sh(const std::string& command) const {
  if (std::system((command + " >/dev/null").c_str()) != 0) throw std::runtime_error("failed: " + command);
}

int HostNetns::listen(uint16_t port, int protocol) {
  const size_t first = fds_.size();
  for (int af : {AF_INET, AF_INET6}) {
    const int fd = socket(af, SOCK_STREAM | SOCK_CLOEXEC, protocol);
    if (fd < 0) throw failure("socket", errno);
    fds_.push_back(fd);
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (af == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (af == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      a->sin_family = AF_INET;
      a->sin_port = htons(port);
      len = sizeof *a;
    } else {
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      a->sin6_family = AF_INET6;
      a->sin6_port = htons(port);
      len = sizeof *a;
    }
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(fd, 64) != 0)
      throw failure("listen on port " + std::to_string(port), errno);
  }
  return fds_[first];
}

}  // namespace levee::pkt
