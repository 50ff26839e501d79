// reload_test.cpp - `levee reload` end to end: it rejects broken files without touching
// the running policy (checked by traffic), applies good ones without losing a packet of
// a stream under its limit, keeps run-time list entries and the per-source state of
// classes that still exist, starts a new class afresh, and says what of the file's
// attach-time settings it keeps only where they differ.
#include <unistd.h>

#include <map>
#include <regex>
#include <sstream>

#include "e2e.hpp"
#include "levee_run.hpp"

namespace lvt {
namespace {

using Reload = E2e;

// (name, rate, burst) of each class of a status object, in policy order.
std::string class_list(const nlohmann::json& st) {
  std::string s;
  for (const auto& c : st.at("classes"))
    s += c.at("name").get<std::string>() + ":" + std::to_string(c.at("rate").get<uint64_t>()) + "/" +
         std::to_string(c.at("burst").get<uint64_t>()) + " ";
  return s;
}

// ---- twenty broken files ------------------------------------------------------------

// A broken file: the defect is on the line marked "#!" (or line 1 if none is); the
// error must name that line and `key` (empty: a TOML syntax error, which gives
// LINE:COLUMN instead of a key). Every file would loosen the UDP class to 5,000 pps if
// anything of it were applied.
struct Broken {
  const char* what;
  const char* key;
  std::string text;
};

const std::vector<Broken>& broken_files() {
  static const std::string cls = "[[class]]\nname = \"udp\"\nmatch.proto = \"udp\"\nrate = 5000\nburst = 5000\n";
  static const std::string dflt = "\n[default]\nrate = \"10k\"\nburst = \"1k\"\n";
  static const std::vector<Broken> v{
      {"bad CIDR", "lists.deny[0]", cls + dflt + "[lists]\ndeny = [\"198.18.9.300\"]  #!\n"},
      {"unknown key", "class[0].brust", cls + "brust = 10  #!\n" + dflt},
      {"negative rate", "class[0].rate",
       "[[class]]\nname = \"udp\"\nmatch.proto = \"udp\"\nrate = -5000  #!\nburst = 5000\n" + dflt},
      {"port 70000", "class[0].match.port", cls + "match.port = 70000  #!\n" + dflt},
      {"duplicate class name", "class[1].name",
       cls + "\n[[class]]\nname = \"udp\"  #!\nmatch.proto = \"tcp\"\nrate = 1\nburst = 1\n" + dflt},
      {"missing [default]", "default", cls},
      {"syn with udp", "class[0].match.syn", cls + "match.syn = true  #!\n" + dflt},
      {"host bits set", "lists.allow[0]", cls + dflt + "[lists]\nallow = [\"198.18.9.1/24\"]  #!\n"},
      {"bad duration", "lists.deny[0].expires",
       cls + dflt + "[lists]\ndeny = [{ cidr = \"198.18.9.0/24\", expires = \"3 fortnights\" }]  #!\n"},
      {"override naming an unknown class", "override[0].classes[0]",
       cls + dflt +
           "[[override]]\nname = \"p\"\nnetworks = [\"198.18.9.0/24\"]\nrate = 10\nburst = 1\n"
           "classes = [\"nosuch\"]  #!\n"},
      {"TOML syntax error", "", cls + "\n[default]\nrate = \"10k\"\nburst =   #!\n"},
      {"rate without burst", "class[0].rate",
       "[[class]]\nname = \"udp\"\nmatch.proto = \"udp\"\nrate = 5000  #!\n" + dflt},
      {"prefix4 33", "class[0].prefix4", cls + "prefix4 = 33  #!\n" + dflt},
      {"prefix4 as a string", "class[0].prefix4", cls + "prefix4 = \"24\"  #!\n" + dflt},
      {"unknown protocol", "class[0].match.proto",
       "[[class]]\nname = \"udp\"\nmatch.proto = \"sctp\"  #!\nrate = 5000\nburst = 5000\n" + dflt},
      {"class matching everything", "class[0]", "[[class]]  #!\nname = \"udp\"\nrate = 5000\nburst = 5000\n" + dflt},
      {"expiry on an allow entry", "lists.allow[0].expires",
       cls + dflt + "[lists]\nallow = [{ cidr = \"198.18.9.0/24\", expires = \"1h\" }]  #!\n"},
      {"one prefix on two lists", "lists.deny[0]",
       cls + dflt + "[lists]\nallow = [\"198.18.9.0/24\"]\ndeny = [\"198.18.9.0/24\"]  #!\n"},
      {"IPv6 prefix /129", "lists.deny[0]", cls + dflt + "[lists]\ndeny = [\"2001:db8:9::/129\"]  #!\n"},
      {"rate 0", "default.rate", cls + "\n[default]\nrate = 0  #!\nburst = 10\n"},
  };
  return v;
}

int marked_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find("#!") != std::string::npos) return n;
  return 1;
}

