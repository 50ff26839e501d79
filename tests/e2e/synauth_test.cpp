// synauth_test.cpp - SYN authentication end to end: a real client's stack answers
// levee's cookie SYN-ACK with the RST that proves its address, and its connection to a
// listener behind levee completes; a connection made before the attach keeps working.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e.hpp"
#include "flood_harness.hpp"
#include "levee_abi.h"
#include "levee_run.hpp"
#include "syn_support.hpp"

namespace lvt {
namespace {

constexpr uint16_t kPort = kSynPort;
const std::string kSynAuthPolicy = syn_auth_policy(kPort);

class SynAuth : public SynAuthTest {};

// Proxy mode (syn_auth = "cookie" on a kernel with the kfunc): a client levee has never
// seen connects on its first SYN. levee answers it with a cookie SYN-ACK, the client's
// ACK returns the cookie and levee's tc program hands the connection to the listener,
// with the options the SYN asked for: the same MSS, window scales, SACK and timestamps
// on both ends as the stack would have made. Its second connection goes straight
// through.
TEST_P(SynAuth, ANewClientConnectsOnItsFirstSynThroughTheProxy) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kSynAuthPolicy)});
  const levee::Fd lfd = listener(sb().rx_ns(), family());
  const auto s0 = sb().stats();

  const Talked first = connect_and_talk(sb().tx_ns(), family(), lfd.get());
  ASSERT_TRUE(first.ok) << "after " << first.client.seconds << " s; " << stat_reasons_text(sb().stats(), "dropped");
  const auto s1 = sb().stats();
  EXPECT_EQ(stat_reason_delta(s0, s1, "dropped", "challenged"), 1) << stat_reasons_text(s1, "dropped");
  EXPECT_EQ(stat_reason_delta(s0, s1, "passed", "proxied"), 1) << stat_reasons_text(s1, "passed");
  EXPECT_EQ(stat_reason_delta(s0, s1, "dropped", "verified"), 0);
  EXPECT_EQ(stat_reason_delta(s0, s1, "dropped", "unverified"), 0);
  EXPECT_EQ(s1["syn_handoffs"]["handed"].get<int64_t>() - s0["syn_handoffs"]["handed"].get<int64_t>(), 1)
      << s1["syn_handoffs"].dump();
  const tcp_info client = info_of(first.client.fd.get()), server = info_of(first.server.get());
  EXPECT_EQ(client.tcpi_total_retrans, 0u) << "no SYN sent twice";
  const uint8_t all = TCPI_OPT_TIMESTAMPS | TCPI_OPT_SACK | TCPI_OPT_WSCALE;
  EXPECT_EQ(server.tcpi_options & all, all) << "timestamps, SACK, window scale";
  EXPECT_EQ(client.tcpi_options & all, all);
  EXPECT_EQ(server.tcpi_snd_wscale, client.tcpi_rcv_wscale);
  EXPECT_EQ(server.tcpi_rcv_wscale, client.tcpi_snd_wscale);
  EXPECT_EQ(server.tcpi_snd_mss, client.tcpi_snd_mss) << "the client's MSS";
  report(std::string("proxy_first_connect_s_") + family().name, first.client.seconds);

  const Talked second = connect_and_talk(sb().tx_ns(), family(), lfd.get());
  EXPECT_TRUE(second.ok);
  EXPECT_EQ(stat_reason_delta(s1, sb().stats(), "dropped", "challenged"), 0) << "its source is known-good";
}

