// levee-progbench - per-packet cost of levee's datapath paths beside baselines,
// measured in the kernel with BPF_PROG_TEST_RUN (the kernel times `repeat` runs of the
// program on one frame and reports ns per run). Each case runs `runs` times; the
// median is reported. The thread is pinned to one CPU.
//
//   levee-progbench [--repeat 10M] [--runs 5] [--cpu N] [--quick] [--json FILE]
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <sched.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/units.hpp"
#include "datapath/maps.hpp"
#include "datapath/policy_map.hpp"
#include "host_netns.hpp"
#include "levee_bpf.skel.h"
#include "packet.hpp"
#include "policy/compile.hpp"
#include "policy/limits.hpp"
#include "policy/policy.hpp"
#include "policy/validate.hpp"
#include "progbench.skel.h"

namespace {

using levee::Limits;

struct Options {
  uint64_t repeat = 10'000'000;
  unsigned runs = 5;
  int cpu = -1;
  bool quick = false;
  std::string json;
  uint32_t full_entries = 1'000'000;
  std::string only;  // --case: run the cases whose name holds it (and the floor)
};

struct Result {
  std::string name;
  std::string what;
  uint64_t repeat = 0;
  std::vector<double> runs;
  double median = 0;
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One BPF_PROG_TEST_RUN: average ns per run of the program over `repeat` runs.
double test_run(int prog_fd, const std::vector<uint8_t>& frame, uint64_t repeat, uint32_t want_verdict) {
  std::vector<uint8_t> out(frame.size() + 256);
  bpf_test_run_opts o{};
  o.sz = sizeof o;
  o.data_in = frame.data();
  o.data_size_in = static_cast<uint32_t>(frame.size());
  o.data_out = out.data();
  o.data_size_out = static_cast<uint32_t>(out.size());
  o.repeat = static_cast<int>(repeat);
  if (int err = bpf_prog_test_run_opts(prog_fd, &o); err)
    throw std::runtime_error(fmt::format("BPF_PROG_TEST_RUN: {}", strerror(-err)));
  if (o.retval != want_verdict)
    throw std::runtime_error(fmt::format("unexpected verdict {} (wanted {})", o.retval, want_verdict));
  return o.duration;
}

template <typename Skel>
struct SkelPtr {
  Skel* s = nullptr;
  void (*destroy)(Skel*) = nullptr;
  ~SkelPtr() {
    if (s) destroy(s);
  }
};

// The limiter alone: the autopilot (on by default) off.
void autopilot_off(lv_class& c) { c.flags &= ~uint32_t{LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE}; }

// One class, no lists: written whole with one map update (nothing runs the program yet).
// One class of `l`; `extra` adds what a Limits cannot say (admission, network, total).
// `answer`: what SYN authentication may answer (none: unlimited).
void set_policy(int policy_fd, const Limits& l, const std::function<void(lv_class&)>& extra = {},
                const lv_answer& answer = {}) {
  auto ctl = std::make_unique<lv_control>();
  ctl->abi_version = LV_ABI_VERSION;
  lv_policy& p = ctl->slot[0];
  p.nr_classes = 1;
  p.classes[0] = levee::compile_class(l, levee::clock_tick_ns());
  p.answer = answer;
  if (extra) extra(p.classes[0]);
  ctl->slot[1] = p;
  uint32_t zero = 0;
  if (bpf_map_update_elem(policy_fd, &zero, ctl.get(), BPF_ANY) != 0)
    throw std::runtime_error(fmt::format("write lv_policy: {}", strerror(errno)));
}

// SYN authentication's proxy mode on: as if levee's tc program were on the interface.
void set_handoff(int policy_fd) {
  auto ctl = std::make_unique<lv_control>();
  uint32_t zero = 0;
  if (bpf_map_lookup_elem(policy_fd, &zero, ctl.get()) != 0)
    throw std::runtime_error(fmt::format("read lv_policy: {}", strerror(errno)));
  ctl->handoff = 1;
  ctl->mss4 = 1460;
  ctl->mss6 = 1440;
  if (bpf_map_update_elem(policy_fd, &zero, ctl.get(), BPF_ANY) != 0)
    throw std::runtime_error(fmt::format("write lv_policy: {}", strerror(errno)));
}

std::vector<uint8_t> ipv4_frame(const char* src) {
  return levee::pkt::Frame().eth().ipv4(src, "198.19.0.1").udp(1234, 9).pad_to(64).bytes();
}

class Bench {
 public:
  explicit Bench(Options o) : o_(std::move(o)) {}