// Twenty broken files, reloaded while a source floods: each is rejected with exit 2 and
// one line naming FILE:LINE and the key; the flood stays held to the old limit
// throughout (had anything of a broken file been applied, 5,000 pps would pass), and
// the policy generation does not move.
TEST_F(Reload, RejectsTwentyBrokenFilesAndKeepsThePolicy) {
  TempDir dir;
  const std::string good = dir.write("good.toml", kUdpClassPolicy);
  attach({"--config", good});
  const auto st0 = sb().status();
  ASSERT_FALSE(st0.is_null());
  const auto& cases = broken_files();
  ASSERT_EQ(cases.size(), 20u);

  const std::string src = Addrs::src4()[0];
  UdpReceiver rx(sb().rx_ns(), AF_INET);
  const uint64_t t0 = start_soon();
  Sender flood({.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .pps = 2000, .seconds = 3}, t0);
  sleep_until_ns(t0 + 500'000'000ull);
  const uint64_t reloads_start = now_ns();
  for (size_t i = 0; i < cases.size(); ++i) {
    const Broken& b = cases[i];
    SCOPED_TRACE(b.what);
    const std::string path = dir.write("broken" + std::to_string(i + 1) + ".toml", b.text);
    RunResult r = sb().levee({"reload", sb().rx_if(), "--config", path});
    std::printf("[broken %2zu: %s] exit %d: %s", i + 1, b.what, r.code, r.err.c_str());
    const std::string where = path + ":" + std::to_string(marked_line(b.text)) + ":";
    expect_error(r, 2, where);
    if (*b.key) {
      EXPECT_NE(r.err.find(where + " " + b.key + ":"), std::string::npos)
          << "expected '" << where << " " << b.key << ": ...'" << r.describe();
    } else {
      EXPECT_TRUE(std::regex_search(
          r.err, std::regex(std::regex_replace(where, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") + "[0-9]+: ")))
          << "expected FILE:LINE:COLUMN" << r.describe();
    }
    EXPECT_TRUE(r.out.empty()) << r.describe();
  }
  const uint64_t reloads_done = now_ns();
  const SendLog& l = flood.join();
  rx.finish();

  const double expected = gcra_expected(200, 50, l), got = d(rx.count(src));
  report("broken_reloads_s", secs(reloads_done - reloads_start));
  report("flood_span_s", l.span());
  report("flood_expected", expected);
  report("flood_delivered", got);
  EXPECT_LT(reloads_done, l.t_last) << "the reloads did not all happen during the flood";
  EXPECT_NEAR(got, expected, kTol * expected) << "the limit changed during the broken reloads";
  // And after the last of them, still the old limit (the reference GCRA over the sends).
  const auto model = gcra_model(l.times, {200, 50});
  const double after_model = d(count_between(model, reloads_done, UINT64_MAX));
  const double after_got = d(rx.count_between(src, reloads_done, UINT64_MAX));
  report("after_broken_reloads_model", after_model);
  report("after_broken_reloads_delivered", after_got);
  EXPECT_NEAR(after_got, after_model, kTol * after_model) << "the limit changed after the broken reloads";

  const auto st1 = sb().status();
  ASSERT_FALSE(st1.is_null());
  EXPECT_EQ(ju(st1, "policy_generation"), ju(st0, "policy_generation"));
  EXPECT_EQ(class_list(st1), class_list(st0));
  EXPECT_EQ(class_list(st1), "udp:200/50 default:10000/1000 ");
  EXPECT_EQ(st1.at("lists"), st0.at("lists"));
  EXPECT_EQ(st1.at("overrides"), st0.at("overrides"));
  EXPECT_EQ(st1.at("source"), st0.at("source"));
}

// ---- twenty good reloads under a stream ---------------------------------------------

constexpr const char* kPolicyA = R"(# A
[[class]]
name = "stream"
match.proto = "udp"
match.port = 5001
rate = 100
burst = 50

[[class]]
name = "fast"
match.proto = "udp"
match.port = 5002
rate = 1000
burst = 200

[default]
rate = "10k"
burst = "1k"
)";

constexpr const char* kPolicyB = R"(# B: a class more, another order, looser limits
[[class]]
name = "icmp"
match.proto = ["icmp", "icmpv6"]
rate = 50
burst = 50

[[class]]
name = "fast"
match.proto = "udp"
match.port = 5002
rate = 2000
burst = 400

[[class]]
name = "stream"
match.proto = "udp"
match.port = 5001
rate = 200
burst = 100

[default]
rate = "20k"
burst = "2k"

[lists]
deny = ["198.18.7.0/24"]
)";

// Streams under their limits (50 pps over IPv4 and IPv6, and 500 pps) lose no packet
// while the policy is reloaded 20 times, alternating two valid policies that differ in
// their classes, order, limits and lists.
TEST_F(Reload, StreamUnderItsLimitLosesNothingAcrossTwenty) {
  TempDir dir;
  const std::string a = dir.write("a.toml", kPolicyA), b = dir.write("b.toml", kPolicyB);
  attach({"--config", a});
  const auto st0 = sb().status();
  ASSERT_FALSE(st0.is_null());
  UdpReceiver rx(sb().rx_ns(), AF_INET, kPort), rxf(sb().rx_ns(), AF_INET, kPort2), rx6(sb().rx_ns(), AF_INET6, kPort);
  const std::string s4 = Addrs::src4()[0], sf = Addrs::src4()[1], s6 = Addrs::src6()[0];
  const auto s0 = sb().stats();
  const uint64_t t0 = start_soon();
  // The reloads are due from 0.3 s to 2.6 s; each takes tens of ms, more on a loaded
  // machine (the last one ended at 3.1 s beside a parallel build). The streams outlast them.
  constexpr double kStreamS = 4.5;
  Sender stream({.ns = sb().tx_ns(), .src = s4, .dst = Addrs::rx4, .pps = 50, .seconds = kStreamS}, t0);
  Sender stream6({.ns = sb().tx_ns(), .src = s6, .dst = Addrs::rx6, .pps = 50, .seconds = kStreamS}, t0);
  Sender fast({.ns = sb().tx_ns(), .src = sf, .dst = Addrs::rx4, .port = kPort2, .pps = 500, .seconds = kStreamS}, t0);
  std::vector<RunResult> results;
  uint64_t first_reload = 0, last_reload = 0;
  for (int i = 0; i < 20; ++i) {
    sleep_until_ns(t0 + 300'000'000ull + static_cast<uint64_t>(i) * 120'000'000ull);
    if (i == 0) first_reload = now_ns();
    results.push_back(sb().levee({"reload", sb().rx_if(), "--config", i % 2 ? a : b}));
    last_reload = now_ns();
  }
  const SendLog &l4 = stream.join(), &l6 = stream6.join(), &lf = fast.join();
  rx.finish();
  rxf.finish(50, 1000);
  rx6.finish(50, 1000);
  const auto s1 = sb().stats();

  for (size_t i = 0; i < results.size(); ++i) EXPECT_EQ(results[i].code, 0) << "reload " << i << results[i].describe();
  // The premise: the senders kept under the tighter of the two limits (a sender stall
  // caught up at once could exceed a burst; the reference GCRA says whether it did).
  ASSERT_EQ(gcra_model(l4.times, {100, 50}).size(), l4.sent) << "the IPv4 stream itself exceeded its limit";
  ASSERT_EQ(gcra_model(l6.times, {100, 50}).size(), l6.sent) << "the IPv6 stream itself exceeded its limit";
  ASSERT_EQ(gcra_model(lf.times, {1000, 200}).size(), lf.sent) << "the fast stream itself exceeded its limit";
  report("reloads_span_s", secs(last_reload - first_reload));
  report("stream4_sent", d(l4.sent));
  report("stream4_delivered", d(rx.count(s4)));
  report("stream6_sent", d(l6.sent));
  report("stream6_delivered", d(rx6.count(s6)));
  report("fast_sent", d(lf.sent));
  report("fast_delivered", d(rxf.count(sf)));
  EXPECT_LT(l4.t_first, first_reload);
  EXPECT_GT(l4.t_last, last_reload);
  EXPECT_EQ(rx.count(s4), l4.sent) << rx.summary();
  EXPECT_EQ(rx6.count(s6), l6.sent) << rx6.summary();
  EXPECT_EQ(rxf.count(sf), lf.sent) << rxf.summary();
  EXPECT_EQ(d(ju(s1, "dropped_packets")), d(ju(s0, "dropped_packets"))) << s1.dump();
  EXPECT_EQ(class_delta(s0, s1, "stream").passed, d(l4.sent + l6.sent));
  EXPECT_EQ(class_delta(s0, s1, "fast").passed, d(lf.sent));

  const auto st1 = sb().status();
  ASSERT_FALSE(st1.is_null());
  EXPECT_EQ(ju(st1, "policy_generation"), ju(st0, "policy_generation") + 20);
  EXPECT_EQ(class_list(st1), class_list(st0)) << "an even number of reloads ends on policy A";
}

// ---- run-time list entries, class ids across reloads --------------------------------

// A config deny entry, replaced by the next reload.
const std::string kWithConfigDeny = kUdpClassPolicy + "\n[lists]\ndeny = [\"198.18.0.14\"]\n";

constexpr const char* kNoLists = R"(# other limits, no lists
[[class]]
name = "udp"
match.proto = "udp"
rate = 300
burst = 60

[default]
rate = "10k"
burst = "1k"
)";

// Entries added with `levee deny add` and `levee deny import` survive a reload (and
// still deny by traffic); the old file's own entry does not (its source is limited by
// the new file's class).
// [interface] mode, max_sources and max_bans apply at attach. A reload (and levee run,
// which reloads the file into a filter it adopts) says it keeps the filter's only where
// the file asks for another value, and names it.
TEST_F(Reload, SaysItKeepsAttachSettingsOnlyWhereTheFileAsksForOthers) {
  TempDir dir;
  const std::string policy = "[default]\nrate = 100\nburst = 10\n";
  const std::string same = dir.write("same.toml", "[interface]\nmode = \"auto\"\nmax_sources = 5000\n" + policy);
  attach({"--config", same});
  RunResult r = sb().levee({"reload", sb().rx_if(), "--config", same});
  ASSERT_EQ(r.code, 0) << r.describe();
  EXPECT_EQ(r.out.find("note"), std::string::npos) << r.out;
  {
    LeveeRun d(sb(), {"--config", same});
    d.wait_ready();
    RunResult run = d.stop();
    EXPECT_NE(run.err.find("adopted the running filter"), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("note"), std::string::npos) << run.err;
  }
  r = sb().levee(
      {"reload", sb().rx_if(), "--config",
       dir.write("other.toml", "[interface]\nmode = \"auto\"\nmax_sources = 6000\nmax_bans = 100\n" + policy)});
  ASSERT_EQ(r.code, 0) << r.describe();
  EXPECT_NE(r.out.find("  note     the file's max_sources 6000 (attached with 5000), max_bans 100 (attached with "
                       "65536) apply at attach: a reload keeps the filter's"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("XDP mode"), std::string::npos) << r.out;
}

TEST_F(Reload, KeepsRunTimeListEntries) {
  TempDir dir;
  attach({"--config", dir.write("a.toml", kWithConfigDeny)});
  const std::string added = Addrs::src4()[1], imported = Addrs::src4()[2], from_config = Addrs::src4()[3];
  RunResult r = sb().levee({"deny", "add", sb().rx_if(), added});
  ASSERT_EQ(r.code, 0) << r.describe();
  r = sb().levee({"deny", "import", sb().rx_if(), dir.write("block.netset", imported + "\n")});
  ASSERT_EQ(r.code, 0) << r.describe();
  r = sb().levee({"reload", sb().rx_if(), "--config", dir.write("b.toml", kNoLists)});
  ASSERT_EQ(r.code, 0) << r.describe();
  EXPECT_NE(r.out.find("2 of them added at run time, kept"), std::string::npos) << r.describe();

  RunResult list = sb().levee({"deny", "list", sb().rx_if(), "--json"});
  ASSERT_EQ(list.code, 0) << list.describe();
  std::map<std::string, std::string> origin;
  const auto entries = nlohmann::json::parse(list.out);
  for (const auto& e : entries.at("entries"))
    origin[e.at("cidr").get<std::string>()] = e.at("origin").get<std::string>();
  EXPECT_EQ(origin[added + "/32"], "cli") << list.out;
  EXPECT_EQ(origin[imported + "/32"], "import") << list.out;
  EXPECT_EQ(origin.count(from_config + "/32"), 0u) << "the old file's entry outlived the reload: " << list.out;

  UdpReceiver rx(sb().rx_ns(), AF_INET);
  usleep(50'000);
  const auto s0 = sb().stats();
  const uint64_t t0 = start_soon();
  auto flow = [&](const std::string& src) {
    return Flow{.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .pps = 1500, .seconds = 2};
  };
  Sender sa(flow(added), t0), si(flow(imported), t0), sc(flow(from_config), t0);
  const SendLog &la = sa.join(), &li = si.join(), &lc = sc.join();
  rx.finish();
  const auto s1 = sb().stats();
  const double expected = gcra_expected(300, 60, lc);
  report("cli_denied_sent", d(la.sent));
  report("cli_denied_delivered", d(rx.count(added)));
  report("imported_denied_sent", d(li.sent));
  report("imported_denied_delivered", d(rx.count(imported)));
  report("old_config_deny_expected", expected);
  report("old_config_deny_delivered", d(rx.count(from_config)));
  EXPECT_EQ(rx.count(added), 0u) << rx.summary();
  EXPECT_EQ(rx.count(imported), 0u) << rx.summary();
  EXPECT_EQ(d(stat_reason_delta(s0, s1, "dropped", "deny")), d(la.sent + li.sent));
  EXPECT_NEAR(d(rx.count(from_config)), expected, kTol * expected) << "not limited by the new file's class";
}

constexpr const char* kOnlyB = R"(# class b
[[class]]
name = "b"
match.proto = "udp"
match.port = 5001
rate = 200
burst = 100

[default]
rate = "10k"
burst = "1k"
)";

constexpr const char* kAThenB = R"(# a new class a before b
[[class]]
name = "a"
match.proto = "udp"
match.port = 5002
rate = 50
burst = 10

[[class]]
name = "b"
match.proto = "udp"
match.port = 5001
rate = 200
burst = 100

[default]
rate = "10k"
burst = "1k"
)";

// A reload that inserts a class before "b" keeps b's per-source state: a source being
// limited in b stays limited right after the reload (no fresh burst of 100), and b
// keeps its id and its counters.
TEST_F(Reload, InsertingAClassKeepsPerSourceState) {
  TempDir dir;
  attach({"--config", dir.write("b.toml", kOnlyB)});
  const std::string a_then_b = dir.write("ab.toml", kAThenB);
  const std::string src = Addrs::src4()[0];
  const auto st0 = sb().status();
  ASSERT_FALSE(st0.is_null());
  UdpReceiver rx(sb().rx_ns(), AF_INET);
  const uint64_t t0 = start_soon();
  Sender flood({.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .pps = 2000, .seconds = 3}, t0);
  sleep_until_ns(t0 + 1'500'000'000ull);
  auto before = sb().show(src);
  const uint64_t reload_start = now_ns();
  RunResult r = sb().levee({"reload", sb().rx_if(), "--config", a_then_b});
  const uint64_t reload_done = now_ns();
  auto after = sb().show(src);
  const SendLog& l = flood.join();
  rx.finish();
  const auto stats = sb().stats();
  ASSERT_EQ(r.code, 0) << r.describe();

  // b's limits do not change: the reference GCRA over the actual sends, no change.
  const auto model = gcra_model(l.times, {200, 100});
  const auto got = rx.times(src);
  const uint64_t win = 300'000'000ull;
  const double first_model = d(count_between(model, reload_done, reload_done + win));
  const double first_got = d(count_between(got, reload_done, reload_done + win));
  const double expected = gcra_expected(200, 100, l);
  report("reload_ms", secs(reload_done - reload_start) * 1e3);
  report("first_300ms_after_reload_model", first_model);
  report("first_300ms_after_reload_delivered", first_got);
  report("flood_expected", expected);
  report("flood_delivered", d(got.size()));
  EXPECT_NEAR(first_got, first_model, kTol * first_model + 3) << "a fresh burst after the reload?";
  EXPECT_LE(first_got, first_model + 40) << "a fresh burst after the reload";
  EXPECT_NEAR(d(got.size()), expected, kTol * expected);

  // b kept its id (in status, stats and show) and its counters; a took a new one.
  const auto st1 = sb().status();
  ASSERT_FALSE(st1.is_null());
  auto id_of = [](const nlohmann::json& st, const std::string& name) {
    for (const auto& c : st.at("classes"))
      if (c.at("name") == name) return c.at("id").get<int64_t>();
    return int64_t{-1};
  };
  EXPECT_EQ(id_of(st1, "b"), id_of(st0, "b")) << st1.dump();
  EXPECT_NE(id_of(st1, "a"), id_of(st0, "b")) << st1.dump();
  EXPECT_EQ(stats.at("classes").at("b").at("id").get<int64_t>(), id_of(st0, "b"));
  EXPECT_EQ(d(stats.at("classes").at("b").at("passed_packets").get<uint64_t>()), d(got.size()))
      << "b's counters restarted at the reload";
  auto bb = show_class(before, "b"), ba = show_class(after, "b");
  ASSERT_FALSE(bb.is_null() || ba.is_null()) << before.dump() << "\n" << after.dump();
  EXPECT_EQ(ba.at("id"), bb.at("id"));
  EXPECT_GE(ba.at("passed_packets").get<uint64_t>(), bb.at("passed_packets").get<uint64_t>())
      << "b's per-source state was reset by the reload";
  // Limited: at most the one token accrued since its last pass (a fresh bucket: ~100).
  EXPECT_LE(ba.at("tokens").get<uint64_t>(), 1u)
      << "the limited source has tokens right after the reload: " << after.dump();
}

constexpr const char* kOld = R"(# class "old": one packet a second
[[class]]
name = "old"
match.proto = "udp"
match.port = 5001
rate = 1
burst = 5

[default]
rate = "10k"
burst = "1k"
)";

constexpr const char* kNeither = R"(# neither "old" nor "new"
[default]
rate = "10k"
burst = "1k"
)";

