#include "syn_support.hpp"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>

#include "peer_sink.skel.h"

namespace lvt {
namespace {

struct Cidr4 {
  uint32_t addr = 0, mask = 0;  // network byte order
};
struct Cidr6 {
  uint32_t addr[4] = {}, mask[4] = {};
};
Cidr4 cidr4(const std::string& text) {
  Cidr4 c;
  const size_t slash = text.find('/');
  inet_pton(AF_INET, text.substr(0, slash).c_str(), &c.addr);
  const int len = std::stoi(text.substr(slash + 1));
  c.mask = htonl(len == 0 ? 0 : ~uint32_t{0} << (32 - len));
  return c;
}
Cidr6 cidr6(const std::string& text) {
  Cidr6 c;
  const size_t slash = text.find('/');
  inet_pton(AF_INET6, text.substr(0, slash).c_str(), c.addr);
  int len = std::stoi(text.substr(slash + 1));
  for (auto& m : c.mask) {
    const int bits = std::clamp(len, 0, 32);
    m = htonl(bits == 0 ? 0 : ~uint32_t{0} << (32 - bits));
    len -= bits;
  }
  return c;
}

}  // namespace

void attach_peer_sink(const std::string& ns, const std::string& ifname, const std::string& sink4,
                      const std::string& sink6) {
  peer_sink* skel = peer_sink__open();
  if (!skel) throw std::runtime_error("open peer_sink.bpf.c");
  if (!sink4.empty()) {
    const Cidr4 c = cidr4(sink4);
    skel->rodata->sink4 = c.addr;
    skel->rodata->sink4_mask = c.mask;
  }
  if (!sink6.empty()) {
    const Cidr6 c = cidr6(sink6);
    skel->rodata->sink6_hi = c.addr[0];
    skel->rodata->sink6_hi_mask = c.mask[0];
    skel->rodata->sink6_next = c.addr[1];
    skel->rodata->sink6_next_mask = c.mask[1];
  }
  int err = peer_sink__load(skel);
  if (!err)
    in_netns(ns, [&] {
      err = bpf_xdp_attach(static_cast<int>(if_nametoindex(ifname.c_str())), bpf_program__fd(skel->progs.peer_sink),
                           XDP_FLAGS_DRV_MODE, nullptr);
    });
  peer_sink__destroy(skel);  // the attachment holds the program
  if (err) throw std::runtime_error("attach peer_sink.bpf.c to " + ifname);
}

std::string syn_auth_policy(uint16_t port, const std::string& mode) {
  return "[[class]]\nname = \"web\"\nmatch = { proto = \"tcp\", port = " + std::to_string(port) +
         " }\nrate = 1000\nburst = 100\nsyn_auth = \"" + mode + "\"\n\n[default]\nrate = 1000\nburst = 100\n";
}

levee::Fd listener(const std::string& ns, const Family& f, uint16_t port) {
  levee::Fd fd = socket_in(ns, f.af, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  socklen_t len = 0;
  const sockaddr_storage ss = sockaddr_of(f.rx(), port, len);
  if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&ss), len) != 0 || listen(fd.get(), 16) != 0)
    throw std::runtime_error("listen on " + std::string(f.rx()));
  return fd;
}

Connected connect_from(const std::string& ns, const Family& f, int timeout_s, const std::string& src) {
  Connected c;
  c.fd = socket_in(ns, f.af, SOCK_STREAM, 0);
  const timeval tv{timeout_s, 0};
  setsockopt(c.fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  setsockopt(c.fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  socklen_t len = 0;
  if (!src.empty()) {  // from one of the sender's extra addresses
    const sockaddr_storage from = sockaddr_of(src, 0, len);
    if (bind(c.fd.get(), reinterpret_cast<const sockaddr*>(&from), len) != 0) return Connected{};
  }
  const sockaddr_storage ss = sockaddr_of(f.rx(), kSynPort, len);
  const uint64_t t0 = now_ns();
  if (connect(c.fd.get(), reinterpret_cast<const sockaddr*>(&ss), len) != 0) c.fd = levee::Fd();
  c.seconds = secs(now_ns() - t0);
  return c;
}

// One message each way over an accepted connection.
bool talks(int client, int server) {
  char buf[8] = {};
  if (send(client, "ping", 4, 0) != 4 || recv(server, buf, sizeof buf, 0) != 4) return false;
  if (send(server, "pong", 4, 0) != 4 || recv(client, buf, sizeof buf, 0) != 4) return false;
  return std::string(buf, 4) == "pong";
}

levee::Fd accept_one(int lfd) {
  const timeval tv{3, 0};
  setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  levee::Fd fd(accept(lfd, nullptr, nullptr));
  if (fd.valid()) {
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  return fd;
}

Talked connect_and_talk(const std::string& ns, const Family& f, int lfd, const std::string& src) {
  Talked t;
  t.client = connect_from(ns, f, 5, src);
  if (!t.client.fd.valid()) return t;
  t.server = accept_one(lfd);
  t.ok = t.server.valid() && talks(t.client.fd.get(), t.server.get());
  return t;
}

// What the stack negotiated on a connected socket.
tcp_info info_of(int fd) {
  tcp_info ti{};
  socklen_t len = sizeof ti;
  getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len);
  return ti;
}

// The listener's counters of SYNs it could not queue or answered with its own cookies:
// a spoofed SYN that reached it would show here. -1 if nstat did not say.
int64_t listener_overflows(const std::string& ns) {
  const RunResult r = run({"ip", "netns", "exec", ns, "nstat", "-asz", "TcpExtListenDrops", "TcpExtListenOverflows",
                           "TcpExtSyncookiesSent"});
  if (r.code != 0) return -1;
  int64_t sum = 0;
  std::istringstream in(r.out);
  for (std::string name, value, rest; in >> name >> value && std::getline(in, rest);)
    if (name.rfind("TcpExt", 0) == 0) sum += std::stoll(value);
  return sum;
}

}  // namespace lvt
