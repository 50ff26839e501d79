#include "sandbox.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#ifndef LEVEE_BIN
#error "LEVEE_BIN must name the levee binary"
#endif

namespace fs = std::filesystem;

namespace lvt {

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

int64_t realtime_offset_ns() {
  timespec rt{}, mono{};
  clock_gettime(CLOCK_REALTIME, &rt);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  return (static_cast<int64_t>(rt.tv_sec) - mono.tv_sec) * 1'000'000'000ll + (rt.tv_nsec - mono.tv_nsec);
}

bool running_as_root() { return geteuid() == 0; }

void sys_fail(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

namespace {

// Async-signal-safe failure in a forked child.
[[noreturn]] void child_fail(const char* what) {
  int e = errno;
  const char* es = strerror(e);
  (void)!write(2, "lvt-child: ", 11);
  (void)!write(2, what, strlen(what));
  (void)!write(2, ": ", 2);
  (void)!write(2, es, strlen(es));
  (void)!write(2, "\n", 1);
  _exit(126);
}

// A zombie (killed, not yet reaped by a parent that may never do it) counts as dead.
bool pid_alive(long pid) {
  if (pid <= 0) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;
  char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

// "lvt<digits>..." -> digits, or -1.
long owner_pid(const std::string& name) {
  if (name.rfind("lvt", 0) != 0) return -1;
  size_t i = 3;
  long pid = 0;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && i < 13)
    pid = pid * 10 + (name[i++] - '0');
  return i == 3 ? -1 : pid;
}

void write_file(const std::string& path, const std::string& value) {
  std::ofstream f(path);
  f << value;
  f.flush();
  if (!f) throw std::runtime_error("write " + value + " to " + path);
}

std::atomic<int> g_sandbox_seq{0};

}  // namespace

// ---- processes ----------------------------------------------------------------------

std::string RunResult::describe() const {
  std::string s = "exit " + std::to_string(code) + (timed_out ? " (timed out)" : "");
  s += "\n  stdout: " + out + "\n  stderr: " + err;
  return s;
}

Child::Child(const std::vector<std::string>& argv, const RunOptions& o) : timeout_(o.timeout) {
  if (argv.empty()) throw std::invalid_argument("empty argv");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int nsfd = -1;
  if (!o.netns.empty()) {
    std::string path = "/var/run/netns/" + o.netns;
    nsfd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (nsfd < 0) sys_fail("open " + path);
  }
  int outp[2], errp[2];
  if (pipe2(outp, O_CLOEXEC) != 0) sys_fail("pipe");
  if (pipe2(errp, O_CLOEXEC) != 0) sys_fail("pipe");
  const bool search = argv[0].find('/') == std::string::npos;
  const std::string tmpfs_opts = o.tmpfs_dir.empty() ? "" : "size=" + o.tmpfs_size;  // no allocation after fork

  started_ = std::chrono::steady_clock::now();
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) sys_fail("fork");
  if (pid_ == 0) {
    // Child: only async-signal-safe calls from here on.
    if (o.die_with_parent) {
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail("prctl(PR_SET_PDEATHSIG)");
      if (getppid() != parent) _exit(125);  // the parent is already gone
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(outp[1], 1);
    dup2(errp[1], 2);
    if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET) != 0) child_fail("setns");
    if (o.hide_bpffs || o.private_bpffs || !o.tmpfs_dir.empty()) {
      if (unshare(CLONE_NEWNS) != 0) child_fail("unshare(CLONE_NEWNS)");
      if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) child_fail("make mounts private");
      int n = 0;
      while ((o.hide_bpffs || o.private_bpffs) && umount2("/sys/fs/bpf", MNT_DETACH) == 0 && n < 16) ++n;
      if (!tmpfs_opts.empty() && mount("tmpfs", o.tmpfs_dir.c_str(), "tmpfs", 0, tmpfs_opts.c_str()) != 0)
        child_fail("mount tmpfs");
      if (o.private_bpffs && mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700") != 0) child_fail("mount bpffs");
    }
    if (o.drop_root) {
      if (setgroups(0, nullptr) != 0) child_fail("setgroups");
      if (setgid(65534) != 0) child_fail("setgid");
      if (setuid(65534) != 0) child_fail("setuid");
    }
    if (search)
      execvp(cargv[0], cargv.data());
    else
      execv(cargv[0], cargv.data());
    child_fail("exec");
  }
  if (nsfd >= 0) close(nsfd);
  close(outp[1]);
  close(errp[1]);
  out_.reset(outp[0]);
  err_.reset(errp[0]);
}

