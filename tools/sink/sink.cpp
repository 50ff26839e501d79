// levee-sink - counts UDP datagrams per source address, inside a network namespace,
// until a duration passes or it is interrupted; then prints the counts.
//
//   levee-sink [--netns NAME] [--port 9] [--duration SECONDS] [--json]
//
// One dual-stack socket (IPv4-mapped addresses are printed as IPv4). Used by the demo
// and handy for checking by hand what a filter let through.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

std::string addr_text(const sockaddr_in6& sa) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (IN6_IS_ADDR_V4MAPPED(&sa.sin6_addr))
    inet_ntop(AF_INET, &sa.sin6_addr.s6_addr[12], buf, sizeof buf);
  else
    inet_ntop(AF_INET6, &sa.sin6_addr, buf, sizeof buf);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::string netns;
  uint16_t port = 9;
  double duration = 0;
  bool json = false;
  CLI::App app{"levee-sink: count UDP datagrams per source address"};
  app.add_option("--netns", netns, "network namespace to receive in (/var/run/netns/NAME)");
  app.add_option("--port", port, "UDP port")->capture_default_str();
  app.add_option("--duration", duration, "seconds to listen (0: until SIGINT/SIGTERM)");
  app.add_flag("--json", json, "print a JSON object {\"sources\": {addr: count}, \"total\": n}");
  CLI11_PARSE(app, argc, argv);

  if (!netns.empty()) {
    int fd = open(("/var/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
      fmt::print(stderr, "levee-sink: enter netns {}: {}\n", netns, strerror(errno));
      return 1;
    }
    close(fd);
  }
  int s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int off = 0, big = 8 << 20;
  setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  sa.sin6_port = htons(port);
  sa.sin6_addr = in6addr_any;
  if (s < 0 || bind(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    fmt::print(stderr, "levee-sink: bind UDP port {}: {}\n", port, strerror(errno));
    return 1;
  }
  struct sigaction act {};
  act.sa_handler = on_signal;
  sigaction(SIGINT, &act, nullptr);
  sigaction(SIGTERM, &act, nullptr);

  std::map<std::string, uint64_t> counts;
  uint64_t total = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(duration);
  char buf[2048];
  while (!g_stop && (duration <= 0 || std::chrono::steady_clock::now() < end)) {
    pollfd p{s, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    for (;;) {
      sockaddr_in6 from{};
      socklen_t len = sizeof from;
      ssize_t n = recvfrom(s, buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &len);
      if (n < 0) break;
      ++counts[addr_text(from)];
      ++total;
    }
  }
  if (json) {
    nlohmann::json j{{"sources", counts}, {"total", total}};
    fmt::print("{}\n", j.dump());
  } else {
    for (const auto& [addr, n] : counts) fmt::print("{:<40} {}\n", addr, n);
    fmt::print("{:<40} {}\n", "total", total);
  }
  return 0;
}
