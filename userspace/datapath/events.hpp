// events.hpp - the event log of an interface, read: what the datapath reports through
// its ring buffer (lv_events: a source's first drop, a ban, a spent new-source budget, a
// full map) and the ends of bans, which the datapath does not see (a banned source's
// next packet after its ban simply conforms) and the controller finds in lv_bans.
//
// EventSource reads both and decodes them into EventRecords; export/events.hpp renders
// those as lines of text or JSON objects. `levee events` and `levee run` use them as
// they are.
//
// The ring buffer has one consumer position, shared by every reader: two readers of one
// interface each get part of the events. Events not read before (up to the ring's
// 256 KB, about 4,600) are delivered first, with the times they happened.
#pragma once

#include <bpf/libbpf.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/result.hpp"
#include "datapath/maps.hpp"
#include "datapath/pins.hpp"
#include "datapath/policy_map.hpp"
#include "datapath/releases.hpp"
#include "levee_abi.h"

namespace levee {

// Events of levee run itself, never in the ring (ids past the datapath's enum
// lv_event_type): SYN authentication's proxy following the host (daemon/syn_watch.hpp).
enum ControllerEvent : unsigned {
  kEvSynProxy = 64,    // proxying (value 1) or answering in reset mode (0), and why
  kEvTcpOptions = 65,  // the options SYN-ACKs leave out now (value: LV_TCP_OFF_*)
  kEvTcFilter = 66,    // levee's tc filter put back: value its priority, count its handle
};

// One event, decoded: names resolved against the policy, time on the wall clock.
struct EventRecord {
  unsigned type = 0;  // enum lv_event_type, or ControllerEvent
  uint64_t time_unix_ns = 0;
  std::string iface;
  std::string address;  // the key's address, as a prefix when the class keys a network, or
                        // the escalated network's; "" for an event of the class as a whole
  uint8_t family = 0;   // 4 or 6
  unsigned class_id = 0;
  std::string class_name;          // "" when the id is not a class of the policy now
  std::optional<unsigned> reason;  // enum lv_reason; none for ban_ended
  uint32_t count = 0;              // banned, ban_ended: offences; engaged: the class's engagements so far
  uint64_t value = 0;              // banned, ban_ended: the ban's length in ns; engaged: the threshold (new
                                   // sources/s); escalated: the network's limit (packets/s); released,
                                   // deescalated: how long it lasted, ns
  uint32_t suppressed = 0;         // events the sending CPU could not send before this one
  bool every_class = false;        // banned, ban_ended: the ban applies in every class
  bool lifted = false;             // ban_ended: its record went before its end (levee unban)
  bool syn_auto = false;           // engaged, released: the class has syn_auth = "auto" (it challenges
                                   // the SYNs of new TCP sources while engaged)
  bool monitor = false;            // engaged, escalated, banned: the class monitors (nothing is refused;
                                   // a ban only counts, and is not shared with a CrowdSec fleet)
  std::string why;                 // syn_proxy: why it proxies or not
};

// An event of the datapath, decoded at `clocks`.
EventRecord decode_event(const lv_event& e, const lv_policy& p, const Clocks& clocks, const std::string& iface);

// Ban ends, from successive reads of lv_bans. A ban seen active ends when its until_ns
// has passed (reported at that time), when its record starts another ban (the earlier
// one ended first), or when its record disappears before its end (lifted: levee unban;
// reported at the poll that noticed).
class BanEnds {
 public:
  struct Ended {
    lv_key key;
    lv_ban ban;
    uint64_t at_ns;  // CLOCK_MONOTONIC: until_ns, or the poll's time when lifted
    bool lifted;
  };
  // Every record of one read at `now_ns`; returns what ended since the previous read.
  // The first read only learns which bans are active.
  std::vector<Ended> update(const std::vector<std::pair<lv_key, lv_ban>>& records, uint64_t now_ns);
  size_t tracked() const { return active_.size(); }

 private:
  struct Less {
    bool operator()(const lv_key& a, const lv_key& b) const;
  };
  std::map<lv_key, lv_ban, Less> active_;
};

// A ban end as an event (type LV_EV_BAN_ENDED).
EventRecord decode_ban_end(const BanEnds::Ended& e, const lv_policy& p, const Clocks& clocks, const std::string& iface);
// A release by the controller (datapath/releases.hpp) as an event, at `clocks`' time.
EventRecord decode_release(const Released& e, const lv_policy& p, const Clocks& clocks, const std::string& iface);

// Reads one interface's events: the ring buffer, and lv_bans once a second for ban ends
// (within the interface's event rate, shared with the datapath's; their "suppressed" counts
// the ban ends left out).
class EventSource {
 public:
  // The pair of clocks events are converted with. Read again at every poll, so that a
  // step of the wall clock (NTP, an operator's date -s) moves the times of the events
  // after it instead of skewing every one for the life of `levee run`; a test steps its own.
  using ClockSource = std::function<Clocks()>;

  static Result<std::unique_ptr<EventSource>> open(const std::string& iface, ClockSource clocks = Clocks::read);
  // The same on maps already open (`pins.iface` names them in messages and events).
  static Result<std::unique_ptr<EventSource>> open(Pinned pins, ClockSource clocks = Clocks::read);
  // Also release, once a second, what the datapath's autopilot has not for want of a
  // packet (datapath/releases.hpp), and say so among the events: `levee run` does, a reader
  // such as `levee events` does not.
  void release_autopilot() { releasing_ = true; }
  // A network a walk found escalated (its key in lv_state), for the releases.
  void track_escalated(const lv_key& watch_key) { releases_.track(watch_key); }
  ~EventSource();
  EventSource(const EventSource&) = delete;
  EventSource& operator=(const EventSource&) = delete;

  // Waits up to `timeout` for events and hands each to `fn` (decoded), which returns
  // false to stop early. Returns how many it handed over; a signal ends the wait early
  // (0 events, no error).
  using Sink = std::function<bool(const EventRecord&)>;
  Result<size_t> poll(std::chrono::milliseconds timeout, const Sink& fn);

 private:
  EventSource() = default;
  static int on_sample(void* ctx, void* data, size_t size);
  Status poll_bans(uint64_t now_ns, const Sink& fn);
  Status poll_releases(uint64_t now_ns, const Sink& fn);
  // An event through the event rate the datapath's take from, with what it suppressed.
  bool send_own(EventRecord r, uint64_t now_ns, const Sink& fn);

  std::string iface_;
  Pinned pins_;
  std::optional<PolicyMap> policy_;
  ring_buffer* ring_ = nullptr;
  ClockSource clock_source_;
  Clocks clocks_;  // at the current poll
  BanEnds bans_;
  AutopilotReleases releases_;
  bool releasing_ = false;
  std::optional<SharedMap> shared_;  // the event rate's GCRA
  uint64_t own_suppressed_ = 0;      // its own events (ban ends, releases) over the event rate since the last one sent
  std::chrono::steady_clock::time_point next_ban_poll_;
  const Sink* sink_ = nullptr;  // during poll()
  size_t handed_ = 0;
  bool stop_ = false;
};

}  // namespace levee
