// syn_support.hpp - what the SYN authentication tests share: the sender's end made to
// take levee's answers (peer_sink.bpf.c), a policy with SYN authentication, listeners,
// clients that connect and talk, and the listener's counters.
#pragma once

#include <netinet/tcp.h>

#include <cstdint>
#include <string>

#include "core/fd.hpp"
#include "e2e.hpp"

namespace lvt {

inline constexpr uint16_t kSynPort = 8080;
// Where the spoofed floods come from.
inline constexpr const char* kFlood4 = "198.19.0.0/16";
inline constexpr const char* kFlood6 = "2001:db8:8000::/33";

// XDP_TX on a veth hands the frame to the peer's ring, and the kernel wakes the peer to
// take it only when the peer runs an XDP program of its own (veth_xdp_flush): without
// one the SYN-ACK waits until other traffic comes by. The sender's end gets
// peer_sink.bpf.c, which also drops levee's answers to a flood's spoofed sources
// (`sink4`, `sink6`: prefixes, empty for none) as a NIC would send them away. It is
// removed with the namespace. A NIC needs nothing of the kind.
void attach_peer_sink(const std::string& ns, const std::string& ifname, const std::string& sink4 = "",
                      const std::string& sink6 = "");

// The fixture: the sandbox with the peer sink on the sender's end.
class SynAuthTest : public E2eFamily {
 protected:
  void SetUp() override {
    E2eFamily::SetUp();
    if (!IsSkipped()) attach_peer_sink(sb().tx_ns(), sb().tx_if(), kFlood4, kFlood6);
  }
};

// A class with SYN authentication (`mode`: "cookie", "proxy", "reset") for TCP to
// `port`, and a default class.
std::string syn_auth_policy(uint16_t port, const std::string& mode = "cookie");

// A listener on the receiver's address of the family, port `port`.
levee::Fd listener(const std::string& ns, const Family& f, uint16_t port = kSynPort);

// A connection from the sender's namespace, within `timeout_s`: its socket (invalid if
// it failed) and how long connect() took.
struct Connected {
  levee::Fd fd;
  double seconds = 0;
};
// `src`: one of the sender's extra addresses to connect from ("": its own).
Connected connect_from(const std::string& ns, const Family& f, int timeout_s = 5, const std::string& src = "");

// One message each way over an accepted connection.
bool talks(int client, int server);
levee::Fd accept_one(int lfd);

// A new connection from the sender's namespace and the listener's end of it, after one
// message each way.
struct Talked {
  Connected client;
  levee::Fd server;
  bool ok = false;
};
Talked connect_and_talk(const std::string& ns, const Family& f, int lfd, const std::string& src = "");

// What the stack negotiated on a connected socket.
tcp_info info_of(int fd);

// The listener's counters of SYNs it could not queue or answered with its own cookies:
// a spoofed SYN that reached it would show here. -1 if nstat did not say.
int64_t listener_overflows(const std::string& ns);

}  // namespace lvt
