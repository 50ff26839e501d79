// lists_test.cpp - the allow, deny and override lists end to end: an allowed source
// loses nothing, a denied one gets nothing through, a deny entry stops at its expiry, an
// override's limits apply only in its classes, and `levee deny import` reads a blocklist
// file, says what it did with each line and denies what it added.
#include <regex>
#include <set>

#include "e2e.hpp"

namespace lvt {
namespace {

using Lists = E2e;

// Allowed from the file; deny is added on the command line.
const std::string kAllowConfig = kUdpClassPolicy + R"(
[lists]
allow = ["198.18.0.11", "2001:db8:3::/48"]
)";

// An allow-listed source at 10x the limit loses nothing; a denied one gets nothing
// through, counted as deny; a source on no list beside them is limited as usual.
TEST_F(Lists, AllowListedLosesNothingDeniedGetsNothing) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kAllowConfig)});
  RunResult r = sb().levee({"deny", "add", sb().rx_if(), "198.18.0.12", "2001:db8:2::/64"});
  ASSERT_EQ(r.code, 0) << r.describe();
  // src6()[2] = 2001:db8:3::13 (allowed /48), src6()[1] = 2001:db8:2::12 (denied /64).
  const std::string allowed = Addrs::src4()[0], denied = Addrs::src4()[1], plain = Addrs::src4()[2];
  const std::string allowed6 = Addrs::src6()[2], denied6 = Addrs::src6()[1];
  UdpReceiver rx(sb().rx_ns(), AF_INET), rx6(sb().rx_ns(), AF_INET6);
  usleep(50'000);
  const auto s0 = sb().stats();
  const uint64_t t0 = start_soon();
  auto flow = [&](const std::string& src, double pps) {
    return Flow{.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx_for(src), .pps = pps, .seconds = 2.5};
  };
  Sender sa(flow(allowed, 2000), t0), sd(flow(denied, 2000), t0), sp(flow(plain, 2000), t0);
  Sender sa6(flow(allowed6, 1000), t0), sd6(flow(denied6, 1000), t0);
  const SendLog &la = sa.join(), &ld = sd.join(), &lp = sp.join(), &la6 = sa6.join(), &ld6 = sd6.join();
  rx.finish();
  rx6.finish(50, 1000);
  const auto s1 = sb().stats();

  const double plain_expected = gcra_expected(200, 50, lp);
  report("allowed_sent", d(la.sent));
  report("allowed_delivered", d(rx.count(allowed)));
  report("allowed6_sent", d(la6.sent));
  report("allowed6_delivered", d(rx6.count(allowed6)));
  report("denied_sent", d(ld.sent));
  report("denied_delivered", d(rx.count(denied)));
  report("denied6_sent", d(ld6.sent));
  report("denied6_delivered", d(rx6.count(denied6)));
  report("unlisted_expected", plain_expected);
  report("unlisted_delivered", d(rx.count(plain)));
  report("stats_passed_allow", d(stat_reason_delta(s0, s1, "passed", "allow")));
  report("stats_dropped_deny", d(stat_reason_delta(s0, s1, "dropped", "deny")));

  ASSERT_GT(d(la.sent), 5 * gcra_expected(200, 50, la)) << "the allowed source did not flood";
  EXPECT_EQ(rx.count(allowed), la.sent) << rx.summary();
  EXPECT_EQ(rx6.count(allowed6), la6.sent) << rx6.summary();
  EXPECT_GT(ld.sent, 0u);
  EXPECT_EQ(rx.count(denied), 0u) << rx.summary();
  EXPECT_EQ(rx6.count(denied6), 0u) << rx6.summary();
  EXPECT_NEAR(d(rx.count(plain)), plain_expected, kTol * plain_expected) << rx.summary();
  // Counted as such: allowed ones under "allow", denied ones under "deny", and all of
  // them in their class.
  EXPECT_EQ(d(stat_reason_delta(s0, s1, "passed", "allow")), d(la.sent + la6.sent));
  EXPECT_EQ(d(stat_reason_delta(s0, s1, "dropped", "deny")), d(ld.sent + ld6.sent));
  EXPECT_EQ(d(stat_reason_delta(s0, s1, "dropped", "rate")), d(lp.sent - rx.count(plain)));
  const ClassCounts cu = class_delta(s0, s1, "udp");
  EXPECT_EQ(cu.passed, d(la.sent + la6.sent + rx.count(plain)));
  EXPECT_EQ(cu.dropped, d(ld.sent + ld6.sent + lp.sent - rx.count(plain)));

  // levee show names the deciding entry.
  auto ja = sb().show(allowed), jd = sb().show(denied), jd6 = sb().show(denied6);
  ASSERT_FALSE(ja.at("list").is_null()) << ja.dump();
  EXPECT_EQ(ja.at("list").at("kind"), "allow");
  EXPECT_EQ(ja.at("list").at("origin"), "config");
  ASSERT_FALSE(jd.at("list").is_null()) << jd.dump();
  EXPECT_EQ(jd.at("list").at("kind"), "deny");
  EXPECT_EQ(jd.at("list").at("origin"), "cli");
  EXPECT_EQ(jd.at("list").at("cidr"), "198.18.0.12/32");
  EXPECT_TRUE(jd.at("classes").empty()) << "a denied source got state: " << jd.dump();
  ASSERT_FALSE(jd6.at("list").is_null()) << jd6.dump();
  EXPECT_EQ(jd6.at("list").at("cidr"), "2001:db8:2::/64");
}

