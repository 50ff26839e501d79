// bans_test.cpp - bans end to end: a ban lasts `ban` after the source's last offence,
// doubles for an offence within forget_after of its end, starts over after it, and
// `levee unban` lifts it at once. A probe from the banned source, under its limit on
// another port, says by its datagrams when the source was banned.
#include "e2e.hpp"

namespace lvt {
namespace {

using Bans = E2e;

constexpr uint16_t kProbePort = 5002;

// A field of `levee show --json` about bans: at the top level, else in the first class
// object that has it. Null if levee does not report it.
nlohmann::json ban_field(const nlohmann::json& show, const std::string& key) {
  if (show.contains(key)) return show.at(key);
  if (show.contains("ban") && show.at("ban").is_object() && show.at("ban").contains(key)) return show.at("ban").at(key);
  if (show.contains("classes"))
    for (const auto& c : show.at("classes"))
      if (c.contains(key)) return c.at(key);
  return nullptr;
}

constexpr const char* kBanConfig = R"(# a source over its limit is banned
[default]
rate = 100
burst = 20
ban = "2s"
ban_max = "30s"
forget_after = "3s"
)";

struct BanSeen {
  double measured = -1;        // first probe passed after the offence, s after the last flood send
  uint64_t passed_inside = 0;  // probes passed well inside the expected ban
  uint64_t lost_after = 0;     // probes lost well after it (before the next flood)
  uint64_t inside = 0, after = 0;
};

// The probe's fate around one ban: last = the flood's last send, `ban` its expected
// length, `until` where to stop looking (the next flood).
BanSeen ban_seen(const SendLog& probe, const std::vector<bool>& got, uint64_t last, double ban, uint64_t until) {
  BanSeen b;
  const uint64_t end = last + static_cast<uint64_t>(ban * 1e9);
  const uint64_t margin = 60'000'000;  // 60 ms: the last offence is within the flood's last ~10 ms
  for (size_t i = 0; i < probe.times.size(); ++i) {
    const uint64_t t = probe.times[i];
    if (t <= last || t >= until) continue;
    if (got[i] && b.measured < 0) b.measured = secs(t - last);
    if (t > last + margin && t + margin < end) {
      ++b.inside;
      if (got[i]) ++b.passed_inside;
    } else if (t > end + margin) {
      ++b.after;
      if (!got[i]) ++b.lost_after;
    }
  }
  return b;
}

// A ban lasts `ban` after the source's last packet over its limit; a second offence
// within forget_after of the ban's end doubles it; after forget_after of quiet it is
// `ban` again. The source keeps sending a probe at 50 pps (half its limit) throughout,
// to another port: its probes are dropped while it is banned and pass otherwise.
TEST_F(Bans, LastAfterTheLastOffenceDoubleWithinForgetAfterResetAfterIt) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kBanConfig)});
  const std::string src = Addrs::src4()[0];
  UdpReceiver flood_rx(sb().rx_ns(), AF_INET, kPort);
  UdpReceiver probe_rx(sb().rx_ns(), AF_INET, kProbePort);
  const auto s0 = sb().stats();
  const uint64_t t0 = start_soon(50);
  Sender probe(
      {.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .port = kProbePort, .pps = 50, .seconds = 17.5, .seq = true},
      t0);
  auto flood_at = [&](uint64_t at) {
    return std::make_unique<Sender>(
        Flow{.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .pps = 1000, .seconds = 0.5}, at);
  };
  auto show = [&](const char* when) {
    RunResult r = sb().levee({"show", sb().rx_if(), src, "--json"});
    EXPECT_EQ(r.code, 0) << "levee show " << when << ": " << r.describe();
    return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  };
  struct Ban {
    SendLog flood;
    double expected;
    nlohmann::json show;
    uint64_t shown_at;
  };
  std::vector<Ban> bans;
  // 1st offence.
  auto f1 = flood_at(t0 + 500'000'000ull);
  bans.push_back({f1->join(), 2.0, show("during the 1st ban"), now_ns()});
  // 2nd, 1 s after the 1st ban ended (within forget_after = 3 s): 4 s.
  auto f2 = flood_at(bans[0].flood.t_last + 3'000'000'000ull);
  bans.push_back({f2->join(), 4.0, show("during the 2nd ban"), now_ns()});
  // 3rd, 4 s after the 2nd ended (forget_after passed): 2 s again.
  auto f3 = flood_at(bans[1].flood.t_last + 8'000'000'000ull);
  bans.push_back({f3->join(), 2.0, show("during the 3rd ban"), now_ns()});
  const SendLog& p = probe.join();
  probe_rx.finish();
  flood_rx.finish(50, 1000);
  const auto s1 = sb().stats();

  const std::vector<bool> got = probe_rx.arrived(src, p.sent);
  ASSERT_GT(p.t_last, bans[2].flood.t_last + 2'500'000'000ull) << "the probe ended before the 3rd ban did";

  for (size_t k = 0; k < bans.size(); ++k) {
    const Ban& b = bans[k];
    const uint64_t until = k + 1 < bans.size() ? bans[k + 1].flood.t_first : p.t_last + 1;
    const BanSeen s = ban_seen(p, got, b.flood.t_last, b.expected, until);
    const std::string n = "ban" + std::to_string(k + 1);
    report(n + "_expected_s", b.expected);
    report(n + "_measured_s", s.measured);
    report(n + "_probes_passed_inside", d(s.passed_inside));
    report(n + "_probes_lost_after", d(s.lost_after));
    EXPECT_NEAR(s.measured, b.expected, std::max(0.1, kTol * b.expected))
        << "ban " << k + 1 << ": the source's first packet passed " << num(s.measured)
        << " s after its last flood packet; expected a ban of " << num(b.expected) << " s";
    EXPECT_EQ(s.passed_inside, 0u) << "ban " << k + 1 << ": " << s.passed_inside << " of " << s.inside
                                   << " probes passed while the source should have been banned";
    EXPECT_EQ(s.lost_after, 0u) << "ban " << k + 1 << ": " << s.lost_after << " of " << s.after
                                << " probes lost after the ban should have ended";
    // levee show, taken right after the flood: banned, what remains, the offences.
    const double since = secs(b.shown_at - b.flood.t_last);
    const auto banned = ban_field(b.show, "banned");
    const auto remaining = ban_field(b.show, "ban_remaining_ms");
    const auto offences = ban_field(b.show, "offences");
    EXPECT_EQ(banned, nlohmann::json(true)) << "levee show during ban " << k + 1 << ": " << b.show.dump();
    if (remaining.is_number()) {
      EXPECT_NEAR(remaining.get<double>(), (b.expected - since) * 1000.0, 150.0)
          << "levee show during ban " << k + 1 << " (" << num(since) << " s after the last offence): " << b.show.dump();
    } else {
      ADD_FAILURE() << "levee show --json has no ban_remaining_ms: " << b.show.dump();
    }
    const int expected_offences = k == 1 ? 2 : 1;
    EXPECT_EQ(offences, nlohmann::json(expected_offences))
        << "levee show during ban " << k + 1 << ": offences; " << b.show.dump();
  }
  const int64_t ban_drops = stat_reason_delta(s0, s1, "dropped", "ban");
  report("stats_dropped_ban", d(ban_drops));
  EXPECT_GT(ban_drops, 0) << "no drops counted as ban: " << stat_reasons_text(s1, "dropped");
  // After the last ban, not banned any more.
  auto after = show("after the last ban");
  EXPECT_EQ(ban_field(after, "banned"), nlohmann::json(false)) << after.dump();
}

// levee unban lifts a ban at once: the banned source's next packets pass.
TEST_F(Bans, UnbanLiftsABanAtOnce) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", R"([default]
rate = 100
burst = 20
ban = "20s"
)")});
  const std::string src = Addrs::src4()[0];
  UdpReceiver probe_rx(sb().rx_ns(), AF_INET, kProbePort);
  const uint64_t t0 = start_soon(50);
  Sender probe(
      {.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .port = kProbePort, .pps = 50, .seconds = 3.0, .seq = true},
      t0);
  Sender flood({.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .pps = 1000, .seconds = 0.5}, t0 + 200'000'000ull);
  const SendLog& f = flood.join();
  usleep(500'000);
  const auto before = sb().show(src);
  const uint64_t unban_start = now_ns();
  RunResult u = sb().levee({"unban", sb().rx_if(), src});
  const uint64_t unban_done = now_ns();
  const SendLog& p = probe.join();
  probe_rx.finish();
  ASSERT_EQ(u.code, 0) << "levee unban: " << u.describe();
  const auto after = sb().show(src);

  const std::vector<bool> got = probe_rx.arrived(src, p.sent);
  uint64_t banned_sent = 0, banned_passed = 0, after_sent = 0, after_passed = 0;
  for (size_t i = 0; i < p.times.size(); ++i) {
    const uint64_t t = p.times[i];
    if (t > f.t_last + 60'000'000ull && t < unban_start) {
      ++banned_sent;
      banned_passed += got[i];
    } else if (t > unban_done + 20'000'000ull) {
      ++after_sent;
      after_passed += got[i];
    }
  }
  report("unban_probes_banned_sent", d(banned_sent));
  report("unban_probes_banned_passed", d(banned_passed));
  report("unban_probes_after_sent", d(after_sent));
  report("unban_probes_after_passed", d(after_passed));
  EXPECT_EQ(ban_field(before, "banned"), nlohmann::json(true)) << before.dump();
  EXPECT_EQ(banned_passed, 0u) << banned_passed << " of " << banned_sent << " probes passed while banned";
  EXPECT_GT(after_sent, 20u);
  EXPECT_EQ(after_passed, after_sent) << "after levee unban " << after_passed << " of " << after_sent
                                      << " probes (50 pps, under the limit) passed";
  EXPECT_EQ(ban_field(after, "banned"), nlohmann::json(false)) << after.dump();
  // Each line names the interface first, as every command's output does.
  EXPECT_EQ(u.out.rfind(sb().rx_if() + ": unbanned " + src + " in class default: ", 0), 0u) << u.out;
  RunResult again = sb().levee({"unban", sb().rx_if(), src});
  ASSERT_EQ(again.code, 0) << again.describe();
  EXPECT_EQ(again.out, sb().rx_if() + ": " + src + " is not banned\n");
}

}  // namespace
}  // namespace lvt
