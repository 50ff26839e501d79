// classes_test.cpp - traffic classes end to end: each class holds its own limit per
// source (a UDP flood does not spend the SYN budget), and a class's source prefix makes
// one source of a network or of a host, over IPv4 and IPv6; an IPv6 packet behind more
// extension headers than levee walks is dropped as such, on the wire.
//
// Every expectation comes from what the senders actually did (their measured send
// times): a source flooding above its limit passes burst + rate * (t_last - t_first),
// within the acceptance tolerance of ±5%. Counts are taken independently of levee (a
// UDP socket per port, an AF_PACKET tap for TCP SYNs) and then compared with
// `levee stats --json` "classes" and `levee show --json`.
#include <unistd.h>

#include "e2e.hpp"

namespace lvt {
namespace {

using Classes = E2eFamily;

// One source floods UDP at 10x its class limit and, at the same time, sends TCP SYNs
// at 10x the SYN class's limit. Per-source state is per (source, class): each class
// holds its own limit, the UDP flood spends nothing of the SYN budget.
TEST_F(Classes, UdpFloodDoesNotSpendTheSynBudget) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kUdpAndSynPolicy)});
  const std::string src = Addrs::src4()[0];
  UdpReceiver rx(sb().rx_ns(), AF_INET);
  FrameTap tap(sb().rx_ns(), sb().rx_if(), FrameTap::In);  // what the filter let in
  usleep(50'000);
  const auto s0 = sb().stats();

  const uint64_t t0 = start_soon();
  Sender udp({.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .pps = 2000, .seconds = 3}, t0);
  Sender syn(syn_flow(sb(), src, 80, 1000, 3), t0);
  const SendLog& lu = udp.join();
  const SendLog& ls = syn.join();
  rx.finish();
  tap.finish(100, 1000);
  const auto s1 = sb().stats();

  auto is_our_syn = [&](const TapFrame& f) { return f.src == src && f.tcp_syn() && f.dport == 80; };
  const double udp_expected = gcra_expected(200, 50, lu), syn_expected = gcra_expected(100, 20, ls);
  const double udp_got = d(rx.count(src)), syn_got = d(tap.count(is_our_syn));
  const ClassCounts cu = class_delta(s0, s1, "udp"), cs = class_delta(s0, s1, "syn");
  report("udp_sent", d(lu.sent));
  report("udp_span_s", lu.span());
  report("udp_expected", udp_expected);
  report("udp_delivered", udp_got);
  report("syn_sent", d(ls.sent));
  report("syn_span_s", ls.span());
  report("syn_expected", syn_expected);
  report("syn_delivered", syn_got);
  report("stats_udp_passed", cu.passed);
  report("stats_udp_dropped", cu.dropped);
  report("stats_syn_passed", cs.passed);
  report("stats_syn_dropped", cs.dropped);

  ASSERT_GT(d(lu.sent), 5 * udp_expected) << "the UDP sender did not flood";
  ASSERT_GT(d(ls.sent), 5 * syn_expected) << "the SYN sender did not flood";
  EXPECT_EQ(lu.errors + ls.errors, 0u);
  EXPECT_NEAR(udp_got, udp_expected, kTol * udp_expected) << rx.summary();
  EXPECT_NEAR(syn_got, syn_expected, kTol * syn_expected) << "the UDP flood spent the SYN budget?";
  // levee's per-class counters agree with the independent counts, packet for packet.
  EXPECT_EQ(cu.passed, udp_got);
  EXPECT_EQ(cu.passed + cu.dropped, d(lu.sent));
  EXPECT_EQ(cs.passed, syn_got);
  EXPECT_EQ(cs.passed + cs.dropped, d(ls.sent));
  EXPECT_EQ(cu.passed_bytes, cu.passed * 74) << "14 + 20 + 8 + 32 bytes a datagram";
  EXPECT_EQ(cs.passed_bytes, cs.passed * 60) << "a SYN padded to 60 bytes";

  // levee show: the source has state in both classes, each with its own limits.
  auto j = sb().show(src);
  auto ju_ = show_class(j, "udp"), js = show_class(j, "syn");
  ASSERT_FALSE(ju_.is_null()) << j.dump();
  ASSERT_FALSE(js.is_null()) << j.dump();
  EXPECT_EQ(ju_.at("rate"), 200);
  EXPECT_EQ(js.at("rate"), 100);
  EXPECT_EQ(d(ju_.at("passed_packets").get<uint64_t>()), udp_got);
  EXPECT_EQ(d(js.at("passed_packets").get<uint64_t>()), syn_got);
  EXPECT_NE(ju_.at("id"), js.at("id"));
}

constexpr const char* kPrefixes = R"(# the same limits, per /24 (IPv6 /64) and per host
[[class]]
name = "net"
match.proto = "udp"
match.port = 5001
rate = 200
burst = 50
prefix4 = 24
prefix6 = 64

[[class]]
name = "host"
match.proto = "udp"
match.port = 5002
rate = 200
burst = 50
prefix4 = 32
prefix6 = 128

[default]
rate = "10k"
burst = "1k"
)";

