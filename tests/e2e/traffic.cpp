#include "traffic.hpp"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "packet.hpp"

namespace lvt {
namespace {

// Waits until `last` has not moved for quiet_ms, or max_ms passed.
void wait_quiet(const std::atomic<uint64_t>& last, unsigned quiet_ms, unsigned max_ms) {
  const uint64_t start = now_ns();
  const uint64_t quiet = uint64_t{quiet_ms} * 1'000'000ull, limit = uint64_t{max_ms} * 1'000'000ull;
  for (;;) {
    uint64_t now = now_ns();
    uint64_t l = std::max(last.load(), start);
    if (now - l >= quiet || now - start >= limit) return;
    usleep(20'000);
  }
}

// Parse an Ethernet frame (tags possibly already stripped into metadata).
void parse_frame(const uint8_t* p, size_t n, TapFrame& f) {
  f.len = n;
  if (n < 14) return;
  size_t off = 12;
  uint16_t type = static_cast<uint16_t>(p[off] << 8 | p[off + 1]);
  off += 2;
  while ((type == 0x8100 || type == 0x88a8) && off + 4 <= n) {
    ++f.tags;
    type = static_cast<uint16_t>(p[off + 2] << 8 | p[off + 3]);
    off += 4;
  }
  f.ethertype = type;
  char buf[INET6_ADDRSTRLEN] = {};
  size_t l4off = 0;
  if (type == 0x0800 && off + 20 <= n) {
    inet_ntop(AF_INET, p + off + 12, buf, sizeof buf);
    f.l4 = p[off + 9];
    l4off = off + static_cast<size_t>(p[off] & 0x0f) * 4;
  } else if (type == 0x86dd && off + 40 <= n) {
    inet_ntop(AF_INET6, p + off + 8, buf, sizeof buf);
    f.l4 = p[off + 6];
    l4off = off + 40;
  } else {
    return;
  }
  f.src = buf;
  if ((f.l4 == IPPROTO_UDP || f.l4 == IPPROTO_TCP) && l4off + 4 <= n)
    f.dport = static_cast<uint16_t>(p[l4off + 2] << 8 | p[l4off + 3]);
  if (f.l4 == IPPROTO_TCP && l4off + 14 <= n) f.tcp_flags = p[l4off + 13];
}

levee::pkt::Mac mac_bytes(const char* text) {
  levee::pkt::Mac m{};
  unsigned v[6];
  if (std::sscanf(text, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
    throw std::invalid_argument(std::string("bad MAC ") + text);
  for (int i = 0; i < 6; ++i) m[static_cast<size_t>(i)] = static_cast<uint8_t>(v[i]);
  return m;
}

levee::pkt::Frame ip_frame(const std::string& src, const std::string& dst) {
  levee::pkt::Frame f;
  f.eth(mac_bytes(Sandbox::kRxMac), mac_bytes(Sandbox::kTxMac));
  if (src.find(':') != std::string::npos)
    f.ipv6(src, dst);
  else
    f.ipv4(src, dst);
  return f;
}

}  // namespace

void sleep_until_ns(uint64_t t) {
  timespec ts{static_cast<time_t>(t / 1'000'000'000ull), static_cast<long>(t % 1'000'000'000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

// ---- SendLog ------------------------------------------------------------------------

uint64_t SendLog::sent_between(uint64_t from, uint64_t to) const {
  auto lo = std::lower_bound(times.begin(), times.end(), from);
  auto hi = std::lower_bound(times.begin(), times.end(), to);
  return static_cast<uint64_t>(hi - lo);
}

double SendLog::max_gap(uint64_t from, uint64_t to) const {
  const uint64_t end = std::min(to, t_last);
  uint64_t prev = from, gap = 0;
  for (uint64_t t : times) {
    if (t < from) continue;
    if (t >= end) break;
    gap = std::max(gap, t - prev);
    prev = t;
  }
  if (end > prev) gap = std::max(gap, end - prev);
  return secs(gap);
}

SendLog SendLog::window(uint64_t from, uint64_t to) const {
  SendLog w;
  for (uint64_t t : times) {
    if (t < from || t >= to) continue;
    if (w.sent == 0) w.t_first = t;
    w.t_last = t;
    w.times.push_back(t);
    ++w.sent;
  }
  return w;
}

SendLog merged(std::initializer_list<const SendLog*> logs) {
  SendLog m;
  for (const SendLog* l : logs) {
    m.times.insert(m.times.end(), l->times.begin(), l->times.end());
    m.errors += l->errors;
  }
  std::sort(m.times.begin(), m.times.end());
  m.sent = m.times.size();
  if (m.sent) {
    m.t_first = m.times.front();
    m.t_last = m.times.back();
  }
  return m;
}

std::vector<uint8_t> syn_frame(const std::string& src, const std::string& dst, uint16_t dport, uint16_t sport) {
  return ip_frame(src, dst).tcp(sport, dport, levee::pkt::kTcpSyn).pad_to(60).bytes();
}

std::vector<uint8_t> ipv6_ext_udp_frame(const std::string& src, const std::string& dst, uint16_t dport, int exts) {
  levee::pkt::Frame f = ip_frame(src, dst);
  for (int i = 0; i < exts; ++i) f.ipv6_ext(IPPROTO_DSTOPTS);
  return f.udp(40000, dport).payload(18).bytes();
}

double gcra_expected(double rate, double burst, const SendLog& s) {
  if (s.sent == 0) return 0;
  return std::min(static_cast<double>(s.sent), burst + rate * s.span());
}

std::vector<uint64_t> gcra_model(const std::vector<uint64_t>& sends, ModelLimit before, uint64_t t_change,
                                 ModelLimit after) {
  auto T_of = [](const ModelLimit& l) { return static_cast<int64_t>((1'000'000'000ull + l.rate - 1) / l.rate); };
  std::vector<uint64_t> passed;
  bool seen = false;
  int64_t ready = 0;
  for (uint64_t ut : sends) {
    const ModelLimit& l = ut >= t_change ? after : before;
    const int64_t T = T_of(l), tau = (static_cast<int64_t>(l.burst) - 1) * T, t = static_cast<int64_t>(ut);
    if (seen && t < ready) continue;
    ready = seen ? std::max(ready + T, t - tau + T) : t - tau + T;
    seen = true;
    passed.push_back(ut);
  }
  return passed;
}

uint64_t count_between(const std::vector<uint64_t>& sorted, uint64_t from, uint64_t to) {
  auto lo = std::lower_bound(sorted.begin(), sorted.end(), from);
  auto hi = std::lower_bound(sorted.begin(), sorted.end(), to);
  return static_cast<uint64_t>(hi - lo);
}

// ---- Sender -------------------------------------------------------------------------

Sender::Sender(Flow f, uint64_t t0) : flow_(std::move(f)), t0_(t0) {
  const uint64_t n = static_cast<uint64_t>(flow_.pps * flow_.seconds + 0.5);
  log_.times.reserve(n);
  thread_ = std::thread([this] {
    try {
      body();
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  });
}

Sender::~Sender() {
  if (thread_.joinable()) thread_.join();
}

const SendLog& Sender::join() {
  if (!joined_) {
    thread_.join();
    joined_ = true;
    if (!error_.empty()) throw std::runtime_error("sender " + flow_.src + ": " + error_);
  }
  return log_;
}

void Sender::body() {
  enter_netns(flow_.ns);
  if (flow_.cpu >= 0) {
    cpu_set_t cs;
    CPU_ZERO(&cs);
    CPU_SET(flow_.cpu, &cs);
    if (pthread_setaffinity_np(pthread_self(), sizeof cs, &cs) != 0) throw std::runtime_error("pin sender to a CPU");
  }
  const bool raw = !flow_.frame.empty();
  levee::Fd fd;
  std::vector<uint8_t> payload(flow_.payload, 0x5a);
  if (raw) {
    fd.reset(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));  // protocol 0: send only
    if (!fd.valid()) sys_fail("socket(AF_PACKET)");
    sockaddr_ll ll{};
    ll.sll_family = AF_PACKET;
    ll.sll_ifindex = static_cast<int>(if_nametoindex(flow_.dev.c_str()));
    if (ll.sll_ifindex == 0) sys_fail("no interface " + flow_.dev);
    if (bind(fd.get(), reinterpret_cast<sockaddr*>(&ll), sizeof ll) != 0) sys_fail("bind AF_PACKET");
  } else {
    const bool v6 = flow_.src.find(':') != std::string::npos;
    fd.reset(socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) sys_fail("socket");
    socklen_t len = 0;
    sockaddr_storage src = sockaddr_of(flow_.src, 0, len);
    if (bind(fd.get(), reinterpret_cast<sockaddr*>(&src), len) != 0) sys_fail("bind " + flow_.src);
    // Report ENOBUFS and the like instead of pretending the datagram left.
    int one = 1;
    if (v6)
      setsockopt(fd.get(), IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof one);
    else
      setsockopt(fd.get(), IPPROTO_IP, IP_RECVERR, &one, sizeof one);
    sockaddr_storage dst = sockaddr_of(flow_.dst, flow_.port, len);
    if (connect(fd.get(), reinterpret_cast<sockaddr*>(&dst), len) != 0) sys_fail("connect " + flow_.dst);
  }

  const uint64_t n = static_cast<uint64_t>(flow_.pps * flow_.seconds + 0.5);
  const double interval = 1e9 / flow_.pps;
  const uint64_t hard_end = t0_ + static_cast<uint64_t>((flow_.seconds + 10.0) * 1e9);
  for (uint64_t k = 0; k < n; ++k) {
    sleep_until_ns(t0_ + static_cast<uint64_t>(static_cast<double>(k) * interval));
    const uint64_t t = now_ns();
    if (t > hard_end) break;
    if (flow_.seq && payload.size() >= sizeof(uint64_t)) {
      const uint64_t index = log_.sent;
      std::memcpy(payload.data(), &index, sizeof index);
    }
    const ssize_t r = raw ? send(fd.get(), flow_.frame.data(), flow_.frame.size(), 0)
                          : send(fd.get(), payload.data(), payload.size(), 0);
    if (r >= 0) {
      if (log_.sent == 0) log_.t_first = t;
      log_.t_last = t;
      log_.times.push_back(t);
      ++log_.sent;
    } else {
      ++log_.errors;
      log_.last_errno = errno;
      log_.error_times.push_back(t);
    }
  }
}

// ---- receiving -------------------------------------------------------------------

sockaddr_storage sockaddr_of(const std::string& ip, uint16_t port, socklen_t& len) {
  sockaddr_storage ss{};
  if (ip.find(':') != std::string::npos) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    if (inet_pton(AF_INET6, ip.c_str(), &a->sin6_addr) != 1) throw std::invalid_argument("bad address " + ip);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    if (inet_pton(AF_INET, ip.c_str(), &a->sin_addr) != 1) throw std::invalid_argument("bad address " + ip);
    len = sizeof *a;
  }
  return ss;
}

std::string addr_text(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, buf, sizeof buf);
  } else {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr))
      inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], buf, sizeof buf);
    else
      inet_ntop(AF_INET6, &a6->sin6_addr, buf, sizeof buf);
  }
  return buf;
}

namespace {

void set_rcvbuf(int fd, int bytes) {
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
}

}  // namespace

levee::Fd udp_socket(const std::string& ns, int family, uint16_t port, std::initializer_list<int> options) {
  levee::Fd fd = socket_in(ns, family, SOCK_DGRAM, 0);
  set_rcvbuf(fd.get(), 32 << 20);
  int one = 1;
  for (int o : options) setsockopt(fd.get(), SOL_SOCKET, o, &one, sizeof one);
  socklen_t len = 0;
  sockaddr_storage ss = sockaddr_of(family == AF_INET6 ? "::" : "0.0.0.0", port, len);
  if (family == AF_INET6) setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) sys_fail("bind UDP port " + std::to_string(port));
  return fd;
}

levee::Fd packet_socket(const std::string& ns, const std::string& ifname, int rcvbuf,
                        std::initializer_list<int> options) {
  levee::Fd fd;
  in_netns(ns, [&] {
    fd.reset(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL)));
    if (!fd.valid()) sys_fail("socket(AF_PACKET)");
    set_rcvbuf(fd.get(), rcvbuf);
    int one = 1;
    for (int o : options) setsockopt(fd.get(), SOL_PACKET, o, &one, sizeof one);
    sockaddr_ll ll{};
    ll.sll_family = AF_PACKET;
    ll.sll_protocol = htons(ETH_P_ALL);
    ll.sll_ifindex = static_cast<int>(if_nametoindex(ifname.c_str()));
    if (ll.sll_ifindex == 0) sys_fail("no interface " + ifname);
    if (bind(fd.get(), reinterpret_cast<sockaddr*>(&ll), sizeof ll) != 0) sys_fail("bind AF_PACKET " + ifname);
  });
  return fd;
}

