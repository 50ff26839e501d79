// flood_test.cpp - levee-flood end to end: two network namespaces joined by a veth
// pair; levee-flood sends from one, and the other counts what arrived in XDP
// (flood_rx.bpf.c) and in UDP sockets / the kernel's SNMP counters, which only count
// frames whose checksums are right.
//
// Needs root (netns, XDP). Everything it creates is named lvft<pid>* and removed by
// RAII; namespaces left by a killed run (dead pid) are removed on the next start.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "flood_rx.skel.h"

namespace {

const std::string kFlood = LEVEE_FLOOD_BIN;
const std::string kPid = std::to_string(getpid());
const std::string kTx = "lvft" + kPid + "tx", kRx = "lvft" + kPid + "rx";
const std::string kTxDev = "lvft" + kPid + "a", kRxDev = "lvft" + kPid + "b";

int sh(const std::string& cmd) {
  int rc = std::system((cmd + " >/dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

void remove_stale_namespaces() {
  DIR* d = opendir("/var/run/netns");
  if (!d) return;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.rfind("lvft", 0) != 0 || n.size() < 7) continue;
    pid_t pid = std::atoi(n.c_str() + 4);
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) sh("ip netns del " + n);
  }
  closedir(d);
}

// Runs the calling thread in another network namespace while alive.
class InNetns {
 public:
  explicit InNetns(const std::string& name) {
    self_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    int fd = open(("/var/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
    if (self_ < 0 || fd < 0 || setns(fd, CLONE_NEWNET) != 0) throw std::runtime_error("setns " + name);
    close(fd);
  }
  ~InNetns() {
    setns(self_, CLONE_NEWNET);
    close(self_);
  }

 private:
  int self_ = -1;
};

std::map<std::string, long long> snmp() {  // of the calling thread's namespace
  std::map<std::string, long long> out;
  std::ifstream f("/proc/thread-self/net/snmp");
  std::string h, v;
  while (std::getline(f, h) && std::getline(f, v)) {
    std::istringstream hs(h), vs(v);
    std::string prefix, k, x;
    hs >> prefix;
    vs >> x;
    prefix.pop_back();  // ':'
    while (hs >> k && vs >> x) out[prefix + k] = std::stoll(x);
  }
  std::ifstream f6("/proc/thread-self/net/snmp6");
  std::string k;
  long long x;
  while (f6 >> k >> x) out[k] = x;
  return out;
}

struct Result {
  int rc = -1;
  nlohmann::json j;
};

Result flood(const std::string& args) {
  std::string cmd = kFlood + " --netns " + kTx + " --dev " + kTxDev + " --json " + args;
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int st = pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (!out.empty()) r.j = nlohmann::json::parse(out, nullptr, false);
  return r;
}

int run_rc(const std::string& args) { return sh(kFlood + " " + args); }

class Flood : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    remove_stale_namespaces();
    std::vector<std::string> cmds = {
        "ip netns add " + kTx,
        "ip netns add " + kRx,
        "ip link add " + kTxDev + " numtxqueues 2 numrxqueues 2 netns " + kTx + " type veth peer " + kRxDev +
            " numtxqueues 2 numrxqueues 2 netns " + kRx,
        "ip -n " + kTx + " addr add 198.18.0.2/15 dev " + kTxDev,
        "ip -n " + kTx + " addr add 2001:db8::2/32 dev " + kTxDev + " nodad",
        "ip -n " + kRx + " addr add 198.18.0.1/15 dev " + kRxDev,
        "ip -n " + kRx + " addr add 2001:db8::1/32 dev " + kRxDev + " nodad",
        "ip -n " + kTx + " link set " + kTxDev + " up",
        "ip -n " + kRx + " link set " + kRxDev + " up",
    };
    for (auto& c : cmds)
      if (sh(c) != 0) {
        setup_error_ = "sandbox setup failed: " + c;
        return;
      }
    skel_ = flood_rx__open_and_load();
    if (!skel_) setup_error_ = "cannot load flood_rx.bpf.c";
  }
  static void TearDownTestSuite() {
    if (skel_) flood_rx__destroy(skel_);
    skel_ = nullptr;
    sh("ip netns del " + kTx);
    sh("ip netns del " + kRx);  // takes the veth pair and the XDP attachment with it
  }
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
    attach(skel_->progs.rx_pass);
  }

