// traffic.hpp - paced senders and counting receivers for the end-to-end tests.
//
// Every socket is created inside the namespace it belongs to (a socket stays in the
// namespace it was made in), on a thread that joined it. Senders pace with
// clock_nanosleep(TIMER_ABSTIME) on CLOCK_MONOTONIC and record what they actually did:
// how many sends succeeded and when, so expectations come from measured times, not
// nominal rates. Receivers (UDP sockets, AF_PACKET taps) share one receive loop, the
// Receiver, which owns its socket. Loops are bounded in count and in time.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/fd.hpp"
#include "sandbox.hpp"

namespace lvt {

inline constexpr uint16_t kPort = 5001;   // the UDP flows' port
inline constexpr uint16_t kPort2 = 5002;  // a second flow's, another class's

// What a sender did.
struct SendLog {
  uint64_t sent = 0;    // successful sends
  uint64_t errors = 0;  // failed sends (not counted in sent)
  int last_errno = 0;
  uint64_t t_first = 0, t_last = 0;   // CLOCK_MONOTONIC ns of the first and last successful send
  std::vector<uint64_t> times;        // every successful send
  std::vector<uint64_t> error_times;  // every failed send (ENOBUFS: the veth's ring was full)
  double span() const { return t_last > t_first ? secs(t_last - t_first) : 0.0; }
  // Successful sends with t in [from, to).
  uint64_t sent_between(uint64_t from, uint64_t to) const;
  // Largest gap between consecutive sends in [from, to), in seconds.
  double max_gap(uint64_t from, uint64_t to) const;
  // The sends with t in [from, to), as a log of their own.
  SendLog window(uint64_t from, uint64_t to) const;
};

// Several senders' logs as one (sources that share one bucket): every send, sorted.
SendLog merged(std::initializer_list<const SendLog*> logs);

struct Flow {
  std::string ns;   // sender namespace
  std::string src;  // source address (bound), IPv4 or IPv6
  std::string dst;  // destination address
  uint16_t port = kPort;
  double pps = 1000;
  double seconds = 1;
  size_t payload = 32;  // UDP payload bytes
  // Raw mode: send `frame` on interface `dev` through an AF_PACKET socket instead.
  std::vector<uint8_t> frame;
  std::string dev;
  // UDP mode: the payload starts with the send's index among the successful sends
  // (uint64_t, host order; payload >= 8), so a receiver can tell which sends were lost
  // and when they had been sent (SendLog::times[index]).
  bool seq = false;
  // >= 0: the sending thread runs on this CPU only.
  int cpu = -1;
};

// One paced flow on its own thread, started at t0 (CLOCK_MONOTONIC ns).
class Sender {
 public:
  Sender(Flow f, uint64_t t0);
  ~Sender();
  Sender(const Sender&) = delete;
  Sender& operator=(const Sender&) = delete;
  const SendLog& join();  // waits for the end of the flow
  const Flow& flow() const { return flow_; }

 private:
  void body();
  Flow flow_;
  uint64_t t0_;
  SendLog log_;
  std::string error_;
  std::thread thread_;
  bool joined_ = false;
};

// A start time a little ahead, for senders that should start together.
inline uint64_t start_soon(uint64_t ms = 100) { return now_ns() + ms * 1'000'000ull; }
// Sleeps until t (CLOCK_MONOTONIC ns).
void sleep_until_ns(uint64_t t);

// ---- receiving ----------------------------------------------------------------------

// A socket address for an IPv4 or IPv6 address and a port; `len` gets its length.
sockaddr_storage sockaddr_of(const std::string& ip, uint16_t port, socklen_t& len);
// The IP address of a sender as text (an IPv4-mapped IPv6 address as IPv4).
std::string addr_text(const sockaddr_storage& ss);

// A UDP socket made in namespace ns, bound to `port` on every address of `family` (IPv6
// only for AF_INET6), with a 32 MB receive buffer and each SOL_SOCKET option of
// `options` turned on.
levee::Fd udp_socket(const std::string& ns, int family, uint16_t port, std::initializer_list<int> options = {});
// An AF_PACKET socket made in namespace ns, bound to its interface `ifname`, seeing every
// protocol, with a receive buffer of `rcvbuf` bytes and each SOL_PACKET option of
// `options` turned on.
levee::Fd packet_socket(const std::string& ns, const std::string& ifname, int rcvbuf,
                        std::initializer_list<int> options = {});

// One datagram or frame as a Receiver read it.
struct Received {
  const uint8_t* data;           // its bytes, up to the receiver's buffer size
  size_t len;                    // how many of them
  const sockaddr_storage& from;  // the sender: sockaddr_in/sockaddr_in6, or sockaddr_ll for AF_PACKET
  msghdr& hdr;                   // for its control messages (CMSG_FIRSTHDR(&hdr))
  uint64_t t;                    // CLOCK_MONOTONIC ns when it was read
};

// The receive loop under every counting receiver: reads the socket it owns on a thread of
// its own, in batches, and hands each message to `on_read`, which returns whether the
// message counts as activity (finish() waits for a quiet spell of those). The
// destructor stops the thread, then closes the socket; members the handler uses must be
// declared before the Receiver, so that they outlive its thread.
class Receiver {
 public:
  using Handler = std::function<bool(const Received&)>;
  // buf_bytes: how much of each message is read (the rest is cut off).
  Receiver(levee::Fd fd, size_t buf_bytes, Handler on_read);
  ~Receiver();
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;
  // Waits until nothing counted arrived for quiet_ms (at most max_ms), then stops reading.
  void finish(unsigned quiet_ms, unsigned max_ms);
  int fd() const { return fd_.get(); }

