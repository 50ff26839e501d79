// network_limit_test.cpp - a network's limit end to end: the sources of one /24 (IPv6
// /48), each under its own limit, are held together to the network's.
#include <arpa/inet.h>
#include <unistd.h>

#include <cstring>

#include "e2e.hpp"
#include "flood_harness.hpp"

namespace lvt {
namespace {

using NetworkLimit = E2eFamily;

constexpr const char* kNetworkConfig = R"(# each /24 (/48) as a whole is limited
[default]
rate = 200
burst = 50
prefix6 = 128
network = { prefix4 = 24, prefix6 = 48, rate = 2000, burst = 200 }
)";

// 200 sources of one network at 50 pps each (a quarter of their own limit), 10,000 pps
// together: the network passes burst + rate * t together (+-5%); a source in another
// network at 150 pps loses nothing.
TEST_P(NetworkLimit, Holds200SourcesOfOneNetworkTogether) {
  const Family& fam = family();
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kNetworkConfig)});
  const std::string tag = fam.pick("net24", "net48");
  const std::string base = fam.pick("198.18.5.1", "2001:db8:5::1");
  const std::string other = fam.src()[0], dst = fam.rx();
  const double net_rate = 2000, net_burst = 200;
  UdpReceiver rx(sb().rx_ns(), fam.af);
  usleep(50'000);
  const auto s0 = sb().stats();
  Sender calm({.ns = sb().tx_ns(), .src = other, .dst = dst, .pps = 150, .seconds = 4.5}, start_soon(50));
  usleep(300'000);
  Flood flood({.ns = sb().tx_ns(),
               .dev = sb().tx_if(),
               .dst = dst,
               .sources = 200,
               .src_base = base,
               .dport = kPort,
               .rate = 10000,
               .seconds = 3.5});
  const FloodResult f = flood.wait();
  const SendLog& c = calm.join();
  rx.finish();
  const auto s1 = sb().stats();
  ASSERT_TRUE(f.ok) << f.describe();

  uint64_t got = 0, sources_through = 0;
  char a[INET6_ADDRSTRLEN];
  for (uint32_t i = 0; i < 200; ++i) {
    if (fam.v6()) {
      in6_addr x{};
      inet_pton(AF_INET6, base.c_str(), &x);
      uint32_t last;
      std::memcpy(&last, &x.s6_addr[12], 4);
      last = htonl(ntohl(last) + i);
      std::memcpy(&x.s6_addr[12], &last, 4);
      inet_ntop(AF_INET6, &x, a, sizeof a);
    } else {
      in_addr x{};
      inet_pton(AF_INET, base.c_str(), &x);
      x.s_addr = htonl(ntohl(x.s_addr) + i);
      inet_ntop(AF_INET, &x, a, sizeof a);
    }
    const uint64_t n = rx.count(a);
    got += n;
    if (n) ++sources_through;
  }
  const double expected = std::min(d(f.packets), net_burst + net_rate * f.seconds);
  const int64_t net_drops = stat_reason_delta(s0, s1, "dropped", "network");
  const int64_t rate_drops = stat_reason_delta(s0, s1, "dropped", "rate");
  report(tag + "_sent", d(f.packets));
  report(tag + "_span_s", f.seconds);
  report(tag + "_expected", expected);
  report(tag + "_delivered", d(got));
  report(tag + "_sources_through", d(sources_through));
  report(tag + "_other_sent", d(c.sent));
  report(tag + "_other_delivered", d(rx.count(other)));
  report(tag + "_stats_dropped_network", d(net_drops));
  report(tag + "_stats_dropped_rate", d(rate_drops));

  ASSERT_GT(d(f.packets), 3 * expected) << "the network's sources did not exceed its limit: " << f.describe();
  EXPECT_NEAR(d(got), expected, kTol * expected)
      << "200 sources of one " << fam.pick("/24", "/48") << " at 50 pps each passed " << got
      << " together; expected the network limit " << num(net_burst) << " + " << num(net_rate) << "/s x "
      << num(f.seconds) << " s = " << num(expected) << " (+-5%); " << f.describe();
  EXPECT_EQ(rx.count(other), c.sent) << "a source in another network at 150 pps (under its 200 pps) sent " << c.sent
                                     << ", received " << rx.count(other);
  EXPECT_GE(net_drops, 0) << "levee stats --json has no dropped.network: " << stat_reasons_text(s1, "dropped");
  if (net_drops >= 0) {
    EXPECT_NEAR(d(net_drops), d(f.packets) - d(got), 0.01 * d(f.packets) + 5)
        << "the network's drops should be counted as network";
  }
  EXPECT_LE(rate_drops, 0) << "sources under their own limit were dropped for rate";
}

INSTANTIATE_TEST_SUITE_P(, NetworkLimit, kBothFamilies, family_name);

}  // namespace
}  // namespace lvt