// Reset mode: the client's stack answers levee's SYN-ACK, whose acknowledgment is the
// cookie, with the RST that returns it, and its next SYN (retransmitted at once: Linux
// answers an unacceptable SYN-ACK in SYN-SENT with a RST and re-arms its timer at the
// minimum) reaches the listener. The RST alone proves nothing: the connection does,
// once it carried the host's data to the client and back. Then its second connection
// goes straight through.
TEST_P(SynAuth, ANewClientConnectsOnceItProvedItsAddressByReset) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", syn_auth_policy(kPort, "reset"))});
  const levee::Fd lfd = listener(sb().rx_ns(), family());
  const auto s0 = sb().stats();

  const Talked first = connect_and_talk(sb().tx_ns(), family(), lfd.get());
  ASSERT_TRUE(first.ok) << "after " << first.client.seconds << " s; " << stat_reasons_text(sb().stats(), "dropped");
  const auto s1 = sb().stats();
  EXPECT_EQ(stat_reason_delta(s0, s1, "dropped", "challenged"), 1) << stat_reasons_text(s1, "dropped");
  EXPECT_EQ(stat_reason_delta(s0, s1, "dropped", "verified"), 1);
  EXPECT_EQ(stat_reason_delta(s0, s1, "passed", "retried"), 1);
  EXPECT_EQ(stat_reason_delta(s0, s1, "dropped", "unverified"), 0);
  EXPECT_EQ(stat_reason_delta(s0, s1, "passed", "proxied"), 0);
  report(std::string("first_connect_s_") + family().name, first.client.seconds);
  // The client's ACK of the host's data (delayed ACKs: a while), then a packet after it.
  usleep(100'000);
  EXPECT_TRUE(talks(first.client.fd.get(), first.server.get()));
  usleep(100'000);
  EXPECT_TRUE(talks(first.client.fd.get(), first.server.get()));
  const auto s2 = sb().stats();

  const Talked second = connect_and_talk(sb().tx_ns(), family(), lfd.get());
  EXPECT_TRUE(second.ok);
  EXPECT_EQ(stat_reason_delta(s2, sb().stats(), "dropped", "challenged"), 0) << "its connection proved its source";
  report(std::string("second_connect_s_") + family().name, second.client.seconds);
}

// A connection established before levee attached has no state and never sent levee a
// SYN: its packets pass because the host has the connection (the socket table), which
// proves its source.
TEST_P(SynAuth, AConnectionFromBeforeTheAttachKeepsWorking) {
  const levee::Fd lfd = listener(sb().rx_ns(), family());
  Connected c = connect_from(sb().tx_ns(), family());
  ASSERT_TRUE(c.fd.valid());
  const levee::Fd a = accept_one(lfd.get());
  ASSERT_TRUE(a.valid());
  ASSERT_TRUE(talks(c.fd.get(), a.get()));

  TempDir dir;
  attach({"--config", dir.write("levee.toml", kSynAuthPolicy)});
  const auto s0 = sb().stats();
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(talks(c.fd.get(), a.get())) << "exchange " << i;
  const auto s1 = sb().stats();
  EXPECT_EQ(stat_reason_delta(s0, s1, "dropped", "unverified"), 0) << stat_reasons_text(s1, "dropped");
  EXPECT_EQ(stat_reason_delta(s0, s1, "dropped", "challenged"), 0);

  // The host's connection proved the client's address as a cookie would: its next
  // connection goes to the listener unchallenged.
  Connected again = connect_from(sb().tx_ns(), family());
  ASSERT_TRUE(again.fd.valid());
  const levee::Fd b = accept_one(lfd.get());
  ASSERT_TRUE(b.valid());
  ASSERT_TRUE(talks(again.fd.get(), b.get()));
  EXPECT_EQ(stat_reason_delta(s1, sb().stats(), "dropped", "challenged"), 0)
      << stat_reasons_text(sb().stats(), "dropped");
}

// 200 new clients, each from an address levee has never seen, connecting at 20/s while
// levee-flood sends 300k SYNs/s from random spoofed sources to the same port, and 200
// clients that connected before the flood (at 100/s) connecting again beside them;
// levee attached with `attach_args`. `own_network`: the new clients are of the flood's
// network (the IPv4 /16, the IPv6 /48; the flood spoofs the other half of it, to which
// the peer sink sends levee's answers), else of networks of their own. What came of it.
struct ThroughAFloodCase {
  std::vector<std::string> attach_args;
  std::string prefix;  // of the reported names
  bool own_network = false;
};
struct ThroughAFlood {
  size_t answered = 0;                  // new clients connected within 3 s
  size_t calm = 0;                      // clients before the flood connected
  size_t calm_again = 0;                // of them, connected again during it within 3 s
  int calm_first_syn = 0;               // of those, on their first SYN
  int first_syn = 0;                    // new clients connected on their first SYN
  int accepted = 0;                     // connections the listener accepted
  int64_t overflows = 0;                // the listener's: the flood reached it
  int64_t challenged = 0, limited = 0;  // SYNs answered, refused an answer
  int64_t flood_passed = 0;             // packets passed less the clients' (an upper bound)
  FloodResult flood;
};

ThroughAFlood new_clients_through_a_syn_flood(Sandbox& sb, const Family& fam, ThroughAFloodCase how) {
  constexpr int kClients = 200, kCalm = 200;
  constexpr double kClientGap = 0.05, kCalmGap = 0.01;  // 20 a second; 100 a second
  std::vector<std::string> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(
        how.own_network
            ? fam.pick("198.19.200." + std::to_string(30 + i), "2001:db8:8000:" + std::to_string(8001 + i) + "::1")
            : fam.pick("198.18.0." + std::to_string(30 + i), "2001:db8:100:" + std::to_string(i + 1) + "::1"));
    sb.add_sender_address(clients.back());
  }
  for (int i = 0; i < kCalm; ++i) {
    clients.push_back(fam.pick("198.18.1." + std::to_string(30 + i), "2001:db8:200:" + std::to_string(i + 1) + "::1"));
    sb.add_sender_address(clients.back());
  }
  const std::string flood_range =
      how.own_network ? fam.pick("198.19.0.0/17", "2001:db8:8000::/49") : fam.pick(kFlood4, kFlood6);
  if (how.own_network)
    attach_peer_sink(sb.tx_ns(), sb.tx_if(), fam.pick(flood_range, std::string()),
                     fam.pick(std::string(), flood_range));
  how.attach_args.insert(how.attach_args.begin(), {"attach", sb.rx_if()});
  const RunResult att = sb.levee(how.attach_args);
  if (att.code != 0) throw std::runtime_error("levee attach: " + att.describe());
  const levee::Fd lfd = listener(sb.rx_ns(), fam);
  std::atomic<bool> serving{true};
  std::atomic<int> accepted{0};
  std::thread server([&] {
    const timeval tv{0, 100'000};
    setsockopt(lfd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (serving) {
      const levee::Fd fd(accept(lfd.get(), nullptr, nullptr));
      if (fd.valid()) accepted++;
    }
  });
  // A client's connect from `clients[i]` into slot `slot`: its latency (-1: failed)
  // and whether its stack sent anything twice.
  std::vector<double> latency(kClients + 2 * kCalm, -1);
  std::vector<uint32_t> retrans(kClients + 2 * kCalm, 0);
  auto connect_client = [&](int i, int slot) {
    in_netns(sb.tx_ns(), [&] {
      levee::Fd fd(socket(fam.af, SOCK_STREAM | SOCK_CLOEXEC, 0));
      socklen_t blen = 0, len = 0;
      const sockaddr_storage from = sockaddr_of(clients[i], 0, blen), to = sockaddr_of(fam.rx(), kPort, len);
      const timeval tv{3, 0};
      setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&from), blen) != 0) return;
      const uint64_t t = now_ns();
      if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), len) != 0) return;
      latency[slot] = secs(now_ns() - t);
      retrans[slot] = info_of(fd.get()).tcpi_total_retrans;
    });
  };
  auto p99_of = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? -1 : v[(v.size() * 99) / 100 - (v.size() >= 100 ? 1 : 0)];
  };
  ThroughAFlood out;
  std::vector<double> calm;
  const uint64_t c0 = now_ns();
  for (int i = kClients; i < kClients + kCalm; ++i) {
    sleep_until_ns(c0 + static_cast<uint64_t>((i - kClients) * kCalmGap * 1e9));
    connect_client(i, i);
    if (latency[i] >= 0) calm.push_back(latency[i]);
  }
  out.calm = calm.size();
  const int64_t over0 = listener_overflows(sb.rx_ns());
  const auto s0 = sb.stats();

  FloodSpec spec{.ns = sb.tx_ns(),
                 .dev = sb.tx_if(),
                 .dst = fam.rx(),
                 .random = flood_range,
                 .proto = "syn",
                 .dport = kPort,
                 .rate = 300'000,
                 .seconds = 13};
  Flood flood(spec);
  usleep(1'500'000);  // the flood at full speed first

  std::vector<std::thread> threads;
  const uint64_t t0 = now_ns();
  for (int i = 0; i < kClients; ++i) {
    sleep_until_ns(t0 + static_cast<uint64_t>(i * kClientGap * 1e9));
    threads.emplace_back([&, i] { connect_client(i, i); });
    threads.emplace_back([&, i] { connect_client(kClients + i, kClients + kCalm + i); });  // a calm client again
  }
  for (auto& th : threads) th.join();
  out.flood = flood.wait();
  usleep(200'000);
  serving = false;
  server.join();
  const auto s1 = sb.stats();
  out.overflows = listener_overflows(sb.rx_ns()) - over0;
  out.accepted = accepted.load();

  std::vector<double> ok;
  for (int i = 0; i < kClients; ++i) {
    if (latency[i] >= 0 && latency[i] <= 3.0) ok.push_back(latency[i]);
    out.first_syn += latency[i] >= 0 && retrans[i] == 0;
  }
  out.answered = ok.size();
  for (int i = kClients + kCalm; i < kClients + 2 * kCalm; ++i) {
    out.calm_again += latency[i] >= 0 && latency[i] <= 3.0;
    out.calm_first_syn += latency[i] >= 0 && retrans[i] == 0;
  }
  std::sort(ok.begin(), ok.end());
  const double p50 = ok.empty() ? -1 : ok[ok.size() / 2], p99 = p99_of(ok);
  out.challenged = stat_reason_delta(s0, s1, "dropped", "challenged");
  out.limited = stat_reason_delta(s0, s1, "dropped", "answer_limit");
  // What passed, less what the clients sent (a handshake and a close: at most 10 each).
  int64_t passed = 0;
  for (const auto& [reason, v] : s1["passed"].items()) passed += stat_reason_delta(s0, s1, "passed", reason);
  out.flood_passed = std::max<int64_t>(0, passed - 10 * (kClients + kCalm));
  const std::string tag = how.prefix + fam.name;
  report("clients_answered_within_3s_" + tag, static_cast<double>(ok.size()));
  report("client_connect_p50_ms_" + tag, 1e3 * p50);
  report("client_connect_p99_ms_" + tag, 1e3 * p99);
  report("calm_connect_p99_ms_" + tag, 1e3 * p99_of(calm));
  report("clients_on_first_syn_" + tag, out.first_syn);
  report("calm_clients_again_on_first_syn_" + tag, out.calm_first_syn);
  report("flood_pps_" + tag, out.flood.pps);
  report("challenged_" + tag, static_cast<double>(out.challenged));
  report("answer_limit_" + tag, static_cast<double>(out.limited));
  report(
      "flood_passed_pct_" + tag,
      out.flood.packets ? 100.0 * static_cast<double>(out.flood_passed) / static_cast<double>(out.flood.packets) : -1);
  std::printf("%s\n", stat_reasons_text(s1, "dropped").c_str());
  return out;
}