  static void attach(bpf_program* prog) {
    InNetns in(kRx);
    int ifindex = static_cast<int>(if_nametoindex(kRxDev.c_str()));
    ASSERT_GT(ifindex, 0);
    ASSERT_EQ(bpf_xdp_attach(ifindex, prog ? bpf_program__fd(prog) : -1, XDP_FLAGS_DRV_MODE, nullptr), 0);
  }

  static uint64_t rx_frames(uint32_t key) {
    int ncpu = libbpf_num_possible_cpus();
    std::vector<uint64_t> v(ncpu);
    if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.rx_frames), &key, v.data()) != 0) return 0;
    uint64_t s = 0;
    for (auto x : v) s += x;
    return s;
  }

  // UDP sockets on port 9 in the receiving namespace.
  struct Receiver {
    Receiver() {
      InNetns in(kRx);
      for (int fam : {AF_INET, AF_INET6}) {
        int fd = socket(fam, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int big = 256 << 20, one = 1;
        setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
        if (fam == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        sockaddr_storage ss{};
        if (fam == AF_INET) {
          auto* a = reinterpret_cast<sockaddr_in*>(&ss);
          a->sin_family = AF_INET;
          a->sin_port = htons(9);
        } else {
          auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
          a->sin6_family = AF_INET6;
          a->sin6_port = htons(9);
        }
        if (bind(fd, reinterpret_cast<sockaddr*>(&ss), sizeof ss) != 0) throw std::runtime_error("bind :9");
        fds.push_back(fd);
      }
      before = snmp();
    }
    ~Receiver() {
      for (int fd : fds) close(fd);
    }
    // Drain until `want` datagrams arrived or 3 s passed.
    void drain(uint64_t want) {
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
      while (count < want && std::chrono::steady_clock::now() < until) {
        bool any = false;
        for (int fd : fds) {
          sockaddr_storage from{};
          socklen_t fl = sizeof from;
          char buf[2048];
          while (recvfrom(fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &fl) >= 0) {
            any = true;
            ++count;
            char s[INET6_ADDRSTRLEN];
            if (from.ss_family == AF_INET)
              inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&from)->sin_addr, s, sizeof s);
            else
              inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&from)->sin6_addr, s, sizeof s);
            ++sources[s];
            fl = sizeof from;
          }
        }
        if (!any) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    long long delta(const std::string& k) {
      InNetns in(kRx);
      return snmp()[k] - before[k];
    }
    std::vector<int> fds;
    std::map<std::string, long long> before;
    uint64_t count = 0;
    std::map<std::string, uint64_t> sources;
  };

  static inline flood_rx* skel_ = nullptr;
  static inline std::string setup_error_;
};

// A live run's frames can be lost before any XDP program sees them when the veth's ring
// toward the receiver overflows on a busy machine (levee-flood reports it as
// dev_tx_dropped). That loss is the machine's, not the generator's: a run that lost
// frames is tried again, up to three times, and the last one must be exact.
static bool retry_lossy(uint64_t got, uint64_t want, const nlohmann::json& j, int attempt) {
  if (got >= want || attempt >= 3) return false;
  std::printf("[retry] attempt %d: %llu of %llu frames arrived (dev_tx_dropped %s)\n", attempt,
              static_cast<unsigned long long>(got), static_cast<unsigned long long>(want),
              j.value("dev_tx_dropped", nlohmann::json()).dump().c_str());
  return true;
}

TEST_F(Flood, LiveRandomIpv4SourcesArriveWithValidChecksums) {
  for (int attempt = 1;; ++attempt) {
    Receiver rx;
    uint64_t before = rx_frames(0);
    auto r = flood("--dst 198.18.0.1 --random 198.18.128.0/17 --count 20000 --method live");
    ASSERT_EQ(r.rc, 0);
    rx.drain(20000);
    if (retry_lossy(rx.count, 20000, r.j, attempt)) continue;
    EXPECT_EQ(r.j["packets"], 20000);
    EXPECT_EQ(r.j["method"], "live");
    EXPECT_EQ(rx.count, 20000u);
    EXPECT_GE(rx_frames(0) - before, 20000u);  // + the odd frame from the sender's own stack
    EXPECT_GT(rx.sources.size(), 10000u) << "sources do not vary";
    for (auto& [src, n] : rx.sources) {
      in_addr a;
      ASSERT_EQ(inet_pton(AF_INET, src.c_str(), &a), 1);
      ASSERT_EQ(ntohl(a.s_addr) & 0xffff8000u, 0xc6128000u) << src << " is outside 198.18.128.0/17";
    }
    EXPECT_EQ(rx.delta("UdpInCsumErrors"), 0);
    EXPECT_EQ(rx.delta("IpExtInCsumErrors"), 0);
    break;
  }
}

