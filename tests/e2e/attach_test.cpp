// attach_test.cpp - attach and detach leave the system as they found it; failed attaches
// change nothing and say so in one line; concurrent attaches and sets serialise; and
// the commands around an attachment (status, stats, set) keep their contracts.
//
// CLI contract: exit 0 ok, 1 error, 2 usage; an error is one stderr line "levee: ...".
#include <bpf/bpf.h>
#include <linux/if_link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "e2e.hpp"

namespace lvt {
namespace {

using Attach = E2e;
using Detach = E2e;
using Set = E2e;
using Status = E2e;
using Stats = E2e;

const std::vector<std::string> kLimits{"--rate", "500", "--burst", "100"};

std::vector<std::string> attach_args(const std::string& ifname, std::vector<std::string> extra = kLimits) {
  std::vector<std::string> a{"attach", ifname};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// A veth pair p <-> q in the receiver's namespace, both ends up; levee may attach to q.
void add_veth_pair(Sandbox& sb, const std::string& p, const std::string& q) {
  sb.track(q);
  sb.ip_rx({"link", "add", p, "type", "veth", "peer", "name", q});
  sb.ip_rx({"link", "set", q, "up"});
  sb.ip_rx({"link", "set", p, "up"});
}

// Does a BPF program with this id still exist in the kernel?
bool prog_exists(uint32_t id) {
  int fd = bpf_prog_get_fd_by_id(id);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// A flood of `pps` for `seconds` from one IPv4 source: (sent, received).
std::pair<uint64_t, uint64_t> flood(Sandbox& sb, double pps, double seconds) {
  UdpReceiver rx(sb.rx_ns(), AF_INET);
  Sender s({.ns = sb.tx_ns(), .src = Addrs::src4()[0], .dst = Addrs::rx4, .pps = pps, .seconds = seconds},
           start_soon());
  const SendLog& l = s.join();
  rx.finish();
  return {l.sent, rx.count(Addrs::src4()[0])};
}

// Detach leaves nothing, and traffic passes unlimited afterwards.
TEST_F(Detach, LeavesNothing) {
  attach(kLimits);
  auto st = sb().status();
  ASSERT_FALSE(st.is_null());
  const uint32_t prog = st.at("prog_id").get<uint32_t>();
  EXPECT_EQ(xdp_query(sb().rx_ns(), sb().rx_if()).prog_id, prog);
  EXPECT_TRUE(sb().pinned());

  auto [sent0, got0] = flood(sb(), 2000, 1.0);
  EXPECT_LT(got0, sent0 / 2) << "not limited while attached";

  RunResult r = sb().levee({"detach", sb().rx_if()});
  ASSERT_EQ(r.code, 0) << r.describe();
  EXPECT_TRUE(r.err.empty()) << r.describe();
  expect_nothing_left(sb(), sb().rx_ns(), sb().rx_if());
  // /sys/fs/bpf/levee stays, root's and 0700: removed, another user could make it
  // (bpffs is 1777) before the next attach.
  struct stat root {};
  ASSERT_EQ(stat(kPinRoot, &root), 0) << kPinRoot << " removed by the last detach";
  EXPECT_EQ(root.st_uid, 0u);
  EXPECT_EQ(root.st_mode & 07777, 0700u);
  std::string link = must({"ip", "-n", sb().rx_ns(), "-d", "link", "show", "dev", sb().rx_if()});
  EXPECT_EQ(link.find("xdp"), std::string::npos) << link;
  EXPECT_TRUE(sb().status().is_null()) << "levee status still lists the interface";
  // The program itself is freed once nothing holds it (RCU: allow a moment).
  bool gone = false;
  for (int i = 0; i < 100 && !(gone = !prog_exists(prog)); ++i) usleep(20'000);
  EXPECT_TRUE(gone) << "program " << prog << " still exists after detach";

  auto [sent1, got1] = flood(sb(), 2000, 1.0);
  report("after_detach_sent", static_cast<double>(sent1));
  report("after_detach_received", static_cast<double>(got1));
  EXPECT_EQ(got1, sent1) << "traffic still limited after detach";

  expect_error(sb().levee({"detach", sb().rx_if()}), 1, "not attached");
}

// Detach removes the program even while a reader (`levee stats --watch`) holds the
// link and maps open.
TEST_F(Detach, WhileStatsWatchRuns) {
  attach(kLimits);
  Child watch = sb().levee_start({"stats", sb().rx_if(), "--watch", "--interval", "0.1", "--count", "30"});
  usleep(300'000);
  RunResult d = sb().levee({"detach", sb().rx_if()});
  ASSERT_EQ(d.code, 0) << d.describe();
  expect_nothing_left(sb(), sb().rx_ns(), sb().rx_if());
  auto [sent, got] = flood(sb(), 2000, 0.5);
  EXPECT_EQ(got, sent) << "still limited while the watcher runs";
  RunResult w = watch.wait();
  EXPECT_FALSE(w.timed_out);
}

// Failed attaches change nothing and exit with the right code and one line.
TEST_F(Attach, UnknownInterfaceFails) {
  const std::string ghost = sb().ifname("n");
  expect_error(sb().levee(attach_args(ghost)), 1, ghost);
  expect_nothing_left(sb(), sb().rx_ns(), ghost);
  // An interface that exists only in another namespace is unknown here too.
  expect_error(sb().levee(attach_args(sb().tx_if())), 1);
  expect_nothing_left(sb(), sb().tx_ns(), sb().tx_if());
  EXPECT_FALSE(sb().pinned(sb().tx_if()));
}

TEST_F(Attach, RateZeroIsAUsageError) {
  expect_error(sb().levee(attach_args(sb().rx_if(), {"--rate", "0", "--burst", "100"})), 2, "--rate");
  expect_nothing_left(sb(), sb().rx_ns(), sb().rx_if());
  expect_error(sb().levee(attach_args(sb().rx_if(), {"--rate", "500", "--burst", "0"})), 2, "--burst");
  expect_nothing_left(sb(), sb().rx_ns(), sb().rx_if());
}

TEST_F(Attach, BadNumberIsAUsageError) {
  for (const char* bad : {"lots", "10q", "1.5", "-5", "", "1e3", "0x10"}) {
    SCOPED_TRACE(std::string("--rate '") + bad + "'");
    expect_error(sb().levee(attach_args(sb().rx_if(), {"--rate", bad, "--burst", "100"})), 2);
    expect_nothing_left(sb(), sb().rx_ns(), sb().rx_if());
  }
  expect_error(sb().levee(attach_args(sb().rx_if(), {"--rate", "500", "--burst", "many"})), 2, "--burst");
  expect_error(sb().levee(attach_args(sb().rx_if(), {"--rate", "500"})), 2);  // --burst is required
  expect_error(sb().levee(attach_args(sb().rx_if(), {"--rate", "500", "--burst", "1", "--mode", "fast"})), 2);
  expect_error(sb().levee(attach_args(sb().rx_if(), {"--rate", "500", "--burst", "1", "--prefix4", "33"})), 2);
  expect_nothing_left(sb(), sb().rx_ns(), sb().rx_if());
  // The accepted spellings do work: 1.5k pps, burst 1k.
  attach({"--rate", "1.5k", "--burst", "1k"});
  auto st = sb().status();
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st.at("rate"), 1500);
  EXPECT_EQ(st.at("burst"), 1000);
}

TEST_F(Attach, AsNonRootFails) {
  RunOptions o;
  o.drop_root = true;
  expect_error(sb().levee(attach_args(sb().rx_if()), o), 1, "root");
  expect_nothing_left(sb(), sb().rx_ns(), sb().rx_if());
}

TEST_F(Attach, WithoutBpffsFails) {
  RunOptions o;
  o.hide_bpffs = true;
  expect_error(sb().levee(attach_args(sb().rx_if()), o), 1, "mount -t bpf");
  expect_nothing_left(sb(), sb().rx_ns(), sb().rx_if());
}

// An attach of the very filter that is there is "already so": exit 0, nothing changed,
// as a tool that makes sure of a state (Ansible) needs. Any other settings are refused
// and named, and nothing changes either.
TEST_F(Attach, TwiceWithTheSameSettingsSucceedsAndChangesNothing) {
  TempDir dir;
  const std::string config = dir.write("levee.toml", R"([[class]]
name = "dns"
match.proto = "udp"
match.port = 53
rate = 500
burst = 100
ban = "2s"

[default]
rate = "1k"
burst = 200

[lists]
deny = ["203.0.113.0/24"]
)");
  attach({"--config", config});
  const auto st0 = sb().status();
  ASSERT_FALSE(st0.is_null());
  RunResult again = sb().levee(attach_args(sb().rx_if(), {"--config", config}));
  ASSERT_EQ(again.code, 0) << again.describe();
  EXPECT_EQ(again.out.rfind(sb().rx_if() + ": already attached with these settings (program ", 0), 0u) << again.out;
  EXPECT_NE(again.out.find("nothing changed"), std::string::npos) << again.out;
  // Entries added at run time are state, not settings.
  ASSERT_EQ(sb().levee({"deny", "add", sb().rx_if(), "198.51.100.0/24"}).code, 0);
  const auto added = sb().status();
  ASSERT_FALSE(added.is_null());
  RunResult third = sb().levee(attach_args(sb().rx_if(), {"--config", config}));
  EXPECT_EQ(third.code, 0) << third.describe();
  const auto st1 = sb().status();
  ASSERT_FALSE(st1.is_null());
  for (const char* k : {"prog_id", "link_id", "max_sources"}) EXPECT_EQ(st1.at(k), st0.at(k)) << k;
  EXPECT_EQ(st1.at("policy_generation"), added.at("policy_generation"));
  EXPECT_EQ(st1.at("lists").at("deny"), 2);

  // What differs is named: the XDP mode asked for, a map's size, a class changed live.
  expect_error(sb().levee(attach_args(sb().rx_if(), {"--config", config, "--xdp-mode", "generic"})), 1,
               "with other settings: XDP mode generic (attached with auto)");
  expect_error(sb().levee(attach_args(sb().rx_if(), {"--config", config, "--max-sources", "1000"})), 1,
               "max_sources 1000 (attached with ");
  expect_error(sb().levee(attach_args(sb().rx_if(), {"--config", config, "--monitor"})), 1, "the monitor switch");
  ASSERT_EQ(sb().levee({"set", sb().rx_if(), "--class", "dns", "--rate", "400"}).code, 0);
  expect_error(sb().levee(attach_args(sb().rx_if(), {"--config", config})), 1, "with other settings: class dns");
  const auto st2 = sb().status();
  ASSERT_FALSE(st2.is_null());
  EXPECT_EQ(st2.at("prog_id"), st0.at("prog_id"));
}

TEST_F(Attach, TwiceWithOtherSettingsFailsAndChangesNothing) {
  attach(kLimits);
  auto st0 = sb().status();
  ASSERT_FALSE(st0.is_null());
  expect_error(sb().levee(attach_args(sb().rx_if(), {"--rate", "9000", "--burst", "9"})), 1, "already attached");
  expect_error(sb().levee(attach_args(sb().rx_if(), {"--rate", "500", "--burst", "100", "--mode", "generic"})), 1);
  // The same shorthand again is the same filter.
  EXPECT_EQ(sb().levee(attach_args(sb().rx_if())).code, 0);
  auto st1 = sb().status();
  ASSERT_FALSE(st1.is_null());
  for (const char* k : {"prog_id", "link_id", "xdp_mode", "rate", "burst", "policy_generation", "max_sources"})
    EXPECT_EQ(st1.at(k), st0.at(k)) << k;
  EXPECT_EQ(xdp_query(sb().rx_ns(), sb().rx_if()).prog_id, st0.at("prog_id").get<uint32_t>());
  EXPECT_TRUE(pin_entries(sb().rx_if() + ":").empty()) << "staging directory left";
  // And the limit is still the first one.
  auto [sent, got] = flood(sb(), 2000, 1.0);
  EXPECT_LT(static_cast<double>(got), 100 + 500 * 1.2) << "limit changed by a failed attach";
}

TEST_F(Attach, NativeWhereImpossibleFails) {
  // ifb has no native XDP (no ndo_bpf); bridge is the fallback device type.
  std::string dev = sb().ifname("i");
  RunResult made = run({"ip", "-n", sb().rx_ns(), "link", "add", dev, "type", "ifb"});
  if (made.code != 0) made = run({"ip", "-n", sb().rx_ns(), "link", "add", dev, "type", "bridge"});
  if (made.code != 0) GTEST_SKIP() << "no interface type without native XDP available: " << made.err;
  sb().track(dev);
  sb().ip_rx({"link", "set", dev, "up"});

  expect_error(sb().levee(attach_args(dev, {"--rate", "500", "--burst", "100", "--mode", "native"})), 1);
  expect_nothing_left(sb(), sb().rx_ns(), dev);

  // auto falls back to generic there, and says so.
  RunResult r = sb().levee(attach_args(dev, {"--rate", "500", "--burst", "100", "--mode", "auto"}));
  ASSERT_EQ(r.code, 0) << r.describe();
  EXPECT_NE(r.out.find("generic"), std::string::npos) << r.describe();
  auto st = sb().status(dev);
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st.at("xdp_mode"), "generic");
  EXPECT_EQ(xdp_query(sb().rx_ns(), dev).attach_mode, static_cast<unsigned>(XDP_ATTACHED_SKB));
  RunResult d = sb().levee({"detach", dev});
  EXPECT_EQ(d.code, 0) << d.describe();
  expect_nothing_left(sb(), sb().rx_ns(), dev);
}

// Native mode by default on veth (auto tries native first).
TEST_F(Attach, AutoModeIsNativeOnVeth) {
  attach({"--rate", "500", "--burst", "100"});
  auto st = sb().status();
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st.at("xdp_mode"), "native");
  EXPECT_EQ(st.at("fast_reject"), true) << "burst 100 at 500 pps covers the cached clock";
  XdpInfo x = xdp_query(sb().rx_ns(), sb().rx_if());
  EXPECT_EQ(x.attach_mode, static_cast<unsigned>(XDP_ATTACHED_DRV));
  EXPECT_EQ(x.drv_prog_id, st.at("prog_id").get<uint32_t>());
}

void attach_over_foreign(Sandbox& sb, uint32_t flags) {
  ForeignXdp foreign(sb.rx_ns(), sb.rx_if(), flags);
  ASSERT_NE(foreign.prog_id(), 0u);
  for (const char* mode : {"auto", "native", "generic"}) {
    SCOPED_TRACE(std::string("--mode ") + mode);
    expect_error(sb.levee(attach_args(sb.rx_if(), {"--rate", "500", "--burst", "100", "--mode", mode})), 1);
    XdpInfo x = xdp_query(sb.rx_ns(), sb.rx_if());
    EXPECT_EQ(x.prog_id, foreign.prog_id()) << "the foreign program was replaced or removed";
    EXPECT_FALSE(sb.pinned()) << sb.pin_dir();
    EXPECT_TRUE(pin_entries(sb.rx_if() + ":").empty()) << "staging directory left";
  }
  EXPECT_TRUE(sb.status().is_null());
  // detach refuses to touch what levee did not attach.
  expect_error(sb.levee({"detach", sb.rx_if()}), 1);
  EXPECT_EQ(xdp_query(sb.rx_ns(), sb.rx_if()).prog_id, foreign.prog_id());
}

TEST_F(Attach, OverForeignGenericProgramFails) { attach_over_foreign(sb(), XDP_FLAGS_SKB_MODE); }

TEST_F(Attach, OverForeignNativeProgramFails) { attach_over_foreign(sb(), XDP_FLAGS_DRV_MODE); }

// Two levee set racing on one interface both complete, serialised: the result is
// one of the two requests, whole, and each published exactly once.
TEST_F(Set, ConcurrentSetsSerialise) {
  attach(kLimits);
  auto st = sb().status();
  ASSERT_FALSE(st.is_null());
  uint64_t gen = ju(st, "policy_generation");
  const std::vector<std::string> a{"set", sb().rx_if(), "--rate", "700", "--burst", "70"};
  const std::vector<std::string> b{"set", sb().rx_if(), "--rate", "900", "--burst", "90"};
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Child first = sb().levee_start(round % 2 ? a : b);
    Child second = sb().levee_start(round % 2 ? b : a);
    RunResult r1 = first.wait(), r2 = second.wait();
    EXPECT_EQ(r1.code, 0) << r1.describe();
    EXPECT_EQ(r2.code, 0) << r2.describe();
    auto now = sb().status();
    ASSERT_FALSE(now.is_null());
    const uint64_t rate = ju(now, "rate"), burst = ju(now, "burst");
    EXPECT_TRUE((rate == 700 && burst == 70) || (rate == 900 && burst == 90))
        << "mixed or foreign limits: rate " << rate << " burst " << burst;
    EXPECT_NEAR(now.at("effective_rate").get<double>(), static_cast<double>(rate), 1.0);
    gen += 2;
    EXPECT_EQ(ju(now, "policy_generation"), gen) << "a change was lost or doubled";
    EXPECT_EQ(now.at("prog_id"), st.at("prog_id"));
  }
}

// The JSON of stats and status has every field of the contract, with the right types.
// (It once lacked "allow": LV_R_ALLOW was missing from kReasons, which the JSON is
// generated from.)
TEST_F(Stats, JsonFollowsTheContract) {
  attach(kLimits);
  auto s = sb().stats();
  for (const char* k :
       {"rx_packets", "rx_bytes", "passed_packets", "passed_bytes", "dropped_packets", "dropped_bytes"}) {
    ASSERT_TRUE(s.contains(k)) << k << " missing: " << s.dump();
    EXPECT_TRUE(s.at(k).is_number_unsigned()) << k << ": " << s.dump();
  }
  const std::vector<std::string> passed{"conforming", "not_ip", "allow"};
  const std::vector<std::string> dropped{"rate", "malformed", "vlan_depth", "map_full", "contended"};
  auto check = [&](const nlohmann::json& obj, const std::vector<std::string>& keys, const std::string& where) {
    ASSERT_TRUE(obj.is_object()) << where << ": " << s.dump();
    for (const auto& k : keys) {
      EXPECT_TRUE(obj.contains(k) && obj.at(k).is_number_unsigned()) << where << "." << k << " missing: " << s.dump();
    }
  };
  check(s.value("passed", nlohmann::json()), passed, "passed");
  check(s.value("dropped", nlohmann::json()), dropped, "dropped");
  ASSERT_TRUE(s.contains("bytes")) << s.dump();
  check(s.at("bytes").value("passed", nlohmann::json()), passed, "bytes.passed");
  check(s.at("bytes").value("dropped", nlohmann::json()), dropped, "bytes.dropped");

  auto st = sb().status();
  ASSERT_FALSE(st.is_null());
  for (const char* k :
       {"interface", "ifindex", "attached", "xdp_mode", "prog_id", "link_id", "rate", "burst", "effective_rate",
        "prefix4", "prefix6", "fast_reject", "policy_generation", "max_sources", "sources"})
    EXPECT_TRUE(st.contains(k)) << k << " missing: " << st.dump();
  EXPECT_EQ(st.at("interface"), sb().rx_if());
  EXPECT_EQ(st.at("attached"), true);
  EXPECT_TRUE(st.at("xdp_mode") == "native" || st.at("xdp_mode") == "generic") << st.dump();
  EXPECT_EQ(st.at("rate"), 500);
  EXPECT_EQ(st.at("burst"), 100);
  EXPECT_EQ(st.at("prefix4"), 32);
  EXPECT_EQ(st.at("prefix6"), 64);
  EXPECT_EQ(st.at("max_sources"), 1000000);
}

// Two attaches racing on one interface: exactly one wins, the other fails cleanly.
TEST_F(Attach, ConcurrentAttachesOneWins) {
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Child a = sb().levee_start(attach_args(sb().rx_if(), {"--rate", "500", "--burst", "100"}));
    Child b = sb().levee_start(attach_args(sb().rx_if(), {"--rate", "700", "--burst", "70"}));
    RunResult ra = a.wait(), rb = b.wait();
    EXPECT_EQ((ra.code == 0) + (rb.code == 0), 1) << ra.describe() << "\n" << rb.describe();
    const RunResult& loser = ra.code == 0 ? rb : ra;
    expect_error(loser, 1);
    auto st = sb().status();
    ASSERT_FALSE(st.is_null());
    EXPECT_EQ(xdp_query(sb().rx_ns(), sb().rx_if()).prog_id, st.at("prog_id").get<uint32_t>());
    const uint64_t rate = ju(st, "rate");
    EXPECT_TRUE((rate == 500 && ju(st, "burst") == 100) || (rate == 700 && ju(st, "burst") == 70)) << st.dump();
    EXPECT_TRUE(pin_entries(sb().rx_if() + ":").empty()) << "staging directory left";
    RunResult d = sb().levee({"detach", sb().rx_if()});
    ASSERT_EQ(d.code, 0) << d.describe();
    expect_nothing_left(sb(), sb().rx_ns(), sb().rx_if());
  }
}

// An interface that disappears while attached: status shows it as gone, detach clears
// its pins, and a new interface of the same name can be attached again.
TEST_F(Detach, AfterInterfaceVanished) {
  const std::string p = sb().ifname("p"), q = sb().ifname("q");
  add_veth_pair(sb(), p, q);
  attach(kLimits, q);
  sb().ip_rx({"link", "del", p});  // takes q with it
  auto st = sb().status(q);
  ASSERT_FALSE(st.is_null()) << "status no longer lists the vanished interface's pins";
  EXPECT_EQ(st.at("attached"), false) << st.dump();
  RunResult d = sb().levee({"detach", q});
  EXPECT_EQ(d.code, 0) << d.describe();
  EXPECT_FALSE(sb().pinned(q));
  sb().ip_rx({"link", "add", p, "type", "veth", "peer", "name", q});
  attach(kLimits, q);
  EXPECT_EQ(sb().status(q).at("attached"), true);
}

// `levee status` (a reader, no lock) while another interface is attached and detached
// over and over: every status must succeed.
// (It once failed: status listed the pin directories, then opened each, and an
// interface detached in between aborted the whole listing, ~10% of runs here.)
TEST_F(Status, SurvivesConcurrentDetach) {
  // The churned interface sorts after the stable one (…z after …y): status lists both,
  // walks the stable one's state map (the slow part), then opens the churned one.
  const std::string p = sb().ifname("p"), q = sb().ifname("z");
  add_veth_pair(sb(), p, q);
  attach(kLimits);
  std::atomic<bool> done{false};
  std::atomic<int> churn_errors{0};
  std::thread churn([&] {
    for (int i = 0; i < 25; ++i) {
      if (sb().levee(attach_args(q)).code != 0) ++churn_errors;
      if (sb().levee({"detach", q}).code != 0) ++churn_errors;
    }
    done = true;
  });
  int runs = 0, failures = 0;
  std::string first_failure;
  while (!done && runs < 1000) {
    RunResult r = sb().levee({"status", "--json"});
    ++runs;
    if (r.code != 0) {
      if (failures++ == 0) first_failure = r.describe();
    }
  }
  churn.join();
  report("status_runs", runs);
  report("status_failures", failures);
  EXPECT_EQ(churn_errors, 0);
  EXPECT_EQ(failures, 0) << failures << " of " << runs << " levee status runs failed, first: " << first_failure;
}

// `levee status` reads levee run's state files (/run/levee/IF.crowdsec, IF.publish): one
// that is larger than a state file ever is (64 KiB), not a JSON object, or a FIFO is not
// shown, as when there is none, and never waited on (a FIFO once held status in open(2)).
TEST_F(Status, ALargeOrForeignStateFileIsNotShown) {
  attach(kLimits);
  const std::string path = "/run/levee/" + sb().rx_if() + ".crowdsec";
  struct Remove {
    std::string p;
    ~Remove() { unlink(p.c_str()); }
  } remove{path};
  const std::string state = R"({"pid":)" + std::to_string(getpid()) + R"(,"up":true,"pull_errors":7})";
  const auto put = [&](const std::string& text) {
    unlink(path.c_str());
    std::ofstream(path) << text;
  };
  const auto bouncer = [&] { return sb().status().at("crowdsec").at("bouncer"); };
  put(state);
  ASSERT_FALSE(bouncer().is_null()) << "a state file as levee run writes it is shown";
  EXPECT_EQ(bouncer().at("pull_errors"), 7);
  put(state + std::string(64 << 10, ' '));
  EXPECT_TRUE(bouncer().is_null()) << "over 64 KiB: " << bouncer().dump();
  put("[" + state + "]");
  EXPECT_TRUE(bouncer().is_null()) << "not an object: " << bouncer().dump();
  unlink(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = sb().levee({"status", "--json"});
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << "status waited on a FIFO";
  EXPECT_TRUE(bouncer().is_null());
}

// set and detach on an interface levee does not manage fail cleanly.
TEST_F(Set, WithoutAttachFails) {
  expect_error(sb().levee({"set", sb().rx_if(), "--rate", "1000"}), 1, "not attached");
  expect_error(sb().levee({"set", sb().rx_if()}), 2);
  expect_error(sb().levee({"stats", sb().rx_if(), "--json"}), 1);
  expect_nothing_left(sb(), sb().rx_ns(), sb().rx_if());
}

}  // namespace
}  // namespace lvt