// What every run of new_clients_through_a_syn_flood must show: each new client answered
// within 3 s, the clients from before the flood untouched by it (each connects again on
// its first SYN, within 3 s), and every connection accepted.
void expect_clients_through(const ThroughAFlood& r) {
  EXPECT_EQ(r.calm, 200u) << "before the flood";
  EXPECT_GE(r.answered, size_t{198}) << "of 200 new clients, answered within 3 s";
  EXPECT_EQ(r.calm_again, 200u) << "of 200 clients from before the flood, connected again within 3 s during it";
  EXPECT_EQ(r.calm_first_syn, 200) << "of 200 clients from before the flood, on their first SYN";
  EXPECT_GE(r.accepted, 198 + 2 * 200);
}

// SYN authentication against the flood it is for (the flood that let 28 of 200 through
// a per-source limit, and 16 through a new-source budget). Every client is answered
// within 3 s, in proxy mode on its first SYN (no SYN sent twice: its latency is a round
// trip, reported beside that of the clients before the flood), and the listener sees
// nothing of the flood.
TEST_P(SynAuth, NewClientsConnectThroughASpoofedSynFlood) {
  TempDir dir;
  const ThroughAFlood r =
      new_clients_through_a_syn_flood(sb(), family(), {{"--config", dir.write("levee.toml", kSynAuthPolicy)}, ""});
  ASSERT_TRUE(r.flood.ok) << r.flood.run.describe();
  expect_clients_through(r);
  EXPECT_GE(r.first_syn, 198) << "connected on their first SYN (proxy mode)";
  EXPECT_EQ(r.overflows, 0) << "the listener dropped or cookie-answered SYNs: the flood reached it";
  EXPECT_GE(r.challenged + r.limited, static_cast<int64_t>(r.flood.packets * 95 / 100));
}

// The defaults: the same flood and clients, levee attached with nothing but `--rate 500
// --burst 100`, so syn_auth is "auto". The flood is met by the autopilot first (the IPv4
// /16 is escalated, the IPv6 /33's random /48s engage the class), and new clients get
// in: through admission where their network is not the flood's, through the challenge
// once the class is engaged. Less than 1 % of the flood passes (what came before the
// autopilot acted).
TEST_P(SynAuth, NewClientsConnectThroughASpoofedSynFloodUnderAuto) {
  const ThroughAFlood r =
      new_clients_through_a_syn_flood(sb(), family(), {{"--rate", "500", "--burst", "100"}, "auto_"});
  ASSERT_TRUE(r.flood.ok) << r.flood.run.describe();
  expect_clients_through(r);
  EXPECT_LT(r.flood_passed, static_cast<int64_t>(r.flood.packets / 100)) << "of " << r.flood.packets;
}