Child::Child(Child&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)),
      out_(std::move(o.out_)),
      err_(std::move(o.err_)),
      timeout_(o.timeout_),
      started_(o.started_) {}

Child::~Child() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

RunResult Child::wait() {
  RunResult r;
  if (pid_ <= 0) throw std::logic_error("Child::wait twice");
  const auto deadline = started_ + timeout_;
  bool killed = false;
  while (out_.valid() || err_.valid()) {
    pollfd p[2];
    int n = 0;
    if (out_.valid()) p[n++] = {out_.get(), POLLIN, 0};
    if (err_.valid()) p[n++] = {err_.get(), POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 && !killed) {
      kill(pid_, SIGKILL);
      killed = true;
      r.timed_out = true;
    }
    int rc = poll(p, static_cast<nfds_t>(n), killed ? 1000 : static_cast<int>(std::min<long>(left.count(), 1000)));
    if (rc < 0 && errno != EINTR) break;
    for (int i = 0; i < n; ++i) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      ssize_t got = read(p[i].fd, buf, sizeof buf);
      const bool out = p[i].fd == out_.get();
      if (got > 0) {
        (out ? r.out : r.err).append(buf, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        (out ? out_ : err_).reset();
      }
    }
  }
  int st = 0;
  while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

RunResult Child::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) throw std::logic_error("Child::stop after wait");
  kill(pid_, SIGTERM);
  // wait() kills at started_ + timeout_: move that deadline to now + grace.
  timeout_ = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_) + grace;
  return wait();
}

bool Child::running() {
  if (pid_ <= 0) return false;
  siginfo_t info{};
  // WNOWAIT: look, leave it to wait() to reap.
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return false;
  return info.si_pid == 0;
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& o) { return Child(argv, o).wait(); }

std::string must(const std::vector<std::string>& argv) {
  RunResult r = run(argv);
  if (r.code != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += a + " ";
    throw std::runtime_error("command failed: " + cmd + "\n" + r.describe());
  }
  return r.out;
}

// ---- namespaces ---------------------------------------------------------------------

void enter_netns(const std::string& ns) {
  std::string path = "/var/run/netns/" + ns;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) sys_fail("open " + path);
  int rc = setns(fd, CLONE_NEWNET);
  int e = errno;
  close(fd);
  errno = e;
  if (rc != 0) sys_fail("setns " + path);
}

void in_netns(const std::string& ns, const std::function<void()>& fn) {
  std::exception_ptr err;
  std::thread t([&] {
    try {
      enter_netns(ns);
      fn();
    } catch (...) {
      err = std::current_exception();
    }
  });
  t.join();
  if (err) std::rethrow_exception(err);
}

levee::Fd socket_in(const std::string& ns, int domain, int type, int protocol) {
  levee::Fd fd;
  in_netns(ns, [&] {
    fd.reset(socket(domain, type | SOCK_CLOEXEC, protocol));
    if (!fd.valid()) sys_fail("socket");
  });
  return fd;
}

XdpInfo xdp_query(const std::string& ns, const std::string& ifname) {
  XdpInfo info;
  in_netns(ns, [&] {
    unsigned idx = if_nametoindex(ifname.c_str());
    if (idx == 0) return;
    info.exists = true;
    bpf_xdp_query_opts q{};
    q.sz = sizeof q;
    int err = bpf_xdp_query(static_cast<int>(idx), 0, &q);
    if (err) {
      errno = -err;
      sys_fail("bpf_xdp_query " + ifname);
    }
    info.attach_mode = q.attach_mode;
    info.prog_id = q.prog_id;
    info.drv_prog_id = q.drv_prog_id;
    info.skb_prog_id = q.skb_prog_id;
  });
  return info;
}

