// diff_gen.hpp - the differential test's generator (difftest_test.cpp): random
// policies (classes, their limits, bans, admission and the autopilot, overrides, lists)
// and random frames in phases, each policy and its frames drawn from one seed.
#ifndef LEVEE_TESTS_PROGTEST_DIFF_GEN_HPP
#define LEVEE_TESTS_PROGTEST_DIFF_GEN_HPP

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "datapath.hpp"
#include "frames.hpp"
#include "packet.hpp"

namespace levee::progtest::diff {

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  uint64_t n(uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_); }
  bool p(double x) { return std::bernoulli_distribution(x)(rng_); }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[n(0, v.size() - 1)];
  }

  // A source near the others (so limits, networks and lists meet), or anywhere in the
  // test ranges.
  std::string source(bool v6) {
    if (v6) {
      if (p(0.9)) return "2001:db8:" + std::to_string(n(0, nets_ - 1)) + "::" + std::to_string(n(1, hosts_));
      return "2001:db8:" + hex16() + ":" + hex16() + "::" + hex16();
    }
    if (p(0.9)) return "198.18." + std::to_string(n(0, nets_ - 1)) + "." + std::to_string(n(1, hosts_));
    return "198." + std::to_string(n(18, 19)) + "." + std::to_string(n(0, 255)) + "." + std::to_string(n(0, 255));
  }

  // Sources a policy marks known-good: a few of those near each other (with the
  // autopilot, some of the few hosts of a network that floods).
  std::vector<std::string> good_sources() {
    std::vector<std::string> out;
    for (uint64_t i = n(1, 6); i > 0; --i) {
      const bool v6 = p(0.4);
      if (auto_ && p(0.5)) {
        const std::string net = std::to_string(n(0, 3)), host = std::to_string(n(1, 4));
        out.push_back(v6 ? "2001:db8:" + net + "::" + host : "198.19." + net + "." + host);
      } else {
        out.push_back(source(v6));
      }
    }
    return out;
  }

  // A frame's source: half the time one of a phase's few busy senders (a flood, or a
  // client over its limits), else anyone. The busy ones change every few hundred
  // frames, so a banned source goes quiet, its ban ends, and it may come back.
  std::string sender(bool v6) {
    if (phase_left_ == 0) {
      phase_left_ = auto_ ? n(300, 1500) : n(200, 1200);
      busy_ = p(0.7) ? n(1, 3) : 0;
      busy4_.clear();
      busy6_.clear();
      for (uint64_t i = 0; i < busy_; ++i) {
        busy4_.push_back(source(false));
        busy6_.push_back(source(true));
      }
      // With the autopilot: floods of new sources (from one network, or anywhere) that
      // go over the threshold and escalate their network, and calm spells (known
      // sources, slowly) that release the class and de-escalate networks.
      const uint64_t kind = auto_ ? n(0, 99) : 99;
      phase_ = kind < 45 ? Phase::Flood : kind < 80 ? Phase::Calm : Phase::Mixed;
      if (phase_ == Phase::Flood) focus_ = n(0, 3);
      if (phase_ == Phase::Calm) phase_left_ = n(80, 240);
    }
    --phase_left_;
    // A calm spell: the known hosts, and a few of the last flood's network (which had
    // state by then: its network, calm, is de-escalated at its next sample).
    if (phase_ == Phase::Calm) return p(0.5) ? near(v6) : flooder(v6, true, true);
    if (phase_ == Phase::Flood && p(0.7)) return flooder(v6, p(0.6), p(0.15));
    if (busy_ && p(0.5)) return pick(v6 ? busy6_ : busy4_);
    return source(v6);
  }

  // A source of a flood: of its network (`one`: a few hosts of it with `few`), or
  // anywhere in the test range.
  std::string flooder(bool v6, bool one, bool few) {
    const std::string host = few ? std::to_string(n(1, 4)) : "";
    if (v6) {
      if (one && few) return "2001:db8:" + std::to_string(focus_) + "::" + host;
      return "2001:db8:" + (one ? std::to_string(focus_) : hex16()) + ":" + hex16() + "::" + hex16();
    }
    if (one) return "198.19." + std::to_string(focus_) + "." + (few ? host : std::to_string(n(0, 255)));
    return "198.19." + std::to_string(n(0, 255)) + "." + std::to_string(n(0, 255));
  }

  // A source near the others: one of the few hosts of the policy's few networks.
  std::string near(bool v6) {
    if (v6) return "2001:db8:" + std::to_string(n(0, nets_ - 1)) + "::" + std::to_string(n(1, hosts_));
    return "198.18." + std::to_string(n(0, nets_ - 1)) + "." + std::to_string(n(1, hosts_));
  }

  Bytes frame() {
    const bool v6 = p(0.4);
    pkt::Frame f;
    f.eth();
    const uint64_t tags = pick(std::vector<uint64_t>{0, 0, 0, 0, 0, 1, 1, 2, 3});
    for (uint64_t i = 0; i < tags; ++i) f.vlan(static_cast<uint16_t>(n(0, 4095)), p(0.5) ? 0x8100 : 0x88a8);
    const std::string src = sender(v6);
    bool later = false;  // a fragment that does not start its datagram: ports follow, unread
    if (v6) {
      f.ipv6(src, kDst6);
      const uint64_t exts = p(0.7) ? 0 : n(1, 10);
      for (uint64_t i = 0; i < exts; ++i) {
        if (p(0.2)) {
          later = p(0.4);
          f.ipv6_frag(later ? static_cast<uint16_t>(n(1, 100)) : 0, p(0.5));
          if (later) break;
        } else {
          f.ipv6_ext(pick(std::vector<uint8_t>{0, 43, 60, 60, 135, 139, 140}));
        }
      }
    } else {
      std::vector<uint8_t> opts;
      if (p(0.15)) opts.assign(n(1, 10) * 4, 0x01);
      f.ipv4(src, kDst4, opts);
      if (p(0.1)) {
        later = p(0.5);
        f.ipv4_fragment(later ? static_cast<uint16_t>(n(1, 100)) : 0, p(0.5));
      }
    }
    const uint16_t dport = pick(std::vector<uint16_t>{53, 80, 443, 1500, 1999, 22, static_cast<uint16_t>(n(0, 65535))});
    const uint16_t sport = pick(std::vector<uint16_t>{53, 80, 1500, static_cast<uint16_t>(n(1, 65535))});
    Bytes b;
    switch (n(0, 5)) {
      case 0:
      case 1:
        f.udp(sport, dport);
        break;
      case 2:
      case 3:
        f.tcp(sport, dport, pick(std::vector<uint8_t>{pkt::kTcpSyn, pkt::kTcpSyn, 0x10, 0x12, 0x18, 0x01}));
        break;
      case 4:
        if (v6)
          f.icmp6_echo();
        else
          f.icmp_echo();
        break;
      default:
        break;  // no transport header
    }
    f.payload(n(0, 64));
    if (p(0.1)) f.pad_to(n(60, 120));
    b = f.bytes();
    mangle(b);
    return b;
  }

  // Truncations, odd lengths and flipped bytes.
  void mangle(Bytes& b) {
    const uint64_t what = n(0, 99);
    if (what < 80) return;
    if (what < 88) {
      b.resize(n(14, b.size()));
    } else if (what < 96) {
      b[n(12, std::min<size_t>(b.size() - 1, 80))] = static_cast<uint8_t>(n(0, 255));
    } else {
      const size_t at = n(14, std::min<size_t>(b.size() - 2, 60));
      b[at] = static_cast<uint8_t>(n(0, 255));
      b[at + 1] = static_cast<uint8_t>(n(0, 255));
    }
  }

  // How long to wait before the next frame, so that limits refill and bans end: mostly
  // nothing (a frame every 30 us or so), sometimes a few ms, rarely tens.
  uint64_t gap_ns() {
    if (phase_ == Phase::Calm) return n(80, 300) * 1'000;  // a calm spell: a few thousand frames a second
    if (p(1.0 / 600)) return n(1, 6) * 1'000'000;
    if (p(1.0 / 1500)) return n(10, 40) * 1'000'000;
    return 0;
  }

  // Class `i` of a policy (`last`: its default class); `ban_all`, the prefixes of the
  // classes that ban in every class so far (validate() wants one for them all).
  ClassSpec klass(uint64_t i, bool last, const std::optional<std::pair<unsigned, unsigned>>& ban_all) {
    ClassSpec c;
    c.name = last ? "default" : "c" + std::to_string(i);
    c.syn_auth = SynAuth::Off;  // not "auto" where it fits: the model does not have it
    if (!last) c.match = match();
    // SYN authentication needs all of TCP's packets (validate()): the first class only,
    // so that no class before it takes its SYNs.
    if (i == 0 && !last && p(0.25)) {
      c.match = Match{};
      c.match.protos = {Proto::Tcp};
      if (p(0.5)) c.match.ports.push_back(pick(std::vector<PortRange>{{80, 80}, {443, 443}, {0, 1023}}));
      c.syn_auth = p(0.5) ? SynAuth::Reset : SynAuth::Cookie;
    }
    if (p(0.8)) c.packets = Rate{pick(std::vector<uint64_t>{n(50, 200), n(200, 1000), n(1000, 5000)}), n(1, 8)};
    if (p(0.3) || !c.packets.set()) c.bytes = Rate{n(2000, 40000), n(200, 4000)};
    c.prefix4 = static_cast<unsigned>(pick(std::vector<uint64_t>{32, 32, 30, 28, 24}));
    c.prefix6 = static_cast<unsigned>(pick(std::vector<uint64_t>{128, 64, 64, 56}));
    if (p(0.3)) c.new_sources = Rate{n(20, 400), n(1, 5)};
    if (p(0.3)) {
      c.network.prefix4 = std::min(c.prefix4, static_cast<unsigned>(pick(std::vector<uint64_t>{24, 22, 16})));
      c.network.prefix6 = std::min(c.prefix6, static_cast<unsigned>(pick(std::vector<uint64_t>{48, 40, 32})));
      if (p(0.7)) c.network.packets = Rate{n(100, 3000), n(3, 24)};
      if (p(0.4) || !c.network.packets.set()) c.network.bytes = Rate{n(10000, 100000), n(500, 6000)};
    }
    if (p(0.35)) {
      if (p(0.8)) c.total.packets = Rate{n(100, 3000), n(2, 30)};
      if (p(0.4) || !c.total.packets.set()) c.total.bytes = Rate{n(20000, 300000), n(1000, 20000)};
    }
    if (p(0.45)) {
      // Mostly short bans, so that they end, double and start over within a policy.
      const uint64_t kind = n(0, 9);
      c.ban.ban_ns = kind < 7 ? n(5, 40) * 1'000'000 : kind < 9 ? n(40, 200) * 1'000'000 : n(1, 3) * LV_NSEC_PER_SEC;
      if (p(0.7)) c.ban.max_ns = c.ban.ban_ns * n(1, 2);
      if (p(0.7)) c.ban.forget_ns = n(1, 20) * 1'000'000;
      c.ban.all_classes = p(0.3);
      if (c.ban.all_classes && ban_all) {  // one ban in every class: one prefix for it
        c.prefix4 = ban_all->first;
        c.prefix6 = ban_all->second;
        c.network.prefix4 = std::min(c.network.prefix4, c.prefix4);
        c.network.prefix6 = std::min(c.network.prefix6, c.prefix6);
      }
    }
    c.monitor = p(0.1);
    c.admission = auto_ && !c.new_sources.set() && p(0.7) ? Admission::Auto : Admission::Off;
    c.escalate = auto_ && p(0.6);
    c.autop = autop_;
    return c;
  }

  // The compiled policy's autopilot made quick: `release` of a few ms (a config's is 1 s
  // at least), a short tolerance, a sample of one packet in 4 to 16.
  void patch(lv_policy& slot) const {
    if (!auto_) return;
    for (lv_class& c : slot.classes) {
      if (!(c.flags & (LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE))) continue;
      c.autop.release_ns = release_ns_;
      if (c.flags & LV_CLASS_AUTO_ADMIT) c.autop.burst_ns = burst_ns_;
      if (c.flags & LV_CLASS_ESCALATE) c.autop.sample_shift = static_cast<uint32_t>(sample_shift_);
    }
  }

  // `now_unix_ns`: when it is compiled; a few deny entries expire while its frames run.
  // Rates are such that a source's bucket refills within a policy's run (150 ms or so):
  // tens to thousands of packets a second, bursts of a few.
  Policy policy(uint64_t now_unix_ns) {
    Policy pol;
    // Few hosts a policy make floods (a source over its limits), many make arrivals.
    nets_ = pick(std::vector<uint64_t>{1, 2, 4, 4});
    hosts_ = pick(std::vector<uint64_t>{2, 5, 10, 40, 40});
    // The autopilot in half the policies, its times short enough to engage, release,
    // escalate and de-escalate within one: [auto] as validate() takes it, then
    // patch() shortens `release` (1 s at least in a config) and `burst`.
    auto_ = p(0.5);
    autop_ = AutoSpec{};
    if (auto_) {
      autop_.floor = n(200, 2500);
      autop_.burst_ns = 10'000'000;
      const uint64_t sustain_ms = n(0, 20);
      autop_.sustain_ns = sustain_ms * 1'000'000;
      autop_.release_ns = LV_NSEC_PER_SEC;
      autop_.network_prefix4 = static_cast<unsigned>(pick(std::vector<uint64_t>{16, 24}));
      autop_.network_prefix6 = static_cast<unsigned>(pick(std::vector<uint64_t>{32, 48}));
      autop_.network_rate = Rate{n(150, 1500), n(33, 80)};
      // `release` at least sustain, mostly short so that classes release and networks
      // de-escalate within a policy.
      release_ns_ = n(std::max<uint64_t>(5, sustain_ms), p(0.7) ? std::max<uint64_t>(15, sustain_ms) : 40) * 1'000'000;
      burst_ns_ = n(2, 30) * 1'000'000;
      sample_shift_ = n(2, 4);
    }
    const uint64_t nclasses = n(1, 5);
    std::optional<std::pair<unsigned, unsigned>> ban_all;  // the prefixes of bans in every class
    for (uint64_t i = 0; i < nclasses; ++i) {
      const bool last = i + 1 == nclasses;
      ClassSpec c = klass(i, last, ban_all);
      if (c.ban.all_classes && !ban_all) ban_all = {c.prefix4, c.prefix6};
      pol.classes.push_back(std::move(c));
    }
    if (p(0.15)) {  // when_full = "refuse", the map's count reached within the policy
      pol.iface.refuse_full = true;
      pol.iface.max_sources = static_cast<uint32_t>(n(16, 160));
    }
    pol.iface.events_per_second = pick(std::vector<uint64_t>{100, 100, 1000, 20, 0});
    pol.monitor = p(0.05);
    pol.deny_in_monitor = p(0.5);
    const uint64_t noverrides = n(0, 2);
    for (uint64_t i = 0; i < noverrides; ++i) {
      OverrideSpec o;
      o.name = "o" + std::to_string(i);
      o.packets = Rate{n(20, 2000), n(1, 10)};
      if (p(0.3)) o.bytes = Rate{n(2000, 40000), n(200, 4000)};
      if (p(0.5)) o.classes.push_back(pick(pol.classes).name);
      pol.overrides.push_back(o);
    }
    const uint64_t nlist = n(0, 8);
    unsigned expiring = 0;
    for (uint64_t i = 0; i < nlist; ++i) {
      ListEntry e;
      e.cidr = prefix();
      // A prefix is listed once (validate() refuses it twice: one verdict a prefix).
      if (std::any_of(pol.lists.begin(), pol.lists.end(), [&](const ListEntry& x) {
            return x.cidr.family == e.cidr.family && x.cidr.len == e.cidr.len && x.cidr.addr == e.cidr.addr;
          }))
        continue;
      e.kind = pick(std::vector<lv_list_kind>{LV_LIST_ALLOW, LV_LIST_DENY, LV_LIST_OVERRIDE});
      if (e.kind == LV_LIST_OVERRIDE) {
        if (pol.overrides.empty()) continue;
        OverrideSpec& o = pol.overrides[n(0, pol.overrides.size() - 1)];
        e.override_name = o.name;
        o.cidrs.push_back(e.cidr);
      }
      // An expiring deny, up to two a policy (deeper nestings of expiring entries fall
      // back to the nearest that never expires, by design: docs/CONFIG.md), expiring
      // within the policy's run of about 100 ms.
      if (e.kind == LV_LIST_DENY && expiring < 2 && p(0.4)) {
        ++expiring;
        e.expires_unix_ns = now_unix_ns + n(1, 150) * 1'000'000;
      }
      pol.lists.push_back(e);
    }
    return pol;
  }

 private:
  std::string hex16() {
    std::ostringstream s;
    s << std::hex << n(0, 0xffff);
    return s.str();
  }
  Match match() {
    Match m;
    const std::vector<Proto> all{Proto::Tcp, Proto::Udp, Proto::Icmp, Proto::Icmp6, Proto::Other};
    for (Proto pr : all)
      if (p(0.35)) m.protos.push_back(pr);
    const bool ported = m.protos.empty() || std::all_of(m.protos.begin(), m.protos.end(),
                                                        [](Proto x) { return x == Proto::Tcp || x == Proto::Udp; });
    if (ported && p(0.5)) {
      // Destination ports, or (a quarter of the time) source ports.
      auto& ranges = p(0.25) ? m.sports : m.ports;
      ranges.push_back(pick(std::vector<PortRange>{{53, 53}, {80, 80}, {443, 443}, {1000, 1999}, {0, 1023}}));
      if (m.protos.empty()) m.protos = {Proto::Tcp, Proto::Udp};
    }
    if (m.protos == std::vector<Proto>{Proto::Tcp} && p(0.4)) m.syn = true;
    if (m.empty()) m.protos.push_back(pick(all));
    return m;
  }
  Cidr prefix() {
    const bool v6 = p(0.4);
    const std::string a = source(v6);
    const unsigned len = static_cast<unsigned>(v6 ? pick(std::vector<uint64_t>{128, 128, 126, 64, 48, 33})
                                                  : pick(std::vector<uint64_t>{32, 32, 30, 28, 24, 16}));
    Cidr c = cidr(a + (v6 ? "/128" : "/32"));
    c.addr = mask_prefix(c.addr, len);
    c.len = len;
    return c;
  }
  std::mt19937_64 rng_;
  enum class Phase { Mixed, Flood, Calm };
  Phase phase_ = Phase::Mixed;
  uint64_t focus_ = 0;  // a flood's network
  bool auto_ = false;   // this policy's classes have the autopilot
  uint64_t release_ns_ = 0, burst_ns_ = 0, sample_shift_ = 5;
  AutoSpec autop_;
  uint64_t nets_ = 4, hosts_ = 40;      // the sources near each other, this policy's
  uint64_t phase_left_ = 0, busy_ = 0;  // frames left in this phase, its busy senders
  std::vector<std::string> busy4_, busy6_;
};

}  // namespace levee::progtest::diff

#endif  // LEVEE_TESTS_PROGTEST_DIFF_GEN_HPP