// ---- Receiver ----------------------------------------------------------------------

Receiver::Receiver(levee::Fd fd, size_t buf_bytes, Handler on_read)
    : fd_(std::move(fd)), buf_bytes_(buf_bytes), on_read_(std::move(on_read)) {
  thread_ = std::thread([this] { body(); });
}

Receiver::~Receiver() { stop(); }

void Receiver::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void Receiver::finish(unsigned quiet_ms, unsigned max_ms) {
  wait_quiet(last_, quiet_ms, max_ms);
  stop();
}

void Receiver::body() {
  // Batches of recvmmsg: a tap behind the filter may see frames at a flood's rate.
  constexpr size_t kBatch = 64, kCtrl = 256;
  std::vector<uint8_t> data(kBatch * buf_bytes_), ctrl(kBatch * kCtrl);
  std::vector<sockaddr_storage> from(kBatch);
  std::vector<iovec> iov(kBatch);
  std::vector<mmsghdr> msgs(kBatch);
  for (;;) {
    pollfd p{fd_.get(), POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) {
      // Stops only once the socket is drained and quiet: finish() has seen no activity.
      if (stop_) return;
      continue;
    }
    for (;;) {
      for (size_t i = 0; i < kBatch; ++i) {
        iov[i] = {data.data() + i * buf_bytes_, buf_bytes_};
        msgs[i] = {};
        msghdr& h = msgs[i].msg_hdr;
        h.msg_name = &from[i];
        h.msg_namelen = sizeof from[i];
        h.msg_iov = &iov[i];
        h.msg_iovlen = 1;
        h.msg_control = ctrl.data() + i * kCtrl;
        h.msg_controllen = kCtrl;
      }
      const int n = recvmmsg(fd_.get(), msgs.data(), static_cast<unsigned>(kBatch), MSG_DONTWAIT, nullptr);
      if (n <= 0) break;
      const uint64_t t = now_ns();
      for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
        const Received m{data.data() + i * buf_bytes_, std::min<size_t>(msgs[i].msg_len, buf_bytes_), from[i],
                         msgs[i].msg_hdr, t};
        if (on_read_(m)) last_ = t;
      }
    }
  }
}

