// faults_test.cpp - `levee run` under faults of its surroundings, each with the outcome
// an operator can rely on (docs/LIMITS.md, "Faults"):
//
//   bpffs unmounted             the filter keeps dropping (the daemon holds it open), the
//                               loss is said and gauged, reloads are refused, and the pins
//                               come back when bpffs does; stopped meanwhile, it says the
//                               filter ends with it
//   the interface removed       the dead pins go at once, the loss is said and gauged, and
//   and added again             the filter is attached again from the config
//   the events disk full        events dropped and counted, filtering and the daemon go on,
//                               writing resumes with whole lines once there is room
//   the events reader gone      (a FIFO or pipe) the same: dropped and counted, the daemon
//                               goes on (SIGPIPE no longer ends it)
//   the config replaced during  every reload applies one whole file or nothing: the
//   a SIGHUP storm              filter is always one of the two policies, never a mix
//   no scraper; the port taken  nothing is lost unscraped; a restart whose port is taken
//                               is refused in one line and leaves the running filter as
//                               it was
//   kill -9 during a list       the filter keeps the old lists or the new ones, never
//   rebuild                     none; a new levee run adopts it and loads the new
//   SIGTERM during a reload     the reload ends whole (or never starts), then the daemon
//                               stops as for any SIGTERM: exit 0, the filter attached
//
// Everything runs in the sandbox's namespaces; bpffs and the small disk are mounts of a
// private mount namespace of the daemon (nsenter -m reaches them), gone with it.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "e2e.hpp"
#include "flood_harness.hpp"
#include "levee_run.hpp"

#ifndef LEVEE_BIN
#error "LEVEE_BIN must name the levee binary"
#endif