// The defaults, and new clients of the flood's own network (its /16, another /24 of
// it): once that network is escalated, its new clients are challenged instead of
// refused with it, and get in by their handshakes. IPv4 only: an IPv6 flood and clients
// of one /48 share the answers levee may send that /48 ([syn_auth] answer_prefix6, 48,
// as network_prefix6), which the flood spends (answer_limit): a known limit.
class SynAuthOwnNetwork : public SynAuthTest {};
INSTANTIATE_TEST_SUITE_P(, SynAuthOwnNetwork, ::testing::Values(kIpv4), family_name);

TEST_P(SynAuthOwnNetwork, NewClientsOfTheFloodsOwnNetworkConnectUnderAuto) {
  const ThroughAFlood r =
      new_clients_through_a_syn_flood(sb(), family(), {{"--rate", "500", "--burst", "100"}, "auto_own_", true});
  ASSERT_TRUE(r.flood.ok) << r.flood.run.describe();
  expect_clients_through(r);
  EXPECT_GT(r.challenged, 0);
  EXPECT_LT(r.flood_passed, static_cast<int64_t>(r.flood.packets / 100)) << "of " << r.flood.packets;
}

// A SYN flood that spoofs the addresses of one network (a /24, a /48) would make levee
// that network's hose: levee sends it no more SYN-ACKs than [syn_auth] answer_rate (1,000/s
// after a burst of 100), the rest of the flood is dropped unanswered (answer_limit).
TEST_P(SynAuth, SynAcksTowardsOneNetworkKeepToTheirRate) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kSynAuthPolicy)});
  const levee::Fd lfd = listener(sb().rx_ns(), family());  // levee answers only a port that listens
  const auto s0 = sb().stats();
  FloodSpec spec{.ns = sb().tx_ns(),
                 .dev = sb().tx_if(),
                 .dst = family().rx(),
                 .random = family().pick("198.19.5.0/24", "2001:db8:8000:5::/64"),
                 .proto = "syn",
                 .dport = kPort,
                 .rate = 100'000,
                 .seconds = 5};
  const FloodResult fr = Flood(spec).wait();
  ASSERT_TRUE(fr.ok) << fr.run.describe();
  const auto s1 = sb().stats();
  const double answered = static_cast<double>(stat_reason_delta(s0, s1, "dropped", "challenged"));
  const double allowed = 100 + 1000 * fr.seconds;
  report(std::string("synacks_to_one_network_") + family().name, answered);
  report(std::string("synacks_allowed_") + family().name, allowed);
  EXPECT_LE(answered, allowed * 1.05) << stat_reasons_text(s1, "dropped");
  EXPECT_GE(answered, allowed * 0.95) << stat_reasons_text(s1, "dropped");
  EXPECT_GE(stat_reason_delta(s0, s1, "dropped", "answer_limit"), static_cast<int64_t>(fr.packets * 9 / 10));
}

// Real clients through the flood SYN authentication is for: nginx, and wrk making every
// request a new connection, while levee-flood sends SYNs from random spoofed sources to
// nginx's port at its full speed. wrk's address proves itself once (its first
// connections are challenged, and each costs one SYN retransmission, counted a failure);
// >= 99% of its requests succeed, and neither a flood SYN nor anything else of the
// flood reaches the receiver. Every flood SYN is answered or refused an answer: from a
// /16 (256 networks of [syn_auth]'s /24) at most 256 x answer_rate a second are
// answered, from a /33 of IPv6 (2^15 /48s) nearly all.
TEST_P(SynAuth, NginxServesNewConnectionsThroughAFullSpeedSynFlood) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", syn_auth_policy(80))});
  ScenarioSpec spec;
  spec.family = family();
  spec.flood_prefix = family().pick(kFlood4, kFlood6);
  spec.flood_proto = "syn";
  spec.flood_dport = 80;
  spec.flood_seconds = env_double("LVT_FLOOD_SECONDS", 10);
  spec.wire_cpu = wire_cpu();
  const int64_t over0 = listener_overflows(sb().rx_ns());
  const ScenarioResult r = run_scenario(sb(), spec);
  const int64_t over1 = listener_overflows(sb().rx_ns());
  report_scenario(std::string("syn_flood_") + family().name, r);
  ASSERT_TRUE(r.flood.ok) << r.flood.describe();
  expect_nginx_through(r);
  EXPECT_EQ(r.flood_frames_passed, 0u) << "flood frames reached the receiver";
  EXPECT_EQ(over1 - over0, 0) << "the listener dropped or cookie-answered SYNs: the flood reached it";
  const int64_t challenged = stat_reason_delta(r.before.stats, r.after.stats, "dropped", "challenged");
  const int64_t limited = stat_reason_delta(r.before.stats, r.after.stats, "dropped", "answer_limit");
  report(std::string("syn_flood_challenged_") + family().name, static_cast<double>(challenged));
  report(std::string("syn_flood_answer_limit_") + family().name, static_cast<double>(limited));
  EXPECT_GE(challenged + limited, static_cast<int64_t>(r.flood.packets * 99 / 100))
      << stat_reasons_text(r.after.stats, "dropped");
  if (family().af == AF_INET) {
    EXPECT_LE(challenged, static_cast<int64_t>(256 * (100 + 1000 * (r.flood.seconds + 1)))) << "the /24s' answer rate";
  }
}

INSTANTIATE_TEST_SUITE_P(, SynAuth, kBothFamilies, family_name);

// ---- SYN authentication and the host it runs on: the listener's sysctls, levee's tc
// filter among other tools' filters, the cookie keys across a detach and attach.

// A net.ipv4 sysctl of a namespace (the sandbox's: it goes with the namespace).
void set_sysctl(const std::string& ns, const std::string& name, int value) {
  in_netns(ns, [&] {
    std::ofstream f("/proc/sys/net/ipv4/" + name);
    f << value << "\n";
    f.flush();
    if (!f) throw std::runtime_error("write net.ipv4." + name + " in " + ns);
  });
}