// ---- UdpReceiver --------------------------------------------------------------------

UdpReceiver::UdpReceiver(const std::string& ns, int family, uint16_t port)
    : rt_minus_mono_(realtime_offset_ns()),
      rx_(udp_socket(ns, family, port, {SO_TIMESTAMPNS, SO_RXQ_OVFL}), 2048,
          [this](const Received& m) { return on_read(m); }) {}

bool UdpReceiver::on_read(const Received& m) {
  uint64_t t = m.t;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m.hdr); c; c = CMSG_NXTHDR(&m.hdr, c)) {
    if (c->cmsg_level != SOL_SOCKET) continue;
    if (c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts;
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      const int64_t rt = static_cast<int64_t>(ts.tv_sec) * 1'000'000'000ll + ts.tv_nsec;
      if (rt > 0) t = static_cast<uint64_t>(rt - rt_minus_mono_);
    } else if (c->cmsg_type == SO_RXQ_OVFL) {
      uint32_t n;
      std::memcpy(&n, CMSG_DATA(c), sizeof n);
      drops_ = n;
    }
  }
  std::lock_guard l(mu_);
  Source& s = by_src_[addr_text(m.from)];
  s.times.push_back(t);
  if (m.len >= sizeof(uint64_t)) {
    uint64_t index;
    std::memcpy(&index, m.data, sizeof index);
    s.indexes.push_back(index);
  }
  return true;
}

