// sandbox.hpp - the end-to-end tests' harness: processes, network namespaces, levee.
//
// A Sandbox is two network namespaces joined by one veth pair:
//
//   netns lvt<pid>a (sender)                     netns lvt<pid>b (receiver)
//   lvt<pid>x  198.18.0.1/24, 2001:db8::1/64 <-> lvt<pid>y  198.18.0.2/24, 2001:db8::2/64
//              + extra sender addresses                     levee attaches here
//
// Neighbours are static both ways (no ARP/NDP crosses the filter during a test),
// IPv6 router solicitations and DAD are off. Everything the sandbox creates carries
// the test process's pid in its name; the destructor removes it (levee detach, then
// the pin directory if anything is left, then both namespaces, then levee's lock
// files), and every new sandbox first sweeps what dead test processes left behind.
//
// levee runs inside the receiver namespace by fork + setns(CLONE_NEWNET) + exec: never
// through `ip netns exec`, which remounts /sys and hides /sys/fs/bpf.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/fd.hpp"

namespace lvt {

// CLOCK_MONOTONIC in ns (the clock bpf_ktime_get_ns reads).
uint64_t now_ns();
// CLOCK_REALTIME - CLOCK_MONOTONIC, in ns: places wall-clock times (kernel receive
// timestamps, levee-flood's report) on CLOCK_MONOTONIC.
int64_t realtime_offset_ns();
inline double secs(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

// Throws std::runtime_error "what: strerror(errno)".
[[noreturn]] void sys_fail(const std::string& what);

// ---- processes ----------------------------------------------------------------------

struct RunOptions {
  std::string netns;                // join /var/run/netns/<netns> (network namespace only)
  bool drop_root = false;           // become uid/gid 65534 (nobody) before exec
  bool hide_bpffs = false;          // private mount namespace with /sys/fs/bpf unmounted
  bool private_bpffs = false;       // private mount namespace with a bpffs of its own on /sys/fs/bpf
                                    // (its pins go with the namespace; nsenter -m reaches it)
  std::string tmpfs_dir;            // private mount namespace with a tmpfs of tmpfs_size on this
  std::string tmpfs_size = "256k";  // directory (a small disk to fill; gone with the namespace)
  bool die_with_parent = false;     // SIGKILL when the thread that started it ends (servers:
                                    // nothing outlives a killed test)
  std::chrono::milliseconds timeout{30000};
};

struct RunResult {
  int code = -1;  // exit status; 128+sig if killed by a signal
  std::string out, err;
  bool timed_out = false;
  std::string describe() const;  // for assertion messages
};

// A started child process with captured stdout/stderr.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const RunOptions& o);
  Child(Child&&) noexcept;
  Child& operator=(Child&&) = delete;
  Child(const Child&) = delete;
  ~Child();  // kills and reaps a child never waited for
  RunResult wait();
  // For long-running children (servers): SIGTERM, then SIGKILL if it has not exited
  // within `grace`; reaps it and returns what it printed.
  RunResult stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));
  // Still running (not exited, not reaped)?
  bool running();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  levee::Fd out_, err_;  // the read ends of its stdout and stderr
  std::chrono::milliseconds timeout_;
  std::chrono::steady_clock::time_point started_;
};

RunResult run(const std::vector<std::string>& argv, const RunOptions& o = {});
// Runs a command that must succeed; throws std::runtime_error with its stderr if not.
std::string must(const std::vector<std::string>& argv);

// ---- namespaces ---------------------------------------------------------------------

// Runs fn on a fresh thread that has joined the network namespace /var/run/netns/<ns>;
// sockets made there stay in that namespace wherever they are used later.
void in_netns(const std::string& ns, const std::function<void()>& fn);
// A socket created inside a network namespace. Throws on failure.
levee::Fd socket_in(const std::string& ns, int domain, int type, int protocol);
// Joins the calling thread to a network namespace. Throws on failure.
void enter_netns(const std::string& ns);

// XDP attachment of an interface in a namespace, as the kernel reports it.
struct XdpInfo {
  bool exists = false;       // the interface exists
  unsigned attach_mode = 0;  // XDP_ATTACHED_*
  uint32_t prog_id = 0, drv_prog_id = 0, skb_prog_id = 0;
  bool any() const { return attach_mode != 0 || prog_id || drv_prog_id || skb_prog_id; }
};
XdpInfo xdp_query(const std::string& ns, const std::string& ifname);