namespace lvt {
namespace {

using nlohmann::json;

// 100 pps, burst 10: a source sending 1,000 pps for half a second gets about 60 through.
const std::string kTightPolicy = "[default]\nrate = 100\nburst = 10\n";

// Datagrams of a half-second 1,000 pps flow from src that reached the receiver.
uint64_t delivered(Sandbox& sb, const std::string& src, uint16_t port = kPort) {
  UdpReceiver rx(sb.rx_ns(), AF_INET, port);
  Sender({.ns = sb.tx_ns(), .src = src, .dst = Addrs::rx4, .port = port, .pps = 1000, .seconds = 0.5}, start_soon(50))
      .join();
  rx.finish();
  return rx.count(src);
}
// Limited: burst + rate x 0.5 s = 60, with room; unfiltered it would be about 500.
constexpr uint64_t kLimitedAtMost = 150;

// A command in the daemon's mount namespace (and network namespace, with net).
RunResult in_mounts_of(pid_t pid, std::vector<std::string> argv, bool net = false) {
  std::vector<std::string> pre{"nsenter", "-t", std::to_string(pid), "-m"};
  if (net) pre.push_back("-n");
  argv.insert(argv.begin(), pre.begin(), pre.end());
  return run(argv);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

using Faults = E2e;

TEST_F(Faults, BpffsUnmountedUnderLeveeRunKeepsTheFilterAndItIsPinnedAgain) {
  TempDir dir;
  const std::string cfg = dir.write("levee.toml", kTightPolicy);
  RunOptions o;
  o.private_bpffs = true;
  LeveeRun d(sb(), {"--config", cfg, "--prune-every", "1s"}, o);
  d.wait_ready();
  if (HasFatalFailure()) return;
  ASSERT_EQ(d.sample("levee_filter_pinned"), 1);

  ASSERT_EQ(in_mounts_of(d.pid(), {"umount", "/sys/fs/bpf"}).code, 0);
  EXPECT_TRUE(eventually([&] { return d.sample("levee_filter_pinned") == 0; }, 3000)) << d.scrape().body;
  EXPECT_TRUE(xdp_query(sb().rx_ns(), sb().rx_if()).any()) << "the filter went with its pins";
  const uint64_t got = delivered(sb(), Addrs::src4()[0]);
  report("delivered_while_unpinned", static_cast<double>(got));
  EXPECT_LE(got, kLimitedAtMost) << "not filtering without its pins";
  // A reload cannot reach the filter without its pins: refused, counted, nothing changes.
  d.signal(SIGHUP);
  EXPECT_TRUE(eventually([&] { return d.sample("levee_reloads_total", {{"result", "failure"}}) == 1; }, 3000));

  // bpffs back: pinned again from the open filter, and levee commands reach it.
  ASSERT_EQ(in_mounts_of(d.pid(), {"mount", "-t", "bpf", "bpf", "/sys/fs/bpf"}).code, 0);
  EXPECT_TRUE(eventually([&] { return d.sample("levee_filter_pinned") == 1; }, 3000)) << d.scrape().body;
  EXPECT_EQ(d.sample("levee_filter_recoveries_total", {{"action", "repin"}}), 1);
  const RunResult st = in_mounts_of(d.pid(), {LEVEE_BIN, "status", "--json"}, true);
  ASSERT_EQ(st.code, 0) << st.describe();
  const json all = json::parse(st.out);
  ASSERT_EQ(all.at("interfaces").size(), 1u) << st.out;
  EXPECT_EQ(all.at("interfaces").at(0).at("interface"), sb().rx_if());
  EXPECT_EQ(all.at("interfaces").at(0).at("attached"), true) << st.out;

  // Gone again, and levee run stopped: nothing holds the filter any more, so it ends,
  // and the daemon says so.
  ASSERT_EQ(in_mounts_of(d.pid(), {"umount", "/sys/fs/bpf"}).code, 0);
  EXPECT_TRUE(eventually([&] { return d.sample("levee_filter_pinned") == 0; }, 3000));
  const RunResult r = d.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_TRUE(has(r.err, "the pins of the filter are gone (/sys/fs/bpf is not a mounted BPF filesystem)")) << r.err;
  EXPECT_TRUE(has(r.err, "pinned the running filter again")) << r.err;
  EXPECT_TRUE(has(r.err, "it ended with levee run")) << r.err;
  EXPECT_FALSE(xdp_query(sb().rx_ns(), sb().rx_if()).any());
}

TEST_F(Faults, InterfaceRemovedAndAddedAgainUnderLeveeRunIsAttachedAgain) {
  TempDir dir;
  const std::string cfg = dir.write("levee.toml", kTightPolicy);
  LeveeRun d(sb(), {"--config", cfg, "--prune-every", "1s"});
  d.wait_ready();
  if (HasFatalFailure()) return;
  EXPECT_LE(delivered(sb(), Addrs::src4()[0]), kLimitedAtMost);

  sb().unplug();
  EXPECT_TRUE(eventually([&] { return d.sample("levee_filter_attached") == 0; }, 3000)) << d.scrape().body;
  EXPECT_TRUE(eventually([&] { return !sb().pinned(); }, 3000)) << "pins of a dead interface left";
  // Nothing to change meanwhile: a change is refused, not reported as applied.
  const RunResult add = sb().levee({"deny", "add", sb().rx_if(), "198.19.9.9"});
  EXPECT_NE(add.code, 0) << add.describe();
  EXPECT_TRUE(d.running());

  sb().replug();
  EXPECT_TRUE(eventually([&] { return d.sample("levee_filter_attached") == 1; }, 5000)) << d.scrape().body;
  EXPECT_EQ(d.sample("levee_filter_recoveries_total", {{"action", "reattach"}}), 1);
  EXPECT_TRUE(sb().pinned());
  EXPECT_TRUE(xdp_query(sb().rx_ns(), sb().rx_if()).any());
  const uint64_t got = delivered(sb(), Addrs::src4()[1]);
  report("delivered_after_reattach", static_cast<double>(got));
  EXPECT_LE(got, kLimitedAtMost) << "not filtering on the interface that came back";
  EXPECT_EQ(sb().status().at("attached"), true);

  const RunResult r = d.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_TRUE(has(r.err, "is gone, and its XDP link with it")) << r.err;
  EXPECT_TRUE(has(r.err, "stays attached")) << r.err;
}

TEST_F(Faults, EventsFileOnAFullDiskDropsCountedEventsAndResumesWithWholeLines) {
  TempDir dir;
  const std::string disk = dir.path() + "/disk";
  ASSERT_EQ(mkdir(disk.c_str(), 0700), 0);
  // Without the autopilot: it would limit the flood's /16 as a whole and put most of its
  // sources on probation, whose drops are one event for all (the test needs many).
  const std::string cfg = dir.write("levee.toml", "[interface]\nevents_per_second = 1000\n" + kTightPolicy +
                                                      "new_sources = \"off\"\nescalate = \"off\"\n");
  const std::string events = disk + "/events.jsonl";
  RunOptions o;
  o.tmpfs_dir = disk;
  o.tmpfs_size = "256k";
  LeveeRun d(sb(), {"--config", cfg, "--events", events, "--prune-every", "1s"}, o);
  d.wait_ready();
  if (HasFatalFailure()) return;
  auto written = [&] { return d.sample("levee_events_total"); };
  auto dropped = [&] { return d.sample("levee_events_dropped_total"); };

  delivered(sb(), Addrs::src4()[0]);
  ASSERT_TRUE(eventually([&] { return written() >= 1; }, 3000)) << d.scrape().body;

  // The disk full: a random flood over a /23 asks for 512 events (each source's first
  // drop), far more than the page the events file has left.
  in_mounts_of(d.pid(), {"sh", "-c", "cat /dev/zero > " + disk + "/fill"});
  FloodSpec fs;
  fs.ns = sb().tx_ns();
  fs.dev = sb().tx_if();
  fs.dst = Addrs::rx4;
  fs.random = "198.18.128.0/23";
  fs.dport = kPort;
  fs.rate = 60'000;
  fs.seconds = 1;
  FloodResult f = Flood(fs).wait();
  ASSERT_TRUE(f.ok) << f.describe();
  EXPECT_TRUE(eventually([&] { return dropped() > 0; }, 3000)) << d.scrape().body;
  EXPECT_TRUE(d.running());
  EXPECT_LE(delivered(sb(), Addrs::src4()[1]), kLimitedAtMost) << "not filtering with the disk full";
  const double dropped_full = dropped(), written_full = written();
  report("events_dropped_disk_full", dropped_full);

  // Room again: the next events are written.
  ASSERT_EQ(in_mounts_of(d.pid(), {"rm", disk + "/fill"}).code, 0);
  delivered(sb(), Addrs::src4()[2]);
  EXPECT_TRUE(eventually([&] { return written() > written_full; }, 3000)) << d.scrape().body;
  EXPECT_EQ(dropped(), dropped_full);

  // Every line whole: as many JSON objects as the daemon counts written.
  const RunResult cat = in_mounts_of(d.pid(), {"cat", events});
  ASSERT_EQ(cat.code, 0) << cat.describe();
  std::vector<json> lines;
  EXPECT_NO_THROW(lines = json_lines(cat.out)) << "a broken line in the events file";
  EXPECT_EQ(static_cast<double>(lines.size()), written());
  const RunResult r = d.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_TRUE(has(r.err, "cannot write events: No space left on device")) << r.err;
  EXPECT_TRUE(has(r.err, "writing events again")) << r.err;
}

// A policy whose rate, burst and deny list go together: each reload must bring all three.
std::string storm_policy(uint64_t rate, unsigned deny) {
  std::string s =
      "[default]\nrate = " + std::to_string(rate) + "\nburst = " + std::to_string(rate / 10) + "\n[lists]\ndeny = [";
  for (unsigned i = 0; i < deny; ++i)
    s += (i ? ", \"198.19." : "\"198.19.") + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1) + "\"";
  return s + "]\n";
}

// The events go to a FIFO whose reader goes away (a log shipper that exits): each event
// then fails with EPIPE and is dropped and counted, as on a full disk, and the daemon
// and the filter go on. Before, the first such write raised SIGPIPE and ended levee run
// (unless --metrics was given: cpp-httplib's server ignores SIGPIPE for the process).
TEST_F(Faults, EventsReaderGoneDropsEventsAndTheDaemonGoesOn) {
  TempDir dir;
  const std::string cfg = dir.write("levee.toml", kTightPolicy);
  const std::string fifo = dir.path() + "/events.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  levee::Fd reader(open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  ASSERT_TRUE(reader.valid());
  RunOptions o;
  o.die_with_parent = true;
  o.timeout = std::chrono::milliseconds(60'000);
  Child d = sb().levee_start({"run", sb().rx_if(), "--config", cfg, "--events", fifo}, o);
  ASSERT_TRUE(eventually([&] { return sb().pinned() || !d.running(); }, 10'000));
  reader.reset();  // the reader exits
  send_udp(sb(), Addrs::src4()[0], 1000, 0.5);
  usleep(1'000'000);
  EXPECT_TRUE(d.running()) << "levee run ended when its events' reader went away";
  EXPECT_GT(delivered(sb(), Addrs::src4()[1]), 0u) << "the filter goes on";
  const RunResult r = d.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_TRUE(has(r.err, "cannot write events: Broken pipe; dropping them")) << r.err;
}

TEST_F(Faults, ConfigReplacedDuringASighupStormEndsInOneOfTheTwoPoliciesNeverAMix) {
  TempDir dir;
  const std::string a = storm_policy(100, 300), b = storm_policy(300, 700);
  const std::string bad = "[default]\nrate = 0\nburst = 10\n";
  const std::string cfg = dir.write("levee.toml", a);
  LeveeRun d(sb(), {"--config", cfg, "--prune-every", "10s"});
  d.wait_ready();
  if (HasFatalFailure()) return;

  // Files renamed over the config, A, bad, B, bad, ..., each with a SIGHUP, while the
  // reloads they cause are running.
  std::atomic<bool> done{false};
  unsigned swaps = 0;
  std::thread storm([&] {
    const std::string* files[] = {&a, &bad, &b, &bad};
    const std::string tmp = dir.path() + "/next.toml";
    for (; !done; ++swaps) {
      dir.write("next.toml", *files[swaps % 4]);
      if (std::rename(tmp.c_str(), cfg.c_str()) != 0) break;
      d.signal(SIGHUP);
      usleep(5'000 + 10'000 * (swaps % 7));  // uneven: a reload finds each of the four files
    }
  });
  // Status as two readings without a reload between them (the same generation): the
  // first reading then saw one slot.
  unsigned samples = 0, mixed = 0;
  const uint64_t until = now_ns() + 4'000'000'000ull;
  while (now_ns() < until) {
    const json s0 = sb().status(), s1 = sb().status();
    if (s0.at("policy_generation") != s1.at("policy_generation")) continue;
    ++samples;
    const uint64_t rate = s0.at("classes").at(0).at("rate").get<uint64_t>();
    const uint64_t burst = s0.at("classes").at(0).at("burst").get<uint64_t>();
    const uint64_t deny = s0.at("lists").at("deny").get<uint64_t>();
    const bool is_a = rate == 100 && burst == 10 && deny == 300, is_b = rate == 300 && burst == 30 && deny == 700;
    if (!is_a && !is_b) {
      ++mixed;
      ADD_FAILURE() << "neither policy: rate " << rate << " burst " << burst << " deny " << deny;
    }
  }
  done = true;
  storm.join();
  report("config_swaps", swaps);
  report("status_samples", samples);
  EXPECT_EQ(mixed, 0u);
  EXPECT_GT(samples, 5u);
  EXPECT_GT(d.sample("levee_reloads_total", {{"result", "success"}}), 1);
  EXPECT_GT(d.sample("levee_reloads_total", {{"result", "failure"}}), 0);

  // The storm over, the file B: a last SIGHUP ends in B.
  dir.write("levee.toml", b);
  d.signal(SIGHUP);
  EXPECT_TRUE(eventually(
      [&] {
        const json s = sb().status();
        return s.at("classes").at(0).at("rate") == 300 && s.at("lists").at("deny") == 700;
      },
      5000))
      << sb().status().dump();
  EXPECT_TRUE(eventually([&] { return d.sample("levee_config_last_reload_success") == 1; }, 3000));
  const RunResult r = d.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
}

TEST_F(Faults, NoScraperLosesNothingAndATakenMetricsPortRefusesARestartLeavingTheFilter) {
  TempDir dir;
  const std::string cfg = dir.write("levee.toml", kTightPolicy);
  auto d = std::make_unique<LeveeRun>(sb(), std::vector<std::string>{"--config", cfg, "--prune-every", "1s"});
  d->wait_ready();
  if (HasFatalFailure()) return;

  // Nobody scrapes for a while: the counters are the kernel's, and the first scrape
  // after has every packet.
  delivered(sb(), Addrs::src4()[0]);
  usleep(2'500'000);
  const json s = sb().stats();
  const Http m = d->scrape();
  ASSERT_EQ(m.status, 200);
  EXPECT_EQ(metric(m.body, "levee_packets_total", {{"verdict", "dropped"}}),
            static_cast<double>(ju(s, "dropped_packets")));
  EXPECT_GT(ju(s, "dropped_packets"), 300u);

  // The daemon dies; its restart finds the port taken: refused in one line before
  // anything changes, and the filter keeps running as it was.
  RunResult killed = d->kill9();
  EXPECT_EQ(killed.code, 128 + SIGKILL);
  d.reset();
  const uint64_t gen = sb().status().at("policy_generation").get<uint64_t>();
  {
    const levee::Fd fd = socket_in(sb().rx_ns(), AF_INET, SOCK_STREAM, 0);
    socklen_t len = 0;
    const sockaddr_storage addr = sockaddr_of("127.0.0.1", kMetricsPort, len);
    // Taken as another levee run (of another interface) or any cpp-httplib server takes
    // it: SO_REUSEADDR and SO_REUSEPORT, which also gets past the killed daemon's
    // connections in TIME_WAIT. A second listener with SO_REUSEPORT would share it.
    const int one = 1;
    ASSERT_EQ(setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0);
    ASSERT_EQ(setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one), 0);
    ASSERT_EQ(bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), len), 0) << std::strerror(errno);
    ASSERT_EQ(listen(fd.get(), 1), 0);
    expect_error(sb().levee({"run", sb().rx_if(), "--config", cfg, "--metrics", std::to_string(kMetricsPort)}), 1,
                 "cannot serve metrics on 127.0.0.1:" + std::to_string(kMetricsPort));
  }
  EXPECT_EQ(sb().status().at("policy_generation").get<uint64_t>(), gen);
  EXPECT_EQ(ju(sb().stats(), "dropped_packets"), ju(s, "dropped_packets"));
  EXPECT_LE(delivered(sb(), Addrs::src4()[1]), kLimitedAtMost);
}

// A deny list of n host entries in 198.19.0.0/16 starting at `from`, plus `extra`.
std::string deny_policy(unsigned from, unsigned n, const std::string& extra) {
  std::string s = "[default]\nrate = \"10k\"\nburst = \"1k\"\n[lists]\ndeny = [\"" + extra + "\"";
  for (unsigned i = from; i < from + n; ++i)
    s += ", \"198.19." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1) + "\"";
  return s + "]\n";
}

TEST_F(Faults, Kill9DuringAListRebuildLeavesTheOldOrTheNewListsAndARestartAdopts) {
  constexpr unsigned kEntries = 10'000;  // a rebuild of some seconds before list changes were linear
  TempDir dir;
  const std::string old_src = Addrs::src4()[0], new_src = Addrs::src4()[1];
  const std::string cfg = dir.write("levee.toml", deny_policy(0, kEntries, old_src));
  auto d = std::make_unique<LeveeRun>(sb(), std::vector<std::string>{"--config", cfg, "--prune-every", "10s"});
  d->wait_ready();
  if (HasFatalFailure()) return;
  ASSERT_EQ(sb().status().at("lists").at("deny"), kEntries + 1);

  // The new list shares no entry with the old one: the rebuild rewrites all of it.
  dir.write("levee.toml", deny_policy(kEntries, kEntries + 1, new_src));
  const uint64_t t0 = now_ns();
  d->signal(SIGHUP);
  usleep(400'000);
  RunResult killed = d->kill9();
  EXPECT_EQ(killed.code, 128 + SIGKILL);
  report("killed_after_ms", static_cast<double>(now_ns() - t0) / 1e6);
  d.reset();

  ASSERT_TRUE(xdp_query(sb().rx_ns(), sb().rx_if()).any()) << "the filter went with the daemon";
  const uint64_t deny = sb().status().at("lists").at("deny").get<uint64_t>();
  const bool old_lists = deny == kEntries + 1;
  EXPECT_TRUE(old_lists || deny == kEntries + 2) << "deny list of " << deny << " entries";
  report("old_lists_after_kill", old_lists ? 1 : 0);
  const uint64_t got_old = delivered(sb(), old_src), got_new = delivered(sb(), new_src);
  EXPECT_EQ(got_old == 0, old_lists) << "old " << got_old << ", new " << got_new;
  EXPECT_EQ(got_new == 0, !old_lists) << "old " << got_old << ", new " << got_new;

  // A new levee run adopts the filter and loads the file: the new lists.
  LeveeRun b(sb(), {"--config", cfg, "--prune-every", "10s"});
  b.wait_ready(60'000);
  if (HasFatalFailure()) return;
  EXPECT_EQ(sb().status().at("lists").at("deny"), kEntries + 2);
  EXPECT_GT(delivered(sb(), old_src), 400u);
  EXPECT_EQ(delivered(sb(), new_src), 0u);
  const RunResult r = b.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_TRUE(has(r.err, "adopted the running filter")) << r.err;
}

// SIGTERM while a SIGHUP's reload rewrites a deny list of 30,000 entries: the signal only
// sets a flag the loop reads between its steps, so the reload ends whole (or, when the
// SIGTERM came before the loop took the SIGHUP, never starts), and then the daemon stops
// as for any SIGTERM: exit 0, the filter attached and holding the old lists or the new
// ones, as its status and the traffic agree.
TEST_F(Faults, SigtermDuringAReloadStopsAfterItWhole) {
  constexpr unsigned kEntries = 30'000;
  TempDir dir;
  const std::string old_src = Addrs::src4()[0], new_src = Addrs::src4()[1];
  const std::string cfg = dir.write("levee.toml", deny_policy(0, kEntries, old_src));
  LeveeRun d(sb(), {"--config", cfg, "--prune-every", "10s"});
  d.wait_ready(60'000);
  if (HasFatalFailure()) return;
  ASSERT_EQ(sb().status().at("lists").at("deny"), kEntries + 1);

  dir.write("levee.toml", deny_policy(kEntries, kEntries + 1, new_src));
  const uint64_t t0 = now_ns();
  d.signal(SIGHUP);
  usleep(100'000);
  d.signal(SIGTERM);
  const RunResult r = d.stop();
  report("stopped_after_ms", static_cast<double>(now_ns() - t0) / 1e6);
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_TRUE(has(r.err, "stopped; the filter stays attached")) << r.err;
  EXPECT_FALSE(has(r.err, "reload failed")) << r.err;
  const bool reloaded = has(r.err, "reloaded " + cfg);
  report("reloaded_before_the_stop", reloaded ? 1 : 0);

  ASSERT_TRUE(xdp_query(sb().rx_ns(), sb().rx_if()).any()) << "the filter went with the daemon";
  EXPECT_EQ(sb().status().at("lists").at("deny").get<uint64_t>(), reloaded ? kEntries + 2 : kEntries + 1);
  EXPECT_EQ(delivered(sb(), old_src) == 0, !reloaded);
  EXPECT_EQ(delivered(sb(), new_src) == 0, reloaded);
}

}  // namespace
}  // namespace lvt