uint64_t UdpReceiver::count(const std::string& src) const {
  std::lock_guard l(mu_);
  auto it = by_src_.find(src);
  return it == by_src_.end() ? 0 : it->second.times.size();
}

uint64_t UdpReceiver::total() const {
  std::lock_guard l(mu_);
  uint64_t n = 0;
  for (const auto& [k, v] : by_src_) n += v.times.size();
  return n;
}

std::vector<uint64_t> UdpReceiver::sorted(const std::string& src, std::vector<uint64_t> Source::*field) const {
  std::lock_guard l(mu_);
  auto it = by_src_.find(src);
  if (it == by_src_.end()) return {};
  auto v = it->second.*field;
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<uint64_t> UdpReceiver::times(const std::string& src) const { return sorted(src, &Source::times); }

std::vector<uint64_t> UdpReceiver::indexes(const std::string& src) const { return sorted(src, &Source::indexes); }

std::vector<bool> UdpReceiver::arrived(const std::string& src, size_t sent) const {
  std::vector<bool> got(sent, false);
  for (uint64_t i : indexes(src))
    if (i < got.size()) got[i] = true;
  return got;
}

uint64_t UdpReceiver::count_between(const std::string& src, uint64_t from, uint64_t to) const {
  return lvt::count_between(times(src), from, to);
}

std::string UdpReceiver::summary() const {
  std::lock_guard l(mu_);
  std::string s;
  for (const auto& [k, v] : by_src_) s += k + "=" + std::to_string(v.times.size()) + " ";
  return s;
}

// ---- FrameTap -----------------------------------------------------------------------

FrameTap::FrameTap(const std::string& ns, const std::string& ifname, Dir dir)
    : dir_(dir), rx_(packet_socket(ns, ifname, 32 << 20, {PACKET_AUXDATA}), 2048, [this](const Received& m) {
        return on_read(m);
      }) {}

bool FrameTap::on_read(const Received& m) {
  const auto& from = reinterpret_cast<const sockaddr_ll&>(m.from);
  const bool out = from.sll_pkttype == PACKET_OUTGOING;
  if (out != (dir_ == Out)) return false;
  TapFrame f;
  f.t = m.t;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m.hdr); c; c = CMSG_NXTHDR(&m.hdr, c)) {
    if (c->cmsg_level == SOL_PACKET && c->cmsg_type == PACKET_AUXDATA) {
      tpacket_auxdata aux;
      std::memcpy(&aux, CMSG_DATA(c), sizeof aux);
      if (aux.tp_status & TP_STATUS_VLAN_VALID) ++f.tags;  // stripped outer tag
    }
  }
  parse_frame(m.data, m.len, f);
  std::lock_guard l(mu_);
  frames_.push_back(f);
  return true;
}

std::vector<TapFrame> FrameTap::frames() const {
  std::lock_guard l(mu_);
  return frames_;
}

uint64_t FrameTap::total() const {
  std::lock_guard l(mu_);
  return frames_.size();
}

uint64_t FrameTap::count(const std::function<bool(const TapFrame&)>& pred) const {
  std::lock_guard l(mu_);
  return static_cast<uint64_t>(std::count_if(frames_.begin(), frames_.end(), pred));
}

uint64_t FrameTap::flow_frames(const std::string& src) const {
  std::lock_guard l(mu_);
  uint64_t n = 0;
  for (const auto& f : frames_)
    if (f.l4 == IPPROTO_UDP && f.dport == kPort && (src.empty() || f.src == src)) ++n;
  return n;
}

}  // namespace lvt