ForeignXdp::ForeignXdp(std::string ns, std::string ifname, uint32_t mode_flags)
    : ns_(std::move(ns)), ifname_(std::move(ifname)), flags_(mode_flags) {
  in_netns(ns_, [&] {
    // r0 = XDP_PASS; exit
    bpf_insn insns[2]{};
    insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
    insns[0].dst_reg = BPF_REG_0;
    insns[0].imm = XDP_PASS;
    insns[1].code = BPF_JMP | BPF_EXIT;
    int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "lvt_foreign", "GPL", insns, 2, nullptr);
    if (fd < 0) {
      errno = -fd;
      sys_fail("load the foreign XDP program");
    }
    unsigned idx = if_nametoindex(ifname_.c_str());
    if (idx == 0) {
      close(fd);
      throw std::runtime_error("no interface " + ifname_);
    }
    int err = bpf_xdp_attach(static_cast<int>(idx), fd, flags_, nullptr);
    bpf_prog_info pi{};
    uint32_t len = sizeof pi;
    if (bpf_obj_get_info_by_fd(fd, &pi, &len) == 0) prog_id_ = pi.id;
    close(fd);
    if (err) {
      errno = -err;
      sys_fail("attach the foreign XDP program to " + ifname_);
    }
  });
}

ForeignXdp::~ForeignXdp() {
  try {
    in_netns(ns_, [&] {
      unsigned idx = if_nametoindex(ifname_.c_str());
      if (idx) (void)bpf_xdp_detach(static_cast<int>(idx), flags_, nullptr);
    });
  } catch (...) {
    // The namespace (and the interface with it) may already be gone.
  }
}

// ---- bpffs --------------------------------------------------------------------------

void ensure_bpffs() {
  struct statfs st {};
  if (statfs("/sys/fs/bpf", &st) == 0 && static_cast<unsigned long>(st.f_type) == BPF_FS_MAGIC) return;
  if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700") != 0) sys_fail("mount -t bpf bpf /sys/fs/bpf");
}

std::vector<std::string> pin_entries(const std::string& prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kPinRoot, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

// ---- sweep --------------------------------------------------------------------------

void sweep_stale() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/var/run/netns", ec)) {
    std::string name = e.path().filename().string();
    long pid = owner_pid(name);
    if (pid > 0 && !pid_alive(pid)) (void)run({"ip", "netns", "del", name});
  }
  for (const auto& e : fs::directory_iterator(kPinRoot, ec)) {
    std::string name = e.path().filename().string();
    long pid = owner_pid(name);
    if (pid > 0 && !pid_alive(pid)) fs::remove_all(e.path(), ec);
  }
  for (const auto& e : fs::directory_iterator("/run/levee", ec)) {
    std::string name = e.path().filename().string();
    long pid = owner_pid(name);
    const bool lock = e.path().extension() == ".lock" || e.path().extension() == ".daemon" ||
                      e.path().extension() == ".publish" || e.path().extension() == ".cookies" ||
                      e.path().extension() == ".crowdsec";
    if (pid > 0 && !pid_alive(pid) && lock) fs::remove(e.path(), ec);
  }
  // TempDir: /tmp/lvt<pid>cfgXXXXXX.
  for (const auto& e : fs::directory_iterator("/tmp", ec)) {
    std::string name = e.path().filename().string();
    long pid = owner_pid(name);
    if (pid > 0 && !pid_alive(pid) && name.find("cfg") != std::string::npos && e.is_directory(ec))
      fs::remove_all(e.path(), ec);
  }
}

// ---- temp directories ---------------------------------------------------------------

