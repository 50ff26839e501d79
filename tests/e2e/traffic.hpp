// traffic.hpp - paced senders and counting receivers for the end-to-end tests.
//
// Every socket is created inside the namespace it belongs to (a socket stays in the
// namespace it was made in), on a thread that joined it. Senders pace with
// clock_nanosleep(TIMER_ABSTIME) on CLOCK_MONOTONIC and record what they actually did:
// how many sends succeeded and when, so expectations come from measured times, not
// nominal rates. Loops are bounded in count and in time.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sandbox.hpp"

namespace lvt {

inline constexpr uint16_t kPort = 5001;

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

// Counts UDP datagrams per source address, with kernel receive times.
class UdpReceiver {
 public:
  UdpReceiver(const std::string& ns, int family, uint16_t port = kPort);
  ~UdpReceiver();
  // Waits until nothing arrived for `quiet_ms` (at most max_ms), then stops.
  void finish(unsigned quiet_ms = 300, unsigned max_ms = 5000);
  uint64_t count(const std::string& src) const;
  uint64_t total() const;
  // Receive times (CLOCK_MONOTONIC ns) of one source.
  std::vector<uint64_t> times(const std::string& src) const;
  uint64_t count_between(const std::string& src, uint64_t from, uint64_t to) const;
  std::string summary() const;

 private:
  void body();
  int fd_ = -1;
  int64_t rt_minus_mono_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> last_rx_{0};
  mutable std::mutex mu_;
  std::map<std::string, std::vector<uint64_t>> by_src_;
  std::thread thread_;
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
  ~FrameTap();
  void finish(unsigned quiet_ms = 300, unsigned max_ms = 5000);
  std::vector<TapFrame> frames() const;
  uint64_t total() const;
  // Frames of our UDP flows (destination port kPort) from one source ("" = any).
  uint64_t flow_frames(const std::string& src = "") const;
  // Frames for which pred holds.
  uint64_t count(const std::function<bool(const TapFrame&)>& pred) const;

 private:
  void body();
  int fd_ = -1;
  Dir dir_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> last_rx_{0};
  mutable std::mutex mu_;
  std::vector<TapFrame> frames_;
  std::thread thread_;
};

// A reference GCRA, written out here independently of bpf/limiter.h, replayed over a
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

// Frames a GCRA of (rate, burst) passes from a source that floods over
// [t_first, t_last]: burst + rate * (t_last - t_first), never more than were sent.
double gcra_expected(double rate, double burst, const SendLog& s);

}  // namespace lvt