// A class counting per /24 (IPv6 /64), "net": two addresses of one network share one
// bucket (together burst + rate * t), an address of another network has its own. A class
// counting per address (/32, /128), "host": the same two addresses, to another port, each
// have their own.
TEST_P(Classes, NetworkPrefixSharesOneBucketHostPrefixDoesNot) {
  const Family& fam = family();
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kPrefixes)});
  // IPv4: src4()[0] and [1] in 198.18.0.0/24, another /24 added. IPv6: src6()[0] and [4]
  // in 2001:db8:1::/64, [1] in 2001:db8:2::/64.
  const std::string a = fam.src()[0], b = fam.src()[fam.pick(1, 4)];
  const std::string other = fam.pick<std::string>("198.18.1.11", fam.src()[1]);
  if (!fam.v6()) sb().add_sender_address(other);
  const std::string net_tag = fam.pick("slash24", "slash64"), host_tag = fam.pick("slash32", "slash128");
  UdpReceiver net(sb().rx_ns(), fam.af, kPort), host(sb().rx_ns(), fam.af, kPort2);
  const uint64_t t0 = start_soon();
  auto flow = [&](const std::string& src, uint16_t port) {
    return Flow{.ns = sb().tx_ns(), .src = src, .dst = fam.rx(), .port = port, .pps = 1000, .seconds = 2.5};
  };
  Sender na(flow(a, kPort), t0), nb(flow(b, kPort), t0), no(flow(other, kPort), t0);
  Sender ha(flow(a, kPort2), t0), hb(flow(b, kPort2), t0);
  const SendLog &lna = na.join(), &lnb = nb.join(), &lno = no.join(), &lha = ha.join(), &lhb = hb.join();
  net.finish();
  host.finish(50, 1000);

  const double shared_expected = gcra_expected(200, 50, merged({&lna, &lnb}));
  const double shared_got = d(net.count(a) + net.count(b));
  const double other_expected = gcra_expected(200, 50, lno), other_got = d(net.count(other));
  const double ha_expected = gcra_expected(200, 50, lha), hb_expected = gcra_expected(200, 50, lhb);
  report(net_tag + "_two_hosts_expected", shared_expected);
  report(net_tag + "_two_hosts_delivered", shared_got);
  report(net_tag + "_other_net_expected", other_expected);
  report(net_tag + "_other_net_delivered", other_got);
  report(host_tag + "_host_a_expected", ha_expected);
  report(host_tag + "_host_a_delivered", d(host.count(a)));
  report(host_tag + "_host_b_expected", hb_expected);
  report(host_tag + "_host_b_delivered", d(host.count(b)));

  EXPECT_NEAR(shared_got, shared_expected, kTol * shared_expected) << net.summary();
  EXPECT_GT(net.count(a), 0u) << net.summary();
  EXPECT_GT(net.count(b), 0u) << net.summary();
  EXPECT_NEAR(other_got, other_expected, kTol * other_expected) << net.summary();
  EXPECT_NEAR(d(host.count(a)), ha_expected, kTol * ha_expected) << host.summary();
  EXPECT_NEAR(d(host.count(b)), hb_expected, kTol * hb_expected) << host.summary();

  // levee show: one state for the network, keyed by it, whichever host asks.
  const std::string network = fam.pick("198.18.0.0/24", "2001:db8:1::/64");
  auto ja = sb().show(a), jb = sb().show(b);
  auto na_ = show_class(ja, "net"), nb_ = show_class(jb, "net"), ha_ = show_class(ja, "host");
  ASSERT_FALSE(na_.is_null() || nb_.is_null() || ha_.is_null()) << ja.dump() << "\n" << jb.dump();
  EXPECT_EQ(na_.at("source"), network);
  EXPECT_EQ(nb_.at("source"), network);
  EXPECT_EQ(ha_.at("source"), a + fam.pick("/32", "/128"));
  EXPECT_EQ(d(na_.at("passed_packets").get<uint64_t>()), shared_got);
  EXPECT_EQ(nb_.at("passed_packets"), na_.at("passed_packets"));
  EXPECT_EQ(d(ha_.at("passed_packets").get<uint64_t>()), d(host.count(a)));
}

INSTANTIATE_TEST_SUITE_P(, Classes, kBothFamilies, family_name);

using Ipv6Headers = E2e;

// Real frames through the veth: UDP behind 8 IPv6 destination options headers reaches its
// class; behind 9, more than levee walks (LV_MAX_EXT_HDRS), its class cannot be known and
// it is dropped as ext_depth, never passed unclassified to pick the loosest limit.
TEST_F(Ipv6Headers, NineExtensionHeadersAreDroppedAsExtDepthEightReachTheirClass) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kUdpClassPolicy)});
  const std::string src = Addrs::src6()[0];
  const auto s0 = sb().stats();
  // 40 frames over 0.4 s behind `exts` headers.
  const auto frames = [&](int exts) {
    return Flow{.ns = sb().tx_ns(),
                .src = src,
                .dst = Addrs::rx6,
                .pps = 100,
                .seconds = 0.4,
                .frame = ipv6_ext_udp_frame(src, Addrs::rx6, kPort, exts),
                .dev = sb().tx_if()};
  };
  const uint64_t t0 = start_soon(50);
  Sender eight(frames(8), t0), nine(frames(9), t0);
  const SendLog& l8 = eight.join();
  const SendLog& l9 = nine.join();
  usleep(100'000);
  const auto s1 = sb().stats();
  ASSERT_GT(l8.sent, 30u);
  ASSERT_GT(l9.sent, 30u);
  EXPECT_EQ(stat_reason_delta(s0, s1, "dropped", "ext_depth"), static_cast<int64_t>(l9.sent))
      << stat_reasons_text(s1, "dropped");
  // Within the class's burst of 50: every one of the eight-header frames passes in it.
  EXPECT_EQ(class_delta(s0, s1, "udp").passed, static_cast<double>(l8.sent));
  EXPECT_EQ(class_delta(s0, s1, "udp").dropped, 0);
}

}  // namespace
}  // namespace lvt