// A minimal foreign (non-levee) XDP program returning XDP_PASS, attached through
// netlink in the given mode (XDP_FLAGS_SKB_MODE or XDP_FLAGS_DRV_MODE). Detached in the
// destructor if still attached.
class ForeignXdp {
 public:
  ForeignXdp(std::string ns, std::string ifname, uint32_t mode_flags);
  ~ForeignXdp();
  uint32_t prog_id() const { return prog_id_; }

 private:
  std::string ns_, ifname_;
  uint32_t flags_;
  uint32_t prog_id_ = 0;
};

// ---- bpffs --------------------------------------------------------------------------

inline constexpr const char* kPinRoot = "/sys/fs/bpf/levee";
// Mounts bpffs on /sys/fs/bpf if it is not mounted.
void ensure_bpffs();
// Entries of /sys/fs/bpf/levee whose name starts with prefix (staging dirs included).
std::vector<std::string> pin_entries(const std::string& prefix);

// ---- the sandbox --------------------------------------------------------------------

struct Addrs {
  // Receiver.
  static constexpr const char* rx4 = "198.18.0.2";
  static constexpr const char* rx6 = "2001:db8::2";
  // Sender: primary, then extra source addresses.
  static constexpr const char* tx4 = "198.18.0.1";
  static constexpr const char* tx6 = "2001:db8::1";
  static const std::vector<std::string>& src4();  // 198.18.0.11 ...
  static const std::vector<std::string>& src6();  // each in its own /64, plus two sharing one
  // The receiver's address of the family of src.
  static const char* rx_for(const std::string& src) { return src.find(':') != std::string::npos ? rx6 : rx4; }
};

class Sandbox {
 public:
  // queues: rx and tx queues of each end of the veth pair (levee-flood needs one per
  // sender thread on the receiving end).
  explicit Sandbox(int queues = 1);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  const std::string& tx_ns() const { return tx_ns_; }
  const std::string& rx_ns() const { return rx_ns_; }
  const std::string& tx_if() const { return tx_if_; }  // sender end of the veth
  const std::string& rx_if() const { return rx_if_; }  // receiver end: levee attaches here
  static constexpr const char* kTxMac = "02:6c:76:00:00:01";
  static constexpr const char* kRxMac = "02:6c:76:00:00:02";

  // A name for an extra interface (unique, < 16 chars, removed with the namespaces).
  std::string ifname(const std::string& suffix);
  // Remember an interface levee may have attached to, for cleanup.
  void track(const std::string& ifname) { tracked_.push_back(ifname); }
  // Removes the veth pair (both ends go together) and makes it again as the sandbox made
  // it: the same names, addresses and static neighbours, new interface indexes.
  void unplug();
  void replug();
  // `ip -n <rx_ns> ...` that must succeed.
  void ip_rx(std::vector<std::string> args);
  void ip_tx(std::vector<std::string> args);

  // levee inside the receiver namespace.
  RunResult levee(const std::vector<std::string>& args, RunOptions o = {}) const;
  Child levee_start(const std::vector<std::string>& args, RunOptions o = {}) const;

  // The JSON a levee command that must succeed prints. Throws with its output if it fails.
  nlohmann::json levee_json(const std::vector<std::string>& args) const;
  // `levee stats IFACE --json` / this interface's object of `levee status --json`
  // (null if absent) / `levee show IFACE ADDRESS --json`. Throw on failure.
  nlohmann::json stats(const std::string& ifname = "") const;
  nlohmann::json status(const std::string& ifname = "") const;
  nlohmann::json show(const std::string& address, const std::string& ifname = "") const;

  // One more sender address (/32 or /128) on the sender's end of the veth, with a
  // static neighbour entry for it on the receiver's end. Removed with the namespaces.
  void add_sender_address(const std::string& addr);

  std::string pin_dir(const std::string& ifname = "") const;
  bool pinned(const std::string& ifname = "") const;

 private:
  void setup();
  void make_veth();
  void teardown() noexcept;

  std::string tag_, tx_ns_, rx_ns_, tx_if_, rx_if_;
  int queues_ = 1;
  std::vector<std::string> tracked_;
  bool tx_ns_made_ = false, rx_ns_made_ = false;
};

// A private directory /tmp/lvt<pid>cfgXXXXXX for a test's files (config files,
// blocklists), removed with everything in it by the destructor; directories of test
// processes that are gone are removed by sweep_stale().
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes a file in the directory (replacing it); returns its full path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

// Remove netns, pins, lock files and temp directories of test processes that are gone.
void sweep_stale();
bool running_as_root();

}  // namespace lvt