// A deny entry with an expiry drops everything until it expires, and nothing after:
// from then on the source is limited by its class (a fresh bucket: it had no state).
TEST_F(Lists, DenyEntryStopsMatchingAtItsExpiry) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kUdpClassPolicy)});
  const std::string src = Addrs::src4()[0];
  UdpReceiver rx(sb().rx_ns(), AF_INET);
  usleep(50'000);
  const auto s0 = sb().stats();
  const uint64_t add_start = now_ns();
  RunResult r = sb().levee({"deny", "add", sb().rx_if(), src, "--expires", "2s"});
  const uint64_t add_done = now_ns();
  ASSERT_EQ(r.code, 0) << r.describe();
  // The entry expires 2 s after the command read the clock; the datapath may see it
  // up to a tick (4 ms) late, and never early.
  const uint64_t expiry_min = add_start + 2'000'000'000ull, expiry_max = add_done + 2'000'000'000ull + 10'000'000ull;

  Sender s({.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .pps = 1000, .seconds = 4}, add_done + 20'000'000ull);
  // Midway through the denied phase, show says deny and when it expires.
  usleep(1'000'000);
  auto mid = sb().show(src);
  const SendLog& l = s.join();
  rx.finish();
  const auto s1 = sb().stats();
  auto after = sb().show(src);

  const auto got = rx.times(src);
  const SendLog denied_phase = l.window(0, expiry_min);
  // After the expiry, a fresh bucket from the first packet past it: the first pass lies
  // between expiry_min and expiry_max, which bounds the expectation both ways.
  const double after_hi = gcra_expected(200, 50, l.window(expiry_min, UINT64_MAX));
  const double after_lo = gcra_expected(200, 50, l.window(expiry_max, UINT64_MAX));
  const double deny_drops = d(stat_reason_delta(s0, s1, "dropped", "deny"));
  report("expiry_cli_ms", secs(add_done - add_start) * 1e3);
  report("sent_before_expiry", d(denied_phase.sent));
  report("sent_after_expiry", d(l.window(expiry_min, UINT64_MAX).sent));
  report("delivered_total", d(got.size()));
  report("delivered_before_expiry", d(count_between(got, 0, expiry_min)));
  report("expected_after_expiry_low", after_lo);
  report("expected_after_expiry_high", after_hi);
  report("stats_dropped_deny", deny_drops);
  if (!got.empty()) report("first_delivery_after_expiry_ms", (static_cast<double>(got.front()) - expiry_min) / 1e6);

  ASSERT_GT(denied_phase.sent, 1000u) << "the sender did not run through the denied phase";
  // Not before: nothing arrived before the expiry (receive time >= the filter's time).
  EXPECT_EQ(count_between(got, 0, expiry_min - 2'000'000ull), 0u) << "passed while denied";
  // After: it passes, limited by its class.
  EXPECT_GE(d(got.size()), after_lo * (1 - kTol)) << "still denied after the expiry?";
  EXPECT_LE(d(got.size()), after_hi * (1 + kTol)) << "not limited after the expiry";
  ASSERT_FALSE(got.empty());
  EXPECT_LT(got.front(), expiry_max + 20'000'000ull) << "the first packet after the expiry came late";
  // Every send before the expiry was dropped as deny, and the later drops as rate.
  EXPECT_GE(deny_drops, d(denied_phase.sent));
  EXPECT_LE(deny_drops, d(l.window(0, expiry_max).sent));
  EXPECT_EQ(deny_drops + d(stat_reason_delta(s0, s1, "dropped", "rate")) + d(got.size()), d(l.sent));

  ASSERT_FALSE(mid.at("list").is_null()) << mid.dump();
  EXPECT_EQ(mid.at("list").at("kind"), "deny");
  EXPECT_FALSE(mid.at("list").at("expired").get<bool>());
  EXPECT_LE(mid.at("list").at("expires_in").get<int64_t>(), 1);
  EXPECT_TRUE(after.at("list").is_null() || after.at("list").at("kind") != "deny") << after.dump();
  auto cls = show_class(after, "udp");
  ASSERT_FALSE(cls.is_null()) << after.dump();
  EXPECT_EQ(d(cls.at("passed_packets").get<uint64_t>()), d(got.size()));
}