// The filters of an interface's clsact ingress hook as tc lists them (JSON), without the
// head entries of each priority.
std::vector<nlohmann::json> tc_filters(const std::string& ns, const std::string& ifname) {
  std::vector<nlohmann::json> out;
  const auto all = nlohmann::json::parse(must({"tc", "-n", ns, "-j", "filter", "show", "dev", ifname, "ingress"}));
  for (const auto& f : all)
    if (f.contains("options")) out.push_back(f);
  return out;
}
// The filter at (priority, handle), or null.
nlohmann::json tc_filter_at(const std::string& ns, const std::string& ifname, int prio, const std::string& handle) {
  for (const auto& f : tc_filters(ns, ifname))
    if (f.value("pref", 0) == prio && f["options"].value("handle", "") == handle) return f;
  return nullptr;
}
bool is_levees(const nlohmann::json& f) {
  return !f.is_null() && f["options"].contains("prog") && f["options"]["prog"].value("name", "") == "levee_handoff";
}
bool has_clsact(const std::string& ns, const std::string& ifname) {
  return must({"tc", "-n", ns, "qdisc", "show", "dev", ifname}).find("clsact") != std::string::npos;
}
// tc's name of a handle: "0x1ee".
std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "%#x", v);
  return b;
}

// The listener's namespace turned one of the handshake's options off (as hardened hosts
// do): the kernel refuses a hand-off that has it, so levee's SYN-ACKs must not offer it.
// With each of net.ipv4.tcp_timestamps, tcp_sack and tcp_window_scaling at 0, 10 of 10
// new Linux clients connect on their first SYN, handed to the listener, the option left
// out on both ends; status says what the SYN-ACKs leave out. (Before, 0 of 10 connected
// within 3 s: every hand-off was refused.)
TEST_P(SynAuth, NewClientsConnectWithEachOptionSysctlOff) {
  std::vector<std::string> clients;
  for (int i = 0; i < 10; ++i) {
    clients.push_back(
        family().pick("198.18.0." + std::to_string(60 + i), "2001:db8:300:" + std::to_string(i + 1) + "::1"));
    sb().add_sender_address(clients.back());
  }
  struct Off {
    const char* sysctl;
    const char* name;  // in status's tcp_options_off
    uint8_t tcpi;      // in tcp_info's options
  };
  for (const Off off :
       {Off{"tcp_timestamps", "timestamps", TCPI_OPT_TIMESTAMPS}, Off{"tcp_sack", "sack", TCPI_OPT_SACK},
        Off{"tcp_window_scaling", "window_scaling", TCPI_OPT_WSCALE}}) {
    SCOPED_TRACE(off.sysctl);
    set_sysctl(sb().rx_ns(), off.sysctl, 0);
    TempDir dir;
    attach({"--config", dir.write("levee.toml", kSynAuthPolicy)});
    const levee::Fd lfd = listener(sb().rx_ns(), family());
    const auto s0 = sb().stats();
    int ok = 0;
    for (const std::string& c : clients) {
      const Talked t = connect_and_talk(sb().tx_ns(), family(), lfd.get(), c);
      if (!t.ok || t.client.seconds > 3) continue;
      ++ok;
      EXPECT_EQ(info_of(t.server.get()).tcpi_options & off.tcpi, 0) << c << ": the option was negotiated";
      EXPECT_EQ(info_of(t.client.fd.get()).tcpi_total_retrans, 0u) << c << ": its SYN was sent twice";
    }
    const auto s1 = sb().stats();
    EXPECT_EQ(ok, 10) << stat_reasons_text(s1, "dropped") << s1["syn_handoffs"].dump();
    EXPECT_EQ(s1["syn_handoffs"]["handed"].get<int64_t>() - s0["syn_handoffs"]["handed"].get<int64_t>(), 10);
    EXPECT_EQ(s1["syn_handoffs"]["refused"].get<int64_t>() - s0["syn_handoffs"]["refused"].get<int64_t>(), 0);
    const nlohmann::json st = sb().status();
    ASSERT_TRUE(st.contains("syn_auth") && st["syn_auth"].is_object()) << st.dump();
    EXPECT_EQ(st["syn_auth"]["tcp_options_off"], nlohmann::json::array({off.name})) << st["syn_auth"].dump();
    detach();
    set_sysctl(sb().rx_ns(), off.sysctl, 1);
  }
}