// Live frames draw their random bits from a per-CPU counter through a bijection: a new
// source every frame, inside the prefix, and the stack takes every frame (checksums).
TEST_F(Flood, LiveRandomIpv6SourcesNeverRepeat) {
  for (int attempt = 1;; ++attempt) {
    Receiver rx;
    auto r = flood("--dst 2001:db8::1 --random 2001:db8:5::/64 --count 20000 --method live");
    ASSERT_EQ(r.rc, 0);
    rx.drain(20000);
    if (retry_lossy(rx.count, 20000, r.j, attempt)) continue;
    EXPECT_EQ(rx.count, 20000u);
    EXPECT_EQ(rx.sources.size(), 20000u);
    in6_addr prefix{};
    ASSERT_EQ(inet_pton(AF_INET6, "2001:db8:5::", &prefix), 1);
    for (auto& [src, n] : rx.sources) {
      in6_addr a{};
      ASSERT_EQ(inet_pton(AF_INET6, src.c_str(), &a), 1);
      ASSERT_EQ(std::memcmp(&a, &prefix, 8), 0) << src << " is outside 2001:db8:5::/64";
    }
    EXPECT_EQ(rx.delta("Udp6InCsumErrors"), 0);
    break;
  }
}

TEST_F(Flood, LiveRoundRobinIpv6WithVlanTag) {
  for (int attempt = 1;; ++attempt) {
    Receiver rx;
    uint64_t tagged = rx_frames(1);
    auto r = flood(
        "--dst 2001:db8::1 --src-base 2001:db8:1::10 --sources 100 --vlan 100 --size 128 "
        "--count 20000 --method live");
    ASSERT_EQ(r.rc, 0);
    rx.drain(20000);
    if (retry_lossy(rx.count, 20000, r.j, attempt)) continue;
    EXPECT_EQ(r.j["packets"], 20000);
    EXPECT_EQ(r.j["frame_size"], 128);
    EXPECT_EQ(rx.count, 20000u);
    EXPECT_EQ(rx_frames(1) - tagged, 20000u);
    EXPECT_EQ(skel_->bss->last_vid, 100u);
    ASSERT_EQ(rx.sources.size(), 100u);
    EXPECT_EQ(rx.sources.begin()->first, "2001:db8:1::10");
    for (auto& [src, n] : rx.sources) EXPECT_EQ(n, 200u) << src;  // one sender CPU: exact round robin
    EXPECT_EQ(rx.delta("Udp6InCsumErrors"), 0);
    break;
  }
}