// A partner network with limits of its own, for UDP only.
const std::string kOverrideConfig = kUdpAndSynPolicy + R"(
[[override]]
name = "partner"
networks = ["198.18.0.12"]
rate = 500
burst = 50
classes = ["udp"]
)";

// An override's limits replace the class's for its networks (from the file, and added
// with `levee override add`), measured as a rate, and only in the classes it names:
// the partner's SYNs are held to the SYN class's limit.
TEST_F(Lists, OverrideReplacesTheClassLimitOnlyInItsClasses) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kOverrideConfig)});
  const std::string stranger = Addrs::src4()[0], partner = Addrs::src4()[1], added = Addrs::src4()[2];
  RunResult r = sb().levee({"override", "add", sb().rx_if(), "partner", added});
  ASSERT_EQ(r.code, 0) << r.describe();
  UdpReceiver rx(sb().rx_ns(), AF_INET);
  FrameTap tap(sb().rx_ns(), sb().rx_if(), FrameTap::In);
  usleep(50'000);
  const auto s0 = sb().stats();
  const uint64_t t0 = start_soon();
  auto flow = [&](const std::string& src) {
    return Flow{.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .pps = 1500, .seconds = 3};
  };
  Sender ss(flow(stranger), t0), sp(flow(partner), t0), sa(flow(added), t0);
  Sender syn(syn_flow(sb(), partner, 443, 1000, 3), t0);
  const SendLog &ls = ss.join(), &lp = sp.join(), &la = sa.join(), &lsyn = syn.join();
  rx.finish();
  tap.finish(100, 1000);
  const auto s1 = sb().stats();

  // The rate from 0.5 s on (the burst long spent) to the last send.
  auto measured_rate = [&](const std::string& src, const SendLog& l) {
    const uint64_t from = l.t_first + 500'000'000ull, to = l.t_last;
    return d(count_between(rx.times(src), from, to)) / secs(to - from);
  };
  const double partner_rate = measured_rate(partner, lp), added_rate = measured_rate(added, la);
  const double stranger_rate = measured_rate(stranger, ls);
  const double partner_expected = gcra_expected(500, 50, lp), added_expected = gcra_expected(500, 50, la);
  const double stranger_expected = gcra_expected(200, 50, ls), syn_expected = gcra_expected(100, 20, lsyn);
  const double syn_got = d(tap.count([&](const TapFrame& f) { return f.src == partner && f.tcp_syn(); }));
  report("partner_udp_rate_pps", partner_rate);
  report("partner_udp_expected", partner_expected);
  report("partner_udp_delivered", d(rx.count(partner)));
  report("cli_partner_udp_rate_pps", added_rate);
  report("cli_partner_udp_expected", added_expected);
  report("cli_partner_udp_delivered", d(rx.count(added)));
  report("stranger_udp_rate_pps", stranger_rate);
  report("stranger_udp_expected", stranger_expected);
  report("stranger_udp_delivered", d(rx.count(stranger)));
  report("partner_syn_expected", syn_expected);
  report("partner_syn_delivered", syn_got);

  EXPECT_NEAR(partner_rate, 500, kTol * 500);
  EXPECT_NEAR(added_rate, 500, kTol * 500);
  EXPECT_NEAR(stranger_rate, 200, kTol * 200);
  EXPECT_NEAR(d(rx.count(partner)), partner_expected, kTol * partner_expected) << rx.summary();
  EXPECT_NEAR(d(rx.count(added)), added_expected, kTol * added_expected) << rx.summary();
  EXPECT_NEAR(d(rx.count(stranger)), stranger_expected, kTol * stranger_expected) << rx.summary();
  EXPECT_NEAR(syn_got, syn_expected, kTol * syn_expected) << "the override applied to a class it does not name?";
  EXPECT_EQ(class_delta(s0, s1, "syn").passed, syn_got);

  auto jp = sb().show(partner);
  ASSERT_FALSE(jp.at("list").is_null()) << jp.dump();
  EXPECT_EQ(jp.at("list").at("kind"), "override");
  EXPECT_EQ(jp.at("list").at("override"), "partner");
  auto pu = show_class(jp, "udp"), ps = show_class(jp, "syn");
  ASSERT_FALSE(pu.is_null() || ps.is_null()) << jp.dump();
  EXPECT_EQ(pu.at("override"), "partner");
  EXPECT_EQ(pu.at("rate"), 500);
  EXPECT_TRUE(ps.at("override").is_null()) << jp.dump();
  EXPECT_EQ(ps.at("rate"), 100);
  auto ja = sb().show(added);
  ASSERT_FALSE(ja.at("list").is_null()) << ja.dump();
  EXPECT_EQ(ja.at("list").at("origin"), "cli");
}

