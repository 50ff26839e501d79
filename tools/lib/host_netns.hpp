// host_netns.hpp - a network namespace of the calling thread's own, for programs run with
// BPF_PROG_TEST_RUN: such a run asks the routing and socket tables of the calling
// thread's namespace (SYN authentication's route and socket lookups), so this one holds
// the given destinations on its loopback and the listeners asked for. The thread goes
// back to its namespace at the end; the namespace goes with the last socket. The
// program tests and levee-progbench share it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace levee::pkt {

class HostNetns {
 public:
  // `local`: addresses ("198.19.0.1", "2001:db8:ffff::1") put on the loopback as /32
  // and /128. Throws std::runtime_error.
  explicit HostNetns(const std::vector<std::string>& local);
  ~HostNetns();
  HostNetns(const HostNetns&) = delete;
  HostNetns& operator=(const HostNetns&) = delete;
  // Run a command inside (`ip`, `sysctl`: it inherits the thread's namespace).
  void sh(const std::string& command) const;
  // A TCP listener on `port` of every address, IPv4 and IPv6; `protocol` IPPROTO_MPTCP
  // for an MPTCP one. The IPv4 one's descriptor (the namespace closes them).
  int listen(uint16_t port, int protocol = 0);

 private:
  int home_ = -1;
  std::vector<int> fds_;
};

}  // namespace levee::pkt