TEST_F(Flood, LiveSynAndIcmpChecksums) {
  Receiver rx;
  ASSERT_EQ(flood("--dst 198.18.0.1 --random 198.18.64.0/18 --proto syn --dport 80 --count 5000").rc, 0);
  ASSERT_EQ(flood("--dst 2001:db8::1 --random 2001:db8:7::/64 --proto icmp --count 5000").rc, 0);
  ASSERT_EQ(flood("--dst 198.18.0.1 --src-base 198.18.9.1 --sources 10 --proto icmp --count 5000").rc, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(rx.delta("TcpInSegs"), 5000);
  EXPECT_EQ(rx.delta("TcpInCsumErrors"), 0);
  EXPECT_EQ(rx.delta("Icmp6InEchos"), 5000);
  EXPECT_EQ(rx.delta("Icmp6InCsumErrors"), 0);
  EXPECT_EQ(rx.delta("IcmpInEchos"), 5000);
  EXPECT_EQ(rx.delta("IcmpInCsumErrors"), 0);
}

TEST_F(Flood, LiveTwoThreadsCountExactly) {
  uint64_t before = rx_frames(0);
  auto r = flood("--dst 198.18.0.1 --src 198.18.1.1 --dport 10 --count 300000 --threads 2 --method live");
  ASSERT_EQ(r.rc, 0);
  EXPECT_EQ(r.j["packets"], 300000);
  ASSERT_EQ(r.j["per_thread"].size(), 2u);
  EXPECT_GT(r.j["per_thread"][1].get<uint64_t>(), 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  uint64_t got = rx_frames(0) - before;
  uint64_t dropped = r.j["dev_tx_dropped"].get<uint64_t>();
  // Every frame sent arrived or was counted dropped by the veth, once: the receiver also
  // counts the router's own few reports (MLD, IGMP).
  EXPECT_GE(got + dropped, 300000u);
  EXPECT_LE(got + dropped, 300000u + 50);
  // ...and most arrived. The peer's ring drops some when the receiver falls behind (none
  // in 10 of 12 runs here, 46% in the worst), never nearly all: a frame the veth cannot
  // deliver (over its MTU, no XDP on the peer) is dropped every time.
  EXPECT_GE(got, 300000u / 4) << dropped << " dropped by the veth";
}

TEST_F(Flood, PacketMethodPacedRate) {
  Receiver rx;
  auto r = flood("--dst 198.18.0.1 --src 198.18.1.7 --rate 2000 --duration 1");
  ASSERT_EQ(r.rc, 0);
  EXPECT_EQ(r.j["method"], "packet");
  EXPECT_EQ(r.j["packets"], 2000);
  double s = r.j["seconds"].get<double>();
  EXPECT_GE(s, 0.99);
  EXPECT_LE(s, 1.1);
  rx.drain(2000);
  EXPECT_EQ(rx.count, 2000u);

  r = flood("--dst 198.18.0.1 --src 198.18.1.7 --rate 4000 --count 1000");
  ASSERT_EQ(r.rc, 0);
  EXPECT_EQ(r.j["packets"], 1000);
  s = r.j["seconds"].get<double>();
  EXPECT_GE(s, 0.24);
  EXPECT_LE(s, 0.35);
}

TEST_F(Flood, PacketMethodRandomIpv6) {
  Receiver rx;
  auto r = flood("--dst 2001:db8::1 --random 2001:db8:5::/64 --count 20000 --method packet");
  ASSERT_EQ(r.rc, 0);
  EXPECT_EQ(r.j["packets"], 20000);
  rx.drain(20000);
  EXPECT_EQ(rx.count, 20000u);
  EXPECT_EQ(rx.sources.size(), 20000u);  // 64 random bits: no repeats
  EXPECT_EQ(rx.delta("Udp6InCsumErrors"), 0);
}

TEST_F(Flood, LiveFramesWithoutXdpOnThePeerAreRefused) {
  attach(nullptr);
  EXPECT_EQ(flood("--dst 198.18.0.1 --src 198.18.1.1 --count 1000 --method live").rc, 1);
  Receiver rx;
  auto r = flood("--dst 198.18.0.1 --src 198.18.1.1 --count 1000");  // auto falls back
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.j["method"], "packet");
  EXPECT_EQ(r.j["packets"], 1000);
  rx.drain(1000);
  EXPECT_EQ(rx.count, 1000u);
}

TEST(FloodCli, UsageErrorsExitTwo) {
  EXPECT_EQ(run_rc("--dev x --dst 198.18.0.1 --method live --rate 100"), 2);
  EXPECT_EQ(run_rc("--dev x --dst 198.18.0.1 --src 198.18.0.2 --random 198.18.0.0/16"), 2);
  EXPECT_EQ(run_rc("--dev x --dst 2001:db8::1 --src 198.18.0.2"), 2);
  EXPECT_EQ(run_rc("--dev x --dst 198.18.0.1 --proto gre"), 2);
  EXPECT_EQ(run_rc("--dst 198.18.0.1"), 2);
  EXPECT_EQ(run_rc("--dev lvft-none --dst 198.18.0.1 --src 198.18.0.2 --count 1"), 1);
  EXPECT_EQ(run_rc("--help"), 0);
}

}  // namespace
