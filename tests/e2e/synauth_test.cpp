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
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e.hpp"
#include "flood_harness.hpp"
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

// SYN authentication against the flood it is for: 200 new clients, each from an address
// levee has never seen, connect at 20/s while levee-flood sends 300k SYNs/s from random
// spoofed sources to the same port (the flood that let 28 of 200 through a per-source
// limit, and 16 through a new-source budget). Every client is answered within 3 s, in
// proxy mode on its first SYN (no SYN sent twice: its latency is a round trip, reported
// beside that of 20 clients before the flood), and the listener sees nothing of the
// flood.
TEST_P(SynAuth, NewClientsConnectThroughASpoofedSynFlood) {
  constexpr int kClients = 200;
  constexpr double kClientGap = 0.05;  // 20 a second
  std::vector<std::string> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(
        family().pick("198.18.0." + std::to_string(30 + i), "2001:db8:100:" + std::to_string(i + 1) + "::1"));
    sb().add_sender_address(clients.back());
  }
  constexpr int kCalm = 20;
  for (int i = 0; i < kCalm; ++i) {
    clients.push_back(
        family().pick("198.18.1." + std::to_string(30 + i), "2001:db8:200:" + std::to_string(i + 1) + "::1"));
    sb().add_sender_address(clients.back());
  }
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kSynAuthPolicy)});
  const levee::Fd lfd = listener(sb().rx_ns(), family());
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
  // A new client's connect from `clients[i]`: its latency (-1: failed) and whether its
  // stack sent anything twice.
  std::vector<double> latency(kClients + kCalm, -1);
  std::vector<uint32_t> retrans(kClients + kCalm, 0);
  auto connect_client = [&](int i) {
    in_netns(sb().tx_ns(), [&] {
      levee::Fd fd(socket(family().af, SOCK_STREAM | SOCK_CLOEXEC, 0));
      socklen_t blen = 0, len = 0;
      const sockaddr_storage from = sockaddr_of(clients[i], 0, blen), to = sockaddr_of(family().rx(), kPort, len);
      const timeval tv{3, 0};
      setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&from), blen) != 0) return;
      const uint64_t t = now_ns();
      if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), len) != 0) return;
      latency[i] = secs(now_ns() - t);
      retrans[i] = info_of(fd.get()).tcpi_total_retrans;
    });
  };
  auto p99_of = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? -1 : v[(v.size() * 99) / 100 - (v.size() >= 100 ? 1 : 0)];
  };
  std::vector<double> calm;
  for (int i = kClients; i < kClients + kCalm; ++i) {
    connect_client(i);
    if (latency[i] >= 0) calm.push_back(latency[i]);
  }
  const int64_t over0 = listener_overflows(sb().rx_ns());
  const auto s0 = sb().stats();

  FloodSpec spec{.ns = sb().tx_ns(),
                 .dev = sb().tx_if(),
                 .dst = family().rx(),
                 .random = family().pick(kFlood4, kFlood6),
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
    threads.emplace_back([&, i] { connect_client(i); });
  }
  for (auto& t : threads) t.join();
  const FloodResult fr = flood.wait();
  usleep(200'000);
  serving = false;
  server.join();
  const auto s1 = sb().stats();
  const int64_t over1 = listener_overflows(sb().rx_ns());

  ASSERT_TRUE(fr.ok) << fr.run.describe();
  std::vector<double> ok;
  int first_syn = 0;
  for (int i = 0; i < kClients; ++i) {
    if (latency[i] >= 0 && latency[i] <= 3.0) ok.push_back(latency[i]);
    first_syn += latency[i] >= 0 && retrans[i] == 0;
  }
  std::sort(ok.begin(), ok.end());
  const double p50 = ok.empty() ? -1 : ok[ok.size() / 2], p99 = p99_of(ok);
  const int64_t challenged = stat_reason_delta(s0, s1, "dropped", "challenged");
  const int64_t limited = stat_reason_delta(s0, s1, "dropped", "answer_limit");
  report(std::string("clients_answered_within_3s_") + family().name, static_cast<double>(ok.size()));
  report(std::string("client_connect_p50_ms_") + family().name, 1e3 * p50);
  report(std::string("client_connect_p99_ms_") + family().name, 1e3 * p99);
  report(std::string("calm_connect_p99_ms_") + family().name, 1e3 * p99_of(calm));
  report(std::string("clients_on_first_syn_") + family().name, first_syn);
  report(std::string("flood_pps_") + family().name, fr.pps);
  report(std::string("challenged_") + family().name, static_cast<double>(challenged));
  report(std::string("answer_limit_") + family().name, static_cast<double>(limited));
  EXPECT_EQ(calm.size(), size_t{kCalm});
  EXPECT_GE(ok.size(), size_t{198}) << "of " << kClients << " new clients, answered within 3 s";
  EXPECT_GE(first_syn, 198) << "connected on their first SYN (proxy mode)";
  EXPECT_GE(accepted.load(), 198 + kCalm);
  EXPECT_EQ(over1 - over0, 0) << "the listener dropped or cookie-answered SYNs: the flood reached it";
  EXPECT_GE(challenged + limited, static_cast<int64_t>(fr.packets * 95 / 100)) << stat_reasons_text(s1, "dropped");
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

}  // namespace
}  // namespace lvt