TempDir::TempDir() {
  std::string tmpl = "/tmp/lvt" + std::to_string(getpid()) + "cfgXXXXXX";
  if (!mkdtemp(tmpl.data())) sys_fail("mkdtemp " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  std::string p = path_ + "/" + name;
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
  f.flush();
  if (!f) throw std::runtime_error("write " + p);
  return p;
}

// ---- the sandbox --------------------------------------------------------------------

const std::vector<std::string>& Addrs::src4() {
  static const std::vector<std::string> v{"198.18.0.11", "198.18.0.12", "198.18.0.13",
                                          "198.18.0.14", "198.18.0.15", "198.18.0.16"};
  return v;
}

const std::vector<std::string>& Addrs::src6() {
  // [0..3] each in its own /64; [4] shares 2001:db8:1::/64 with [0].
  static const std::vector<std::string> v{"2001:db8:1::11", "2001:db8:2::12", "2001:db8:3::13", "2001:db8:4::14",
                                          "2001:db8:1::99"};
  return v;
}

Sandbox::Sandbox(int queues) : queues_(queues < 1 ? 1 : queues) {
  int seq = g_sandbox_seq++;
  tag_ = "lvt" + std::to_string(getpid()) + (seq ? "_" + std::to_string(seq) : "");
  tx_ns_ = tag_ + "a";
  rx_ns_ = tag_ + "b";
  tx_if_ = tag_ + "x";
  rx_if_ = tag_ + "y";
  if (rx_if_.size() >= IF_NAMESIZE - 1) throw std::runtime_error("interface name too long: " + rx_if_);
  tracked_.push_back(rx_if_);
  try {
    setup();
  } catch (...) {
    teardown();
    throw;
  }
}

Sandbox::~Sandbox() { teardown(); }

std::string Sandbox::ifname(const std::string& suffix) {
  std::string n = tag_ + suffix;
  if (n.size() >= IF_NAMESIZE) throw std::runtime_error("interface name too long: " + n);
  return n;
}

void Sandbox::ip_rx(std::vector<std::string> args) {
  args.insert(args.begin(), {"ip", "-n", rx_ns_});
  must(args);
}

void Sandbox::ip_tx(std::vector<std::string> args) {
  args.insert(args.begin(), {"ip", "-n", tx_ns_});
  must(args);
}

void Sandbox::setup() {
  sweep_stale();
  ensure_bpffs();
  must({"ip", "netns", "add", tx_ns_});
  tx_ns_made_ = true;
  must({"ip", "netns", "add", rx_ns_});
  rx_ns_made_ = true;

  // No IPv6 chatter of our own making crosses the filter: no DAD, no router
  // solicitations (MLD reports of the link-local addresses remain; tests tolerate them).
  for (const auto& ns : {tx_ns_, rx_ns_}) {
    in_netns(ns, [] {
      for (const char* scope : {"default", "all"}) {
        std::string base = std::string("/proc/sys/net/ipv6/conf/") + scope + "/";
        write_file(base + "accept_dad", "0");
        write_file(base + "dad_transmits", "0");
        write_file(base + "router_solicitations", "0");
      }
    });
  }

  make_veth();
}

void Sandbox::unplug() { ip_tx({"link", "del", tx_if_}); }

void Sandbox::replug() {
  if (run({"ip", "-n", tx_ns_, "link", "show", tx_if_}).code == 0) unplug();
  make_veth();
}

void Sandbox::make_veth() {
  if (queues_ == 1) {
    ip_tx({"link", "add", tx_if_, "address", kTxMac, "type", "veth", "peer", "name", rx_if_, "address", kRxMac, "netns",
           rx_ns_});
  } else {
    const std::string q = std::to_string(queues_);
    ip_tx({"link", "add",  tx_if_, "address", kTxMac, "numtxqueues", q, "numrxqueues", q, "type",  "veth",
           "peer", "name", rx_if_, "address", kRxMac, "numtxqueues", q, "numrxqueues", q, "netns", rx_ns_});
  }
  ip_tx({"addr", "add", std::string(Addrs::tx4) + "/24", "dev", tx_if_});
  ip_tx({"addr", "add", std::string(Addrs::tx6) + "/64", "dev", tx_if_, "nodad"});
  for (const auto& a : Addrs::src4()) ip_tx({"addr", "add", a + "/32", "dev", tx_if_});
  for (const auto& a : Addrs::src6()) ip_tx({"addr", "add", a + "/128", "dev", tx_if_, "nodad"});
  ip_rx({"addr", "add", std::string(Addrs::rx4) + "/24", "dev", rx_if_});
  ip_rx({"addr", "add", std::string(Addrs::rx6) + "/64", "dev", rx_if_, "nodad"});

  ip_tx({"link", "set", "lo", "up"});
  ip_rx({"link", "set", "lo", "up"});
  ip_tx({"link", "set", tx_if_, "up"});
  ip_rx({"link", "set", rx_if_, "up"});
  ip_rx({"route", "add", "2001:db8::/32", "dev", rx_if_});

  // Static neighbours: no ARP or NDP during a measurement.
  ip_tx({"neigh", "replace", Addrs::rx4, "lladdr", kRxMac, "dev", tx_if_, "nud", "permanent"});
  ip_tx({"neigh", "replace", Addrs::rx6, "lladdr", kRxMac, "dev", tx_if_, "nud", "permanent"});
  std::vector<std::string> senders{Addrs::tx4, Addrs::tx6};
  for (const auto& a : Addrs::src4()) senders.push_back(a);
  for (const auto& a : Addrs::src6()) senders.push_back(a);
  for (const auto& a : senders) ip_rx({"neigh", "replace", a, "lladdr", kTxMac, "dev", rx_if_, "nud", "permanent"});
}

void Sandbox::teardown() noexcept {
  // 1. levee's own way out, then whatever it left.
  for (const auto& i : tracked_) {
    try {
      if (rx_ns_made_ && pinned(i)) (void)levee({"detach", i}, RunOptions{.timeout = std::chrono::seconds(20)});
    } catch (...) {
    }
    std::error_code ec;
    if (pinned(i)) fs::remove_all(pin_dir(i), ec);
    for (const auto& name : pin_entries(i + ":")) fs::remove_all(fs::path(kPinRoot) / name, ec);
  }
  // /sys/fs/bpf/levee itself stays, as levee leaves it (removed, anyone could make it).
  // 2. The namespaces, and every interface in them.
  try {
    if (tx_ns_made_) (void)run({"ip", "netns", "del", tx_ns_});
    if (rx_ns_made_) (void)run({"ip", "netns", "del", rx_ns_});
  } catch (...) {
  }
  tx_ns_made_ = rx_ns_made_ = false;
  // 3. levee's lock files for our interfaces (levee run's too, and its CrowdSec
  // publisher's and bouncer's state files, left by a daemon the test killed), and the SYN
  // cookie keys a detach kept for an attach that never came.
  for (const auto& i : tracked_) {
    std::error_code ec;
    for (const char* ext : {".lock", ".daemon", ".publish", ".crowdsec", ".cookies", ".cookies.tmp"})
      fs::remove(fs::path("/run/levee") / (i + ext), ec);
  }
}

RunResult Sandbox::levee(const std::vector<std::string>& args, RunOptions o) const {
  return levee_start(args, std::move(o)).wait();
}

Child Sandbox::levee_start(const std::vector<std::string>& args, RunOptions o) const {
  std::vector<std::string> argv{LEVEE_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  if (o.netns.empty()) o.netns = rx_ns_;
  return Child(argv, o);
}

nlohmann::json Sandbox::levee_json(const std::vector<std::string>& args) const {
  RunResult r = levee(args);
  if (r.code != 0) throw std::runtime_error("levee " + args.front() + " failed: " + r.describe());
  return nlohmann::json::parse(r.out);
}

nlohmann::json Sandbox::stats(const std::string& ifname) const {
  return levee_json({"stats", ifname.empty() ? rx_if_ : ifname, "--json"});
}

nlohmann::json Sandbox::status(const std::string& ifname) const {
  const std::string i = ifname.empty() ? rx_if_ : ifname;
  const nlohmann::json all = levee_json({"status", "--json"});
  for (const auto& e : all.at("interfaces"))
    if (e.at("interface") == i) return e;
  return nullptr;
}

nlohmann::json Sandbox::show(const std::string& address, const std::string& ifname) const {
  return levee_json({"show", ifname.empty() ? rx_if_ : ifname, address, "--json"});
}

void Sandbox::add_sender_address(const std::string& addr) {
  const bool v6 = addr.find(':') != std::string::npos;
  if (v6)
    ip_tx({"addr", "add", addr + "/128", "dev", tx_if_, "nodad"});
  else
    ip_tx({"addr", "add", addr + "/32", "dev", tx_if_});
  ip_rx({"neigh", "replace", addr, "lladdr", kTxMac, "dev", rx_if_, "nud", "permanent"});
  ip_rx({"route", "replace", addr + (v6 ? "/128" : "/32"), "dev", rx_if_});
}

std::string Sandbox::pin_dir(const std::string& ifname) const {
  return std::string(kPinRoot) + "/" + (ifname.empty() ? rx_if_ : ifname);
}

bool Sandbox::pinned(const std::string& ifname) const {
  std::error_code ec;
  return fs::exists(pin_dir(ifname), ec);
}

}  // namespace lvt