// levee run follows the listener's sysctls while it runs: an option turned off is left
// out of the SYN-ACKs within a second or two (an event, status, a metric), and with
// net.ipv4.tcp_syncookies at 0, where the kernel refuses every hand-off, it answers in
// reset mode until it is back. New clients connect throughout.
TEST_P(SynAuth, LeveeRunFollowsTheListenersSysctls) {
  std::vector<std::string> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(
        family().pick("198.18.0." + std::to_string(80 + i), "2001:db8:400:" + std::to_string(i + 1) + "::1"));
    sb().add_sender_address(clients.back());
  }
  TempDir dir;
  const std::string events = dir.path() + "/events.jsonl";
  LeveeRun run(sb(), {"--config", dir.write("levee.toml", kSynAuthPolicy), "--events", events});
  run.wait_ready();
  const levee::Fd lfd = listener(sb().rx_ns(), family());
  EXPECT_EQ(run.sample("levee_syn_proxying"), 1);
  EXPECT_EQ(run.sample("levee_syn_tcp_option_offered", {{"option", "sack"}}), 1);

  set_sysctl(sb().rx_ns(), "tcp_sack", 0);
  EXPECT_TRUE(
      eventually([&] { return sb().status()["syn_auth"]["tcp_options_off"] == nlohmann::json::array({"sack"}); }, 3000))
      << sb().status()["syn_auth"].dump();
  EXPECT_EQ(run.sample("levee_syn_tcp_option_offered", {{"option", "sack"}}), 0);
  const Talked a = connect_and_talk(sb().tx_ns(), family(), lfd.get(), clients[0]);
  ASSERT_TRUE(a.ok) << stat_reasons_text(sb().stats(), "dropped");
  EXPECT_EQ(info_of(a.server.get()).tcpi_options & TCPI_OPT_SACK, 0);

  set_sysctl(sb().rx_ns(), "tcp_syncookies", 0);
  EXPECT_TRUE(eventually([&] { return sb().status()["syn_auth"]["mode"] == "reset"; }, 3000))
      << sb().status()["syn_auth"].dump();
  EXPECT_EQ(run.sample("levee_syn_proxying"), 0);
  const auto s0 = sb().stats();
  const Talked b = connect_and_talk(sb().tx_ns(), family(), lfd.get(), clients[1]);
  EXPECT_TRUE(b.ok) << "in reset mode: " << stat_reasons_text(sb().stats(), "dropped");
  EXPECT_EQ(stat_reason_delta(s0, sb().stats(), "passed", "proxied"), 0) << "proxied with tcp_syncookies 0";

  set_sysctl(sb().rx_ns(), "tcp_syncookies", 1);
  EXPECT_TRUE(eventually([&] { return sb().status()["syn_auth"]["mode"] == "proxy"; }, 3000));
  const auto s1 = sb().stats();
  const Talked c = connect_and_talk(sb().tx_ns(), family(), lfd.get(), clients[2]);
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(sb().stats()["syn_handoffs"]["handed"].get<int64_t>() - s1["syn_handoffs"]["handed"].get<int64_t>(), 1);
  run.stop();

  std::ifstream in(events);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> seen;
  for (const nlohmann::json& e : json_lines(text.str())) {
    if (e["type"] == "tcp_options") seen.push_back("tcp_options " + e["options_off"].dump());
    if (e["type"] == "syn_proxy") seen.push_back(std::string("syn_proxy ") + (e["proxying"] ? "on" : "off"));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"tcp_options [\"sack\"]", "syn_proxy off", "syn_proxy on"})) << text.str();
}

// Someone removes levee's tc filter (tc filter del, or the whole clsact qdisc): status
// says so (text and JSON), and levee run puts it back within a second or two, answering
// in reset mode meanwhile (a proxied ACK nobody hands off would be reset), counted in
// levee_filter_recoveries_total{action="tc_filter"}, an event each time. New clients
// connect through the proxy again.
TEST_P(SynAuth, ARemovedTcFilterIsSaidAndLeveeRunPutsItBack) {
  std::vector<std::string> clients;
  for (int i = 0; i < 2; ++i) {
    clients.push_back(
        family().pick("198.18.0." + std::to_string(90 + i), "2001:db8:500:" + std::to_string(i + 1) + "::1"));
    sb().add_sender_address(clients.back());
  }
  TempDir dir;
  const std::string config = dir.write("levee.toml", kSynAuthPolicy);
  attach({"--config", config});
  const nlohmann::json tc = sb().status()["syn_auth"]["tc_filter"];
  ASSERT_TRUE(tc.is_object()) << sb().status().dump();
  EXPECT_EQ(tc["present"], true);
  const int prio = tc["priority"];
  const std::string handle = hex(tc["handle"].get<uint32_t>());
  ASSERT_TRUE(is_levees(tc_filter_at(sb().rx_ns(), sb().rx_if(), prio, handle)));
  must({"tc", "-n", sb().rx_ns(), "filter", "del", "dev", sb().rx_if(), "ingress", "pref", std::to_string(prio),
        "handle", handle, "bpf"});
  const nlohmann::json gone = sb().status()["syn_auth"];
  EXPECT_EQ(gone["tc_filter"]["present"], false) << gone.dump();
  const RunResult text = sb().levee({"status"});
  EXPECT_NE(text.out.find("levee's tc filter at ingress priority " + std::to_string(prio) + ", handle " + handle +
                          " (missing)"),
            std::string::npos)
      << text.out;

  const std::string events = dir.path() + "/events.jsonl";
  LeveeRun run(sb(), {"--config", config, "--events", events});
  run.wait_ready();
  EXPECT_TRUE(eventually(
      [&] {
        return run.sample("levee_filter_recoveries_total", {{"action", "tc_filter"}}) == 1;
      },
      3000));
  EXPECT_EQ(run.sample("levee_syn_tc_filter_present"), 1);
  EXPECT_EQ(run.sample("levee_syn_proxying"), 1);
  EXPECT_EQ(sb().status()["syn_auth"]["tc_filter"]["present"], true);
  const levee::Fd lfd = listener(sb().rx_ns(), family());
  const auto s0 = sb().stats();
  EXPECT_TRUE(connect_and_talk(sb().tx_ns(), family(), lfd.get(), clients[0]).ok);
  EXPECT_EQ(sb().stats()["syn_handoffs"]["handed"].get<int64_t>() - s0["syn_handoffs"]["handed"].get<int64_t>(), 1);

  // The whole hook this time: levee makes it again, and owns it.
  must({"tc", "-n", sb().rx_ns(), "qdisc", "del", "dev", sb().rx_if(), "clsact"});
  EXPECT_TRUE(eventually(
      [&] {
        return run.sample("levee_filter_recoveries_total", {{"action", "tc_filter"}}) == 2;
      },
      3000));
  const nlohmann::json back = sb().status()["syn_auth"];
  EXPECT_EQ(back["tc_filter"]["present"], true) << back.dump();
  EXPECT_EQ(back["tc_filter"]["own_hook"], true) << back.dump();
  EXPECT_EQ(back["mode"], "proxy");
  const auto s1 = sb().stats();
  EXPECT_TRUE(connect_and_talk(sb().tx_ns(), family(), lfd.get(), clients[1]).ok);
  EXPECT_EQ(sb().stats()["syn_handoffs"]["handed"].get<int64_t>() - s1["syn_handoffs"]["handed"].get<int64_t>(), 1);
  run.stop();
  std::ifstream in(events);
  std::stringstream all;
  all << in.rdbuf();
  int put_back = 0, off = 0, on = 0;
  for (const nlohmann::json& e : json_lines(all.str())) {
    put_back += e["type"] == "tc_filter";
    off += e["type"] == "syn_proxy" && !e["proxying"].get<bool>();
    on += e["type"] == "syn_proxy" && e["proxying"].get<bool>();
  }
  EXPECT_EQ(put_back, 2) << all.str();
  EXPECT_EQ(off, 2) << all.str();
  EXPECT_EQ(on, 2) << all.str();
  detach();
  EXPECT_FALSE(has_clsact(sb().rx_ns(), sb().rx_if())) << "levee made the hook again: its detach removes it";
}