constexpr const char* kNew = R"(# class "new", for the same packets, much looser
[[class]]
name = "new"
match.proto = "udp"
match.port = 5001
rate = 1000
burst = 100

[default]
rate = "10k"
burst = "1k"
)";

// A class that did not exist in the running policy is a new class: its sources start
// with full buckets and its counters at zero (README: a renamed class is a new class),
// also when it is given the id of a class removed by an earlier reload.
// (It once inherited them: ids freed a reload earlier were handed out again with the
// removed class's state and counters. A new class now moves its id to the next epoch,
// part of the state key, and starts its counters from a baseline.)
TEST_F(Reload, NewClassStartsFreshEvenOnAReusedId) {
  TempDir dir;
  attach({"--config", dir.write("old.toml", kOld)});
  const std::string neither = dir.write("neither.toml", kNeither), fresh = dir.write("new.toml", kNew);
  const std::string src = Addrs::src4()[0];
  UdpReceiver rx(sb().rx_ns(), AF_INET);
  // Limit the source in "old": 5 pass, the rest are dropped; its next packet is due
  // about 1 s after the burst.
  Sender flood({.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .pps = 2000, .seconds = 0.2}, start_soon(20));
  const SendLog& lf = flood.join();
  const auto st_old = sb().status();
  const auto stats_old = sb().stats();
  ASSERT_FALSE(st_old.is_null());
  const auto old_counts = stats_old.at("classes").at("old");
  RunResult r1 = sb().levee({"reload", sb().rx_if(), "--config", neither});
  ASSERT_EQ(r1.code, 0) << r1.describe();
  RunResult r2 = sb().levee({"reload", sb().rx_if(), "--config", fresh});
  ASSERT_EQ(r2.code, 0) << r2.describe();
  const auto stats_new = sb().stats();
  // 20 packets at 1,000 pps: within the new class's burst of 100, all must pass.
  Sender probe({.ns = sb().tx_ns(), .src = src, .dst = Addrs::rx4, .pps = 1000, .seconds = 0.02}, start_soon(5));
  const SendLog& lp = probe.join();
  const uint64_t probe_end = now_ns();
  rx.finish();
  const auto show = sb().show(src);
  const auto st_new = sb().status();
  ASSERT_FALSE(st_new.is_null());

  const auto times = rx.times(src);
  const uint64_t probe_got = count_between(times, lp.t_first, probe_end + 1'000'000'000ull);
  int64_t old_id = -1, new_id = -1;
  for (const auto& c : st_old.at("classes"))
    if (c.at("name") == "old") old_id = c.at("id").get<int64_t>();
  for (const auto& c : st_new.at("classes"))
    if (c.at("name") == "new") new_id = c.at("id").get<int64_t>();
  ASSERT_TRUE(stats_new.at("classes").contains("new")) << stats_new.dump();
  const auto new_counts = stats_new.at("classes").at("new");
  report("old_passed", d(old_counts.at("passed_packets").get<uint64_t>()));
  report("old_dropped", d(old_counts.at("dropped_packets").get<uint64_t>()));
  report("new_passed_before_any_packet", d(new_counts.at("passed_packets").get<uint64_t>()));
  report("new_dropped_before_any_packet", d(new_counts.at("dropped_packets").get<uint64_t>()));
  report("probe_sent", d(lp.sent));
  report("probe_delivered", d(probe_got));
  report("old_class_id", d(static_cast<uint64_t>(old_id)));
  report("new_class_id", d(static_cast<uint64_t>(new_id)));
  ASSERT_GT(lf.sent, 100u);
  ASSERT_GT(old_counts.at("dropped_packets").get<uint64_t>(), 0u) << "the source was never limited in 'old'";

  EXPECT_EQ(new_counts.at("passed_packets"), 0) << "a new class starts with zero counters: " << new_counts.dump();
  EXPECT_EQ(new_counts.at("dropped_packets"), 0) << "a new class starts with zero counters: " << new_counts.dump();
  EXPECT_EQ(probe_got, lp.sent) << "a new class's source starts with a full bucket: " << show.dump();
  auto c = show_class(show, "new");
  ASSERT_FALSE(c.is_null()) << show.dump();
  EXPECT_EQ(c.at("passed_packets"), lp.sent) << show.dump();
  EXPECT_EQ(c.at("dropped_packets"), 0) << show.dump();
}

}  // namespace
}  // namespace lvt