// `levee deny import` of an ipset/netset-style file: comments, blank lines, a byte
// order mark, CRLF, a repeated entry, one on the allow list, bad lines. The report
// counts them and names the rejected lines; the imported networks are denied by
// traffic, the allowed one still passes in full.
TEST_F(Lists, DenyImportReportsAndDenies) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kUdpClassPolicy + "\n[lists]\nallow = [\"198.18.0.14\"]\n")});
  const std::string file = dir.write("drop.netset",
                                     "\xEF\xBB\xBF# FireHOL-style blocklist\n"  // 1
                                     "; another comment\n"                      // 2
                                     "\n"                                       // 3
                                     "198.18.0.12\n"                            // 4 added
                                     "198.18.0.13/32   # trailing comment\n"    // 5 added
                                     "2001:db8:2::/64 ; trailing\r\n"           // 6 added
                                     "198.18.0.12\n"                            // 7 repeated
                                     "198.18.0.300\n"                           // 8 rejected
                                     "198.18.0.16/24\n"                         // 9 rejected: host bits
                                     "not a cidr\n"                             // 10 rejected
                                     "0.0.0.0/0\n"                              // 11 rejected: everything
                                     "198.18.0.14\n"                            // 12 skipped: allowed
                                     "   198.18.4.0/24\r\n"                     // 13 added
                                     "\n");
  RunResult r = sb().levee({"deny", "import", sb().rx_if(), file});
  ASSERT_EQ(r.code, 0) << r.describe();
  const std::string& out = r.out;
  EXPECT_NE(out.find(file), std::string::npos) << r.describe();
  EXPECT_NE(out.find("4 added"), std::string::npos) << r.describe();
  EXPECT_NE(out.find("0 renewed"), std::string::npos) << r.describe();
  EXPECT_NE(out.find("2 skipped (1 repeated in the file, 1 on the allow or override list)"), std::string::npos)
      << r.describe();
  EXPECT_NE(out.find("4 rejected"), std::string::npos) << r.describe();
  std::vector<int> rejected_lines;
  std::smatch m;
  for (auto it = out.cbegin(); std::regex_search(it, out.cend(), m, std::regex(R"(\n  line ([0-9]+): )"));
       it = m.suffix().first)
    rejected_lines.push_back(std::stoi(m[1]));
  EXPECT_EQ(rejected_lines, (std::vector<int>{8, 9, 10, 11})) << r.describe();
  EXPECT_NE(out.find("did you mean 198.18.0.0/24?"), std::string::npos) << r.describe();

  RunResult list = sb().levee({"deny", "list", sb().rx_if(), "--json"});
  ASSERT_EQ(list.code, 0) << list.describe();
  std::set<std::string> imported;
  const auto entries = nlohmann::json::parse(list.out);
  for (const auto& e : entries.at("entries")) {
    EXPECT_EQ(e.at("origin"), "import") << e.dump();
    imported.insert(e.at("cidr").get<std::string>());
  }
  EXPECT_EQ(imported, (std::set<std::string>{"198.18.0.12/32", "198.18.0.13/32", "2001:db8:2::/64", "198.18.4.0/24"}));

  // Again: nothing new to add.
  RunResult again = sb().levee({"deny", "import", sb().rx_if(), file});
  EXPECT_EQ(again.code, 0) << again.describe();
  EXPECT_NE(again.out.find("0 added"), std::string::npos) << again.describe();
  // A file without one valid entry adds nothing and exits 1.
  RunResult none = sb().levee({"deny", "import", sb().rx_if(), dir.write("none.netset", "# nothing\nfoo\n")});
  EXPECT_EQ(none.code, 1) << none.describe();
  EXPECT_EQ(sb().status().at("lists").at("deny"), 4) << sb().status().dump();

  // By traffic: the imported sources get nothing through; the allowed one everything.
  const std::string d12 = Addrs::src4()[1], d13 = Addrs::src4()[2], allowed = Addrs::src4()[3];
  const std::string d6 = Addrs::src6()[1];  // 2001:db8:2::12
  UdpReceiver rx(sb().rx_ns(), AF_INET), rx6(sb().rx_ns(), AF_INET6);
  usleep(50'000);
  const auto s0 = sb().stats();
  const uint64_t t0 = start_soon();
  auto flow = [&](const std::string& src) {
    return Flow{.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx_for(src), .pps = 1000, .seconds = 1.5};
  };
  Sender a(flow(d12), t0), b(flow(d13), t0), c(flow(d6), t0), e(flow(allowed), t0);
  const SendLog &la = a.join(), &lb = b.join(), &lc = c.join(), &le = e.join();
  rx.finish();
  rx6.finish(50, 1000);
  const auto s1 = sb().stats();
  report("imported_sent", d(la.sent + lb.sent + lc.sent));
  report("imported_delivered", d(rx.count(d12) + rx.count(d13) + rx6.count(d6)));
  report("allowed_sent", d(le.sent));
  report("allowed_delivered", d(rx.count(allowed)));
  EXPECT_EQ(rx.count(d12) + rx.count(d13) + rx6.count(d6), 0u) << rx.summary() << rx6.summary();
  EXPECT_EQ(d(stat_reason_delta(s0, s1, "dropped", "deny")), d(la.sent + lb.sent + lc.sent));
  EXPECT_EQ(rx.count(allowed), le.sent) << "the import took an allowed source: " << rx.summary();
}

}  // namespace
}  // namespace lvt