// A listener whose accept queue is full (it does not accept() fast enough): the kfunc
// takes the request socket (the hand-off counts `handed`, not `refused`), and the stack
// then drops the ACK as it drops any ACK of a full queue (TcpExtListenOverflows). The
// client believes it is connected; its data is retransmitted, each time with the cookie
// (a fresh mark's ACKs are handed again), and once the listener accepts, the next
// retransmission completes the connection with its data, never reset. (OPERATING once
// counted a full accept queue as `refused`.)
TEST_P(SynAuth, AFullAcceptQueueDropsTheHandedAckUntilTheClientRetransmits) {
  const std::string a = family().pick(std::string("198.18.0.100"), std::string("2001:db8:600:1::1"));
  const std::string b = family().pick(std::string("198.18.0.101"), std::string("2001:db8:600:2::1"));
  sb().add_sender_address(a);
  sb().add_sender_address(b);
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kSynAuthPolicy)});
  levee::Fd lfd = socket_in(sb().rx_ns(), family().af, SOCK_STREAM, 0);
  socklen_t len = 0;
  const sockaddr_storage ss = sockaddr_of(family().rx(), kPort, len);
  ASSERT_EQ(bind(lfd.get(), reinterpret_cast<const sockaddr*>(&ss), len), 0);
  ASSERT_EQ(listen(lfd.get(), 0), 0);  // one connection fills its accept queue
  const Connected first = connect_from(sb().tx_ns(), family(), 3, a);
  ASSERT_TRUE(first.fd.valid()) << stat_reasons_text(sb().stats(), "dropped") << sb().stats()["syn_handoffs"].dump();
  usleep(100'000);
  const auto s0 = sb().stats();
  const int64_t over0 = listener_overflows(sb().rx_ns());
  const Connected second = connect_from(sb().tx_ns(), family(), 3, b);
  ASSERT_TRUE(second.fd.valid()) << "the client's connect() returns: it had levee's SYN-ACK";
  usleep(200'000);
  const auto s1 = sb().stats();
  EXPECT_EQ(s1["syn_handoffs"]["handed"].get<int64_t>() - s0["syn_handoffs"]["handed"].get<int64_t>(), 1)
      << s1["syn_handoffs"].dump();
  EXPECT_EQ(s1["syn_handoffs"]["refused"], s0["syn_handoffs"]["refused"]) << "a full queue counted refused";
  EXPECT_GT(listener_overflows(sb().rx_ns()) - over0, 0) << "the listener did not drop the ACK";
  ASSERT_EQ(send(second.fd.get(), "ping", 4, 0), 4);
  usleep(1'000'000);
  EXPECT_GT(info_of(second.fd.get()).tcpi_total_retrans, 0u) << "the client's data was taken at once";
  const levee::Fd x = accept_one(lfd.get());
  EXPECT_TRUE(x.valid()) << "the first connection";
  const levee::Fd y = accept_one(lfd.get());  // within 3 s: the client's next retransmission
  ASSERT_TRUE(y.valid()) << "the second connection was never accepted: " << sb().stats()["syn_handoffs"].dump();
  char buf[8] = {};
  EXPECT_EQ(recv(y.get(), buf, sizeof buf, 0), 4) << "its data";
  EXPECT_EQ(info_of(second.fd.get()).tcpi_state, TCP_ESTABLISHED) << "the client was reset";
  const auto s2 = sb().stats();
  report(
      std::string("full_queue_handed_") + family().name,
      static_cast<double>(s2["syn_handoffs"]["handed"].get<int64_t>() - s0["syn_handoffs"]["handed"].get<int64_t>()));
}

using SynAuthTc = E2e;

// Another tool's filters on the ingress hook: levee never replaces one, nor removes one.
// A cls_bpf filter of all protocols at priority 1, handle 0x1ee (levee's first choice):
// levee's goes to handle 0x1ef at priority 1. A u32 filter at priority 1 (a priority holds
// one kind): levee's goes to priority 2. Detach removes levee's only, and leaves the
// clsact qdisc it did not create. (Before, attach replaced the foreign filter at 0x1ee
// silently, and detach deleted what was at that handle.)
TEST_F(SynAuthTc, AForeignFilterIsNeverReplacedNorRemoved) {
  const std::string& ns = sb().rx_ns();
  const std::string& ifn = sb().rx_if();
  TempDir dir;
  const std::string config = dir.write("levee.toml", kSynAuthPolicy);
  must({"tc", "-n", ns, "qdisc", "add", "dev", ifn, "clsact"});
  must({"tc", "-n", ns, "filter", "add", "dev", ifn, "ingress", "pref", "1", "handle", "0x1ee", "protocol", "all",
        "bpf", "bytecode", "1,6 0 0 0,"});
  attach({"--config", config});
  nlohmann::json foreign = tc_filter_at(ns, ifn, 1, "0x1ee");
  ASSERT_FALSE(foreign.is_null()) << "the foreign filter is gone";
  EXPECT_FALSE(is_levees(foreign)) << "levee's program replaced the foreign filter: " << foreign.dump();
  EXPECT_TRUE(is_levees(tc_filter_at(ns, ifn, 1, "0x1ef"))) << nlohmann::json(tc_filters(ns, ifn)).dump();
  const nlohmann::json tc = sb().status()["syn_auth"]["tc_filter"];
  EXPECT_EQ(tc, (nlohmann::json{{"handle", 0x1ef}, {"priority", 1}, {"present", true}, {"own_hook", false}}));
  detach();
  foreign = tc_filter_at(ns, ifn, 1, "0x1ee");
  EXPECT_FALSE(foreign.is_null()) << "detach removed the foreign filter";
  EXPECT_FALSE(is_levees(foreign));
  EXPECT_TRUE(tc_filter_at(ns, ifn, 1, "0x1ef").is_null()) << "levee's filter stayed";
  EXPECT_TRUE(has_clsact(ns, ifn)) << "detach removed a clsact qdisc levee did not create";

  must({"tc", "-n", ns, "filter", "del", "dev", ifn, "ingress", "pref", "1"});
  must({"tc", "-n", ns, "filter", "add", "dev", ifn, "ingress", "pref", "1", "protocol", "all", "u32", "match", "u32",
        "0", "0"});
  attach({"--config", config});
  EXPECT_TRUE(is_levees(tc_filter_at(ns, ifn, 2, "0x1ee"))) << nlohmann::json(tc_filters(ns, ifn)).dump();
  EXPECT_EQ(sb().status()["syn_auth"]["mode"], "proxy");
  detach();
  const std::vector<nlohmann::json> left = tc_filters(ns, ifn);
  ASSERT_FALSE(left.empty()) << "detach removed the u32 filter";
  for (const nlohmann::json& f : left) EXPECT_EQ(f["kind"], "u32") << nlohmann::json(left).dump();
  EXPECT_TRUE(has_clsact(ns, ifn));
}

// levee removes the clsact qdisc at detach only if it created it and nothing else is on
// it. (Before, detach left the qdisc levee created behind.)
TEST_F(SynAuthTc, DetachRemovesTheClsactHookItCreatedAndNoOther) {
  const std::string& ns = sb().rx_ns();
  const std::string& ifn = sb().rx_if();
  TempDir dir;
  const std::string config = dir.write("levee.toml", kSynAuthPolicy);
  ASSERT_FALSE(has_clsact(ns, ifn));
  attach({"--config", config});
  EXPECT_TRUE(has_clsact(ns, ifn));
  EXPECT_EQ(sb().status()["syn_auth"]["tc_filter"]["own_hook"], true);
  detach();
  EXPECT_FALSE(has_clsact(ns, ifn)) << "levee's clsact qdisc outlived its detach";

  // Created by levee, but another tool's filter went on it meanwhile: it stays.
  attach({"--config", config});
  must({"tc", "-n", ns, "filter", "add", "dev", ifn, "egress", "pref", "5", "protocol", "all", "u32", "match", "u32",
        "0", "0"});
  detach();
  EXPECT_TRUE(has_clsact(ns, ifn)) << "detach removed a clsact qdisc with another tool's filter on it";
  must({"tc", "-n", ns, "qdisc", "del", "dev", ifn, "clsact"});

  // The operator's (empty) qdisc: it stays.
  must({"tc", "-n", ns, "qdisc", "add", "dev", ifn, "clsact"});
  attach({"--config", config});
  EXPECT_EQ(sb().status()["syn_auth"]["tc_filter"]["own_hook"], false);
  detach();
  EXPECT_TRUE(has_clsact(ns, ifn)) << "detach removed the operator's clsact qdisc";
  EXPECT_TRUE(tc_filters(ns, ifn).empty());
}

// The SYN cookie keys of the attachment, [slot][word], read from its pinned lv_policy.
std::vector<uint64_t> cookie_keys(const std::string& pin_dir) {
  const std::vector<uint8_t> v = pinned_control(pin_dir);
  const auto* ctl = reinterpret_cast<const lv_control*>(v.data());
  return {ctl->cookie_key[0][0], ctl->cookie_key[0][1], ctl->cookie_key[1][0], ctl->cookie_key[1][1]};
}

using SynAuthKeys = E2e;

// A detach and an attach within a cookie's life keep the SYN cookie keys, so that clients
// in the middle of a handshake complete it: the detach leaves them in a root-only file,
// the attach takes them and removes it. Keys older than a cookie's life (17.2 s) are not
// taken (new ones are drawn), and the file goes too. A policy whose classes all have
// syn_auth = "off" leaves no file. (Before, every attach drew new keys.)
TEST_F(SynAuthKeys, KeptAcrossADetachAndAttachWithinACookiesLife) {
  TempDir dir;
  const std::string config = dir.write("levee.toml", kSynAuthPolicy);
  const std::string file = "/run/levee/" + sb().rx_if() + ".cookies";
  attach({"--config", config});
  const std::vector<uint64_t> keys = cookie_keys(sb().pin_dir());
  detach();
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0) << file << " not written by the detach";
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 0u);
  attach({"--config", config});
  EXPECT_EQ(cookie_keys(sb().pin_dir()), keys) << "new keys after a detach and attach within a second";
  EXPECT_NE(stat(file.c_str(), &st), 0) << file << " left after the attach took it";
  detach();

  // The same file, 18 s older: its keys made no cookie that is still good.
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  in.close();
  std::string aged = text.str();
  const size_t at = aged.find("saved_ns=");
  ASSERT_NE(at, std::string::npos) << aged;
  const size_t end = aged.find('\n', at);
  const uint64_t saved = std::stoull(aged.substr(at + 9, end - at - 9));
  aged.replace(at + 9, end - at - 9, std::to_string(saved - 18'000'000'000ULL));
  std::ofstream(file) << aged;
  attach({"--config", config});
  EXPECT_NE(cookie_keys(sb().pin_dir()), keys) << "keys older than a cookie's life were taken";
  EXPECT_NE(stat(file.c_str(), &st), 0) << "a stale file stayed";
  detach();

  std::remove(file.c_str());
  attach({"--rate", "500", "--burst", "100"});
  detach();
  EXPECT_EQ(stat(file.c_str(), &st), 0) << "syn_auth = \"auto\" (the default) may answer: its keys are kept";
  std::remove(file.c_str());
  attach({"--config", dir.write("off.toml", "[default]\nrate = 500\nburst = 100\nsyn_auth = \"off\"\n")});
  detach();
  EXPECT_NE(stat(file.c_str(), &st), 0) << "keys kept for a policy without syn_auth";
}

}  // namespace
}  // namespace lvt