  // Whether --case asks for this case: the floor always runs, every ratio needs it.
  bool wants(const std::string& name) const {
    return o_.only.empty() || name == "floor" || name.find(o_.only) != std::string::npos;
  }

  void add(const std::string& name, const std::string& what, uint64_t repeat, const std::function<double()>& one_run) {
    if (!wants(name)) return;
    Result r{name, what, repeat, {}, 0};
    for (unsigned i = 0; i < o_.runs; ++i) r.runs.push_back(one_run());
    r.median = median_of(r.runs);
    fmt::print("{:<24} {:>8.1f} ns  (runs: {})\n", name, r.median, fmt::join(r.runs, " "));
    std::fflush(stdout);
    results_.push_back(std::move(r));
  }

  const Options& opts() const { return o_; }
  const std::vector<Result>& results() const { return results_; }

 private:
  Options o_;
  std::vector<Result> results_;
};

void run_all(Bench& b) {
  const Options& o = b.opts();
  const auto frame = ipv4_frame("198.18.0.7");

  // Baselines, from the bench object.
  {
    SkelPtr<progbench> sk{progbench__open(), progbench__destroy};
    if (!sk.s || progbench__load(sk.s)) throw std::runtime_error("load progbench object");
    int drop = bpf_program__fd(sk.s->progs.bench_drop);
    int parse = bpf_program__fd(sk.s->progs.bench_parse);
    int floor = bpf_program__fd(sk.s->progs.bench_floor);
    // The floor's lookup must hit: install the source first.
    lv_key key{};
    key.addr[2] = htonl(0xffff);
    key.addr[3] = htonl(0xc6120007);  // 198.18.0.7
    key.family = LV_AF_INET;
    lv_state st{};
    bpf_map_update_elem(bpf_map__fd(sk.s->maps.bench_lru), &key, &st, BPF_ANY);
    b.add("bare_drop", "return XDP_DROP", o.repeat, [&] { return test_run(drop, frame, o.repeat, XDP_DROP); });
    b.add("parse_drop", "parse to the source address, drop", o.repeat,
          [&] { return test_run(parse, frame, o.repeat, XDP_DROP); });
    b.add("floor", "parse, one LRU lookup (hit), one bpf_ktime_get_ns, drop", o.repeat,
          [&] { return test_run(floor, frame, o.repeat, XDP_DROP); });
  }

  // levee's own object, as the product embeds it, with a policy as the controller
  // compiles and publishes it (class table, event rate, flags).
  auto run_levee = [&](const std::string& name, const std::string& what, levee::CompiledPolicy& c, uint64_t warm,
                       uint32_t verdict, const std::vector<uint8_t>& fr) {
    SkelPtr<levee_bpf> sk{levee_bpf__open(), levee_bpf__destroy};
    if (!sk.s) throw std::runtime_error("open levee object");
    bpf_map__set_max_entries(sk.s->maps.lv_state, 1 << 16);
    if (levee_bpf__load(sk.s)) throw std::runtime_error("load levee object");
    auto pm = levee::PolicyMap::map(bpf_map__fd(sk.s->maps.lv_policy), levee::list_fds_of(sk.s));
    if (!pm) throw std::runtime_error(pm.error().message());
    auto st = pm->init(c.slot, levee::Lists{c.list4, c.list6}, 0, LV_MODE_AUTO);
    if (!st) throw std::runtime_error(st.error().message());
    int fd = bpf_program__fd(sk.s->progs.levee_xdp);
    // Warm up: create the source's state and, for the drop cases, spend its burst.
    test_run(fd, fr, warm, verdict);
    b.add(name, what, o.repeat, [&] { return test_run(fd, fr, o.repeat, verdict); });
  };
  auto levee_case = [&](const std::string& name, const std::string& what, Limits l, uint32_t verdict,
                        const std::function<void(lv_class&)>& extra = {}, const std::vector<uint8_t>* fr = nullptr) {
    if (!b.wants(name)) return;
    levee::CompiledPolicy c = levee::compile(levee::one_class_policy(l), levee::Clocks::read());
    if (extra) extra(c.slot.classes[c.slot.order[0]]);
    run_levee(name, what, c, std::min<uint64_t>(l.burst, 1000) + 1000, verdict, fr ? *fr : frame);
  };
  levee_case("levee_pass", "known source under its limit (cached-clock check, fine clock, CAS)",
             Limits{10'000'000, 1'000'000'000, 32, 64}, XDP_PASS);
  // What the autopilot (on by default) costs the pass path: the watch's count of passed
  // packets, one in 32 charged to its network (bpf/watch.h).
  levee_case("levee_pass_no_autopilot", "levee_pass with the autopilot off (new_sources, escalate = \"off\")",
             Limits{10'000'000, 1'000'000'000, 32, 64}, XDP_PASS, autopilot_off);
  // What syn_auth = "auto" (on by default) costs a calm class's TCP: a flag and this
  // CPU's memory of the class (bpf/syn_auto.h), against "off".
  const std::vector<uint8_t> ack =
      levee::pkt::Frame().eth().ipv4("198.18.0.7", "198.19.0.1").tcp(40000, 80, levee::pkt::kTcpAck).pad_to(64).bytes();
  levee_case("levee_pass_tcp", "levee_pass of a TCP ACK, syn_auth \"auto\" (the default) in a calm class",
             Limits{10'000'000, 1'000'000'000, 32, 64}, XDP_PASS, {}, &ack);
  levee_case(
      "levee_pass_tcp_syn_off", "levee_pass_tcp with syn_auth = \"off\"", Limits{10'000'000, 1'000'000'000, 32, 64},
      XDP_PASS, [](lv_class& c) { c.flags &= ~uint32_t{LV_CLASS_SYN_AUTO}; }, &ack);
  levee_case("levee_drop", "known source over its limit, rate 100 burst 100 (fast reject on cached clock)",
             Limits{100, 100, 32, 64}, XDP_DROP);
  levee_case("levee_drop_fine", "known source over its limit, rate 100 burst 1 (fine clock every packet)",
             Limits{100, 1, 32, 64}, XDP_DROP);
  // The pass path through every level: the source, its /24, the class total (leases).
  levee_case("levee_pass_levels", "levee_pass with a /24 network limit and a class total",
             Limits{10'000'000, 1'000'000'000, 32, 64}, XDP_PASS, [](lv_class& c) {
               c.net_pkt = levee::compile_packet_limit(levee::Rate{1'000'000'000, 1'000'000'000});
               c.net_mask4 = htonl(0xffffff00);
               c.total_pkt = c.net_pkt;
               c.lease_ns = 1'000'000;
               c.flags |= LV_CLASS_NETWORK | LV_CLASS_TOTAL;
             });

  // The same paths under a policy of 32 classes (the frame falls in the last, the
  // default) and 100,000 deny entries (/32s of 198.18.0.0/15, not the frame's source):
  // the class table is one load whatever the number of classes; the list costs one
  // LPM trie lookup.
  auto policy_case = [&](const std::string& name, const std::string& what, levee::Rate r, uint32_t verdict) {
    if (!b.wants(name)) return;
    levee::Policy pol;
    for (unsigned i = 0; i < 31; ++i) {
      levee::ClassSpec c;
      c.name = fmt::format("udp{}", 1000 + i);
      c.match.protos = {levee::Proto::Udp};
      c.match.ports = {{static_cast<uint16_t>(1000 + i), static_cast<uint16_t>(1000 + i)}};
      c.packets = {1000, 100};
      pol.classes.push_back(c);
    }
    levee::ClassSpec def;
    def.name = "default";
    def.packets = r;
    pol.classes.push_back(def);
    const uint32_t src = 0xc6120007;  // 198.18.0.7, the frame's source
    for (uint32_t i = 0, a = 0xc6120000; i < 100'000; ++a) {
      if (a == src) continue;
      levee::ListEntry e;
      e.cidr.family = 4;
      e.cidr.len = 32;
      const uint32_t be = htonl(a);
      std::memcpy(e.cidr.addr.data(), &be, 4);
      e.kind = LV_LIST_DENY;
      pol.lists.push_back(e);
      ++i;
    }
    auto ok = levee::validate(pol, levee::Clocks::read().now_unix_ns);
    if (!ok) throw std::runtime_error(ok.error().message());
    levee::CompiledPolicy c = levee::compile(pol, levee::Clocks::read());
    run_levee(name, what, c, std::min<uint64_t>(r.burst, 1000) + 1000, verdict, frame);
  };
  policy_case("levee_pass_32c_100k", "levee_pass with 32 classes and 100k deny entries",
              levee::Rate{10'000'000, 1'000'000'000}, XDP_PASS);
  policy_case("levee_drop_32c_100k", "levee_drop with 32 classes and 100k deny entries", levee::Rate{100, 100},
              XDP_DROP);

  // 10,000 sources round robin, each over its limit (rate 1, burst 10): a botnet of
  // real addresses. Each packet misses the CPU's last rejected source and looks its
  // source up in a 1M-entry map (its buckets spread over 16 MB). The rate is 1/s so that
  // a source's token seldom comes back within a run: the run's verdict is its last
  // packet's, and at rate 10 a run of over 100 ms (1M packets on a loaded machine) let
  // that packet pass now and then.
  if (b.wants("levee_drop_10k")) {
    SkelPtr<progbench> sk{progbench__open(), progbench__destroy};
    if (!sk.s) throw std::runtime_error("open progbench object");
    bpf_map__set_max_entries(sk.s->maps.lv_state, o.full_entries);
    if (progbench__load(sk.s)) throw std::runtime_error("load progbench object");
    set_policy(bpf_map__fd(sk.s->maps.lv_policy), Limits{1, 10, 32, 64}, autopilot_off);
    int fd = bpf_program__fd(sk.s->progs.bench_levee_rr);
    test_run(fd, frame, 200'000, XDP_DROP);  // every source known, its burst spent
    b.add("levee_drop_10k", "10,000 known sources round robin over their limits, 1M-entry map", o.repeat,
          [&] { return test_run(fd, frame, o.repeat, XDP_DROP); });
  }

  // New source every packet: levee's code after a source rewrite (bench object). The map
  // is filled with the autopilot off; `extra` then says what the class does.
  auto newsrc_case = [&](const std::string& name, const std::string& what, uint32_t entries, uint64_t prefill,
                         uint64_t repeat, const std::function<void(lv_class&)>& extra = autopilot_off,
                         uint32_t verdict = XDP_PASS, uint32_t base = 0) {
    if (!b.wants(name)) return;
    SkelPtr<progbench> sk{progbench__open(), progbench__destroy};
    if (!sk.s) throw std::runtime_error("open progbench object");
    bpf_map__set_max_entries(sk.s->maps.lv_state, entries);
    if (progbench__load(sk.s)) throw std::runtime_error("load progbench object");
    set_policy(bpf_map__fd(sk.s->maps.lv_policy), Limits{100, 100, 32, 64}, autopilot_off);
    int fd = bpf_program__fd(sk.s->progs.bench_levee_newsrc);
    if (prefill) test_run(fd, frame, prefill, XDP_PASS);
    if (extra) set_policy(bpf_map__fd(sk.s->maps.lv_policy), Limits{100, 100, 32, 64}, extra);
    if (base) sk.s->bss->bench_src_base = base, sk.s->data->bench_src_mask = 0x3fff;  // 16k sources of a /18
    if (verdict != XDP_PASS) test_run(fd, frame, base ? 50000 : 5000, verdict);       // spend the budget (escalate)
    auto n = levee::read_counters(bpf_map__fd(sk.s->maps.lv_percpu));
    if (base && (!n || !n->by_reason[LV_R_ESCALATED].packets)) throw std::runtime_error(name + ": nothing escalated");
    if (base) sk.s->bss->bench_src_base = base - 0x2000, sk.s->data->bench_src_mask = 0x1fff;  // never seen, same /16
    b.add(name, what, repeat, [&] { return test_run(fd, frame, repeat, verdict); });
  };
  // Inserts without eviction: the map holds every source of all runs.
  uint64_t insert_repeat = std::max<uint64_t>(o.repeat / o.runs, 1000);
  newsrc_case("levee_new_source", "new source every packet: LRU insert, map not full",
              static_cast<uint32_t>(insert_repeat * o.runs + insert_repeat), 0, insert_repeat);
  newsrc_case("levee_new_source_full",
              fmt::format("new source every packet, {}-entry LRU full (evicting)", levee::format_count(o.full_entries)),
              o.full_entries, o.full_entries + o.full_entries / 10, o.repeat);
  // The answer to that flood: past its class's new-source budget a packet of an unknown
  // source is refused after one lookup that misses, without an insert. The map holds
  // 100k known sources (a busy server's clients).
  newsrc_case(
      "levee_new_source_refused",
      fmt::format("new source every packet over the admission budget, {}-entry map holding 100k sources",
                  levee::format_count(o.full_entries)),
      o.full_entries, 100'000, o.repeat,
      [](lv_class& c) {
        autopilot_off(c);
        c.admit = levee::compile_packet_limit(levee::Rate{1, 1});
        c.flags |= LV_CLASS_ADMIT;
      },
      XDP_DROP);
  // The same flood with nothing configured: the autopilot engaged (its defaults, but
  // engaging at the first abnormal arrival rather than after 250 ms of them).
  newsrc_case(
      "levee_new_source_refused_auto",
      fmt::format("new source every packet, the autopilot engaged, {}-entry map holding 100k sources",
                  levee::format_count(o.full_entries)),
      o.full_entries, 100'000, o.repeat, [](lv_class& c) { c.autop.sustain_ns = 0; }, XDP_DROP);
  // That flood from one /16, the autopilot's defaults: 198.19.192.0/18 escalates its network
  // while the class's sustain runs; then 198.19.160.0/19, never seen, refused before admission.
  newsrc_case(
      "levee_new_source_escalated",
      fmt::format("new source every packet of one escalated /16, {}-entry map holding 100k sources",
                  levee::format_count(o.full_entries)),
      o.full_entries, 100'000, o.repeat, [](lv_class&) {}, XDP_DROP, 0xc613c000);

  // SYN authentication against a SYN flood from random sources: each SYN answered in
  // place with a cookie SYN-ACK, or, over the answer rate of its network, dropped
  // unanswered; and an ACK flood, each packet a socket lookup that finds nothing. In a
  // network namespace of the bench's own: the destination is the host's, and a
  // listener has the port (levee answers nothing else).
  std::optional<levee::pkt::HostNetns> net;
  auto host = [&] {
    if (net) return;
    net.emplace(std::vector<std::string>{"198.19.0.1"});
    net->listen(80);
  };
  auto syn_case = [&](const std::string& name, const std::string& what, uint8_t flags, const lv_answer& answer,
                      uint32_t verdict, bool proxy = false) {
    if (!b.wants(name)) return;
    host();
    SkelPtr<progbench> sk{progbench__open(), progbench__destroy};
    if (!sk.s) throw std::runtime_error("open progbench object");
    const std::vector<uint8_t> tcp =
        levee::pkt::Frame().eth().ipv4("198.18.0.7", "198.19.0.1").tcp(40000, 80, flags).pad_to(64).bytes();
    if (tcp.size() != sizeof sk.s->bss->bench_frame) throw std::runtime_error("the TCP frame is not 64 bytes");
    std::memcpy(sk.s->bss->bench_frame, tcp.data(), tcp.size());
    bpf_map__set_max_entries(sk.s->maps.lv_state, 1 << 16);
    if (progbench__load(sk.s)) throw std::runtime_error("load progbench object");
    set_policy(
        bpf_map__fd(sk.s->maps.lv_policy), Limits{100, 100, 32, 64},
        [](lv_class& c) {
          autopilot_off(c);
          c.flags |= LV_CLASS_SYN_AUTH;
        },
        answer);
    if (proxy) set_handoff(bpf_map__fd(sk.s->maps.lv_policy));
    int fd = bpf_program__fd(sk.s->progs.bench_levee_remade);
    test_run(fd, tcp, 1000, verdict);  // spends the answer burst where there is a rate
    b.add(name, what, o.repeat, [&] { return test_run(fd, tcp, o.repeat, verdict); });
  };
  syn_case("levee_syn_challenge", "a SYN from a new source every packet, answered with a cookie SYN-ACK (XDP_TX)",
           levee::pkt::kTcpSyn, lv_answer{}, XDP_TX);
  lv_answer tight{};
  tight.per_network = levee::compile_packet_limit(levee::Rate{1, 1});
  tight.mask4 = 0;  // every source in one network, long past its rate
  syn_case("levee_syn_answer_limit", "the same, its network over its answer rate: dropped unanswered",
           levee::pkt::kTcpSyn, tight, XDP_DROP);
  // Verifying is one cookie check (a SipHash of the connection): a forged cookie costs
  // what a good one does, less the known-good mark; a good one cannot be made for a
  // source that changes every run.
  syn_case("levee_rst_cookie_check",
           "a RST from a new source every packet with a forged cookie: one cookie check, dropped unverified",
           levee::pkt::kTcpRst, lv_answer{}, XDP_DROP);
  syn_case("levee_ack_unverified",
           "an ACK from a new source every packet: no cookie, no connection (a socket lookup), dropped",
           levee::pkt::kTcpAck, lv_answer{}, XDP_DROP);
  // Proxy mode (the default where levee's tc program is on): the SYN-ACK is the cookie's
  // sequence number, and an ACK is checked for a cookie before the socket lookup.
  syn_case("levee_syn_proxy", "proxy mode: a SYN from a new source every packet, answered with a cookie SYN-ACK",
           levee::pkt::kTcpSyn, lv_answer{}, XDP_TX, true);
  syn_case("levee_ack_proxy_forged",
           "proxy mode: an ACK from a new source every packet, a forged cookie (one check) and no connection (a "
           "socket lookup), dropped",
           levee::pkt::kTcpAck, lv_answer{}, XDP_DROP, true);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"levee-progbench: per-packet cost of levee's paths and of baselines (BPF_PROG_TEST_RUN)"};
  std::string repeat = "10M";
  app.add_option("--repeat", repeat, "runs of the program per measurement")->capture_default_str();
  app.add_option("--runs", o.runs, "measurements per case; the median is reported")->capture_default_str();
  app.add_option("--cpu", o.cpu, "CPU to run on (default: the last one)");
  app.add_flag("--quick", o.quick, "1M repeats, 3 runs, 100k-entry full map: a smoke run");
  app.add_option("--json", o.json, "also write the results as JSON to this file");
  app.add_option("--case", o.only, "run only the cases whose name holds this (and the floor, for the ratios)");
  CLI11_PARSE(app, argc, argv);
  auto r = levee::parse_count(repeat);
  if (!r || *r == 0 || *r > 2'000'000'000) {
    fmt::print(stderr, "levee-progbench: --repeat {} is not a count from 1 to 2G\n", repeat);
    return 2;
  }
  o.repeat = *r;
  if (o.quick) {
    o.repeat = std::min<uint64_t>(o.repeat, 1'000'000);
    o.runs = std::min(o.runs, 3u);
    o.full_entries = 100'000;
  }
  if (o.runs == 0) o.runs = 1;
  if (o.cpu < 0) o.cpu = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)) - 1);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(o.cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    fmt::print(stderr, "levee-progbench: cannot pin to CPU {}: {}\n", o.cpu, strerror(errno));
    return 1;
  }
  libbpf_set_print(nullptr);

  Bench b(o);
  try {
    run_all(b);
  } catch (const std::exception& e) {
    fmt::print(stderr, "levee-progbench: {}\n", e.what());
    return 1;
  }

  double floor = 0;
  for (const auto& r : b.results())
    if (r.name == "floor") floor = r.median;
  fmt::print("\nratio to the floor ({:.1f} ns):\n", floor);
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& r : b.results()) {
    double ratio = floor > 0 ? r.median / floor : 0;
    fmt::print("  {:<24} {:>6.2f}x\n", r.name, ratio);
    cases.push_back({{"name", r.name},
                     {"what", r.what},
                     {"repeat", r.repeat},
                     {"runs_ns", r.runs},
                     {"median_ns", r.median},
                     {"ratio_to_floor", ratio}});
  }
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << nlohmann::json{{"cpu", o.cpu}, {"runs", o.runs}, {"cases", cases}}.dump(2) << "\n";
    if (!out) {
      fmt::print(stderr, "levee-progbench: cannot write {}\n", o.json);
      return 1;
    }
  }
  return 0;
}