 private:
  void body();
  void stop();
  levee::Fd fd_;
  size_t buf_bytes_;
  Handler on_read_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> last_{0};
  std::thread thread_;
};

// Counts UDP datagrams per source address, with kernel receive times; for the datagrams
// of Flow{.seq = true} senders also which sends arrived (their indexes).
class UdpReceiver {
 public:
  UdpReceiver(const std::string& ns, int family, uint16_t port = kPort);
  // Waits until nothing arrived for `quiet_ms` (at most max_ms), then stops.
  void finish(unsigned quiet_ms = 300, unsigned max_ms = 5000) { rx_.finish(quiet_ms, max_ms); }
  uint64_t count(const std::string& src) const;
  uint64_t total() const;
  // Receive times (CLOCK_MONOTONIC ns) of one source, sorted.
  std::vector<uint64_t> times(const std::string& src) const;
  uint64_t count_between(const std::string& src, uint64_t from, uint64_t to) const;
  // The send indexes received from src (Flow::seq), sorted, duplicates kept.
  std::vector<uint64_t> indexes(const std::string& src) const;
  // Which of the first `sent` sends of src arrived (Flow::seq): [i] for send i.
  std::vector<bool> arrived(const std::string& src, size_t sent) const;
  // Datagrams the socket's buffer dropped (SO_RXQ_OVFL).
  int64_t socket_drops() const { return drops_.load(); }
  std::string summary() const;

 private:
  bool on_read(const Received& m);
  struct Source {
    std::vector<uint64_t> times, indexes;
  };
  std::vector<uint64_t> sorted(const std::string& src, std::vector<uint64_t> Source::*field) const;
  int64_t rt_minus_mono_ = 0;
  std::atomic<int64_t> drops_{0};
  mutable std::mutex mu_;
  std::map<std::string, Source> by_src_;
  Receiver rx_;  // last: its thread ends before the members it writes go
};

// What an AF_PACKET tap saw of one frame.
struct TapFrame {
  uint64_t t = 0;
  size_t len = 0;
  int tags = 0;            // VLAN tags (in the frame or stripped into metadata)
  uint16_t ethertype = 0;  // innermost
  std::string src;         // IP source, empty if not IP
  uint8_t l4 = 0;          // IP protocol
  uint16_t dport = 0;      // UDP or TCP destination port
  uint8_t tcp_flags = 0;   // TCP flags byte (kTcpSyn = 0x02, ACK = 0x10, RST = 0x04)
  bool tcp_syn() const { return l4 == 6 && (tcp_flags & 0x12) == 0x02; }  // SYN without ACK
};

// Every frame crossing an interface in one direction (In: received by it, Out: sent).
class FrameTap {
 public:
  enum Dir { In, Out };
  FrameTap(const std::string& ns, const std::string& ifname, Dir dir);
  void finish(unsigned quiet_ms = 300, unsigned max_ms = 5000) { rx_.finish(quiet_ms, max_ms); }
  std::vector<TapFrame> frames() const;
  uint64_t total() const;
  // Frames of our UDP flows (destination port kPort) from one source ("" = any).
  uint64_t flow_frames(const std::string& src = "") const;
  // Frames for which pred holds.
  uint64_t count(const std::function<bool(const TapFrame&)>& pred) const;

 private:
  bool on_read(const Received& m);
  Dir dir_;
  mutable std::mutex mu_;
  std::vector<TapFrame> frames_;
  Receiver rx_;  // last: its thread ends before the members it writes go
};

// A reference GCRA, written out here independently of bpf/shared/limiter.h, replayed over a
// sender's actual send times: which sends pass. Earliest-eligible-time form: a packet
// passes when t >= ready, then ready = max(ready + T, t - tau + T); a live change at
// t_change switches (T, tau) and keeps ready. T = ceil(1e9 / rate), tau = (burst-1)*T.
struct ModelLimit {
  double rate, burst;
};
std::vector<uint64_t> gcra_model(const std::vector<uint64_t>& sends, ModelLimit before, uint64_t t_change = UINT64_MAX,
                                 ModelLimit after = {0, 0});
uint64_t count_between(const std::vector<uint64_t>& sorted, uint64_t from, uint64_t to);

// A raw frame for Flow::frame, from the sender's MAC to the receiver's (Sandbox::kTxMac,
// kRxMac), IPv4 or IPv6 after the addresses: a TCP SYN without ACK, padded to the
// Ethernet minimum of 60 bytes like a real one.
std::vector<uint8_t> syn_frame(const std::string& src, const std::string& dst, uint16_t dport, uint16_t sport = 40000);
// The same of an IPv6 UDP datagram of 18 bytes whose header follows `exts` destination
// options headers (8 bytes each).
std::vector<uint8_t> ipv6_ext_udp_frame(const std::string& src, const std::string& dst, uint16_t dport, int exts);

// Frames a GCRA of (rate, burst) passes from a source that floods over
// [t_first, t_last]: burst + rate * (t_last - t_first), never more than were sent.
double gcra_expected(double rate, double burst, const SendLog& s);

}  // namespace lvt
