// tcp_received.cpp - lapi_client.hpp's count of the bytes a TCP socket received, apart:
// <linux/tcp.h> has the field (glibc's <netinet/tcp.h>, which httplib.h includes, lacks
// it) and the two headers do not compile together.
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

#include "daemon/lapi_client.hpp"

namespace levee::daemon {

std::optional<uint64_t> tcp_bytes_received(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
      len < offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received)
    return std::nullopt;
  return info.tcpi_bytes_received;
}

}  // namespace levee::daemon
