// suggest_test.cpp - `levee suggest` against real traffic: three profiles of paced UDP
// sources, each in a class of its own and within its limits, and the rate the command
// learns for each class's typical source is the profile's within 20 %; with --config,
// the diff of the file replaces each class's rate and keeps each class's autopilot; a
// FIFO given as that file is refused at once.
#include <sys/stat.h>

#include "e2e.hpp"

namespace lvt {
namespace {

using nlohmann::json;
using Suggest = E2e;

constexpr const char* kThreeClasses = R"([[class]]
name = "slow"
match.proto = "udp"
match.port = 5001
rate = 100
burst = 50

[[class]]
name = "mid"
match.proto = "udp"
match.port = 5002
rate = 500
burst = 100

[default]
rate = "10k"
burst = "1k"
)";

TEST_F(Suggest, RecoversEachProfilesRate) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kThreeClasses)});
  struct Profile {
    const char* cls;
    uint16_t port;
    double pps;
  };
  // The same addresses in each class: a source's state is per class.
  const Profile profiles[] = {{"slow", kPort, 20}, {"mid", kPort2, 100}, {"default", 5003, 300}};
  constexpr size_t kSources = 5;
  const uint64_t t0 = start_soon(100);
  std::vector<std::unique_ptr<Sender>> senders;
  for (const Profile& p : profiles)
    for (size_t i = 0; i < kSources; ++i)
      senders.push_back(std::make_unique<Sender>(Flow{.ns = sb().tx_ns(),
                                                      .src = Addrs::src4()[i],
                                                      .dst = Addrs::rx4,
                                                      .port = p.port,
                                                      .pps = p.pps,
                                                      .seconds = 11},
                                                 t0));
  // A second for every source's state to exist, then a 6 s window of 1 s walks.
  sleep_until_ns(t0 + 1'000'000'000ull);
  RunResult r = sb().levee({"suggest", sb().rx_if(), "--window", "6s", "--min-sources", "3", "--json"});
  // Then as text, with the change of the config file the filter was attached with: the
  // rates it learns replace those of the file, which stays as it was.
  const std::string config = dir.path() + "/levee.toml";
  RunResult text = sb().levee({"suggest", sb().rx_if(), "--window", "2s", "--min-sources", "3", "--config", config});
  for (auto& s : senders) s->join();
  ASSERT_EQ(text.code, 0) << text.describe();
  std::printf("%s", text.out.c_str());
  // Each class's rate replaced by the one learnt: 1.5 times its profile's, within 20 %
  // (a sender's interval may hold one packet more under load: 160 for 150).
  std::vector<double> added;
  for (size_t at = text.out.find("\n+rate = "); at != std::string::npos; at = text.out.find("\n+rate = ", at + 1))
    added.push_back(std::stod(text.out.substr(at + 9)));
  ASSERT_EQ(added.size(), std::size(profiles)) << text.out;
  for (size_t i = 0; i < added.size(); ++i)
    EXPECT_NEAR(added[i], 1.5 * profiles[i].pps, 0.2 * 1.5 * profiles[i].pps) << profiles[i].cls << "\n" << text.out;
  EXPECT_NE(text.out.find("-rate = 100\n-burst = 50\n+rate = "), std::string::npos) << text.out;
  // No class of the file has a budget of new sources: each keeps its autopilot, which a
  // number for new_sources would turn off, and a note says so.
  EXPECT_EQ(text.out.find("+new_sources"), std::string::npos) << text.out;
  for (const Profile& p : profiles)
    EXPECT_NE(text.out.find(std::string("note: class ") + p.cls + ": new_sources stays \"auto\""), std::string::npos)
        << text.out;
  ASSERT_EQ(r.code, 0) << r.describe();
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("walks"), 7);
  for (const Profile& p : profiles) {
    json c;
    for (const json& k : j.at("classes"))
      if (k.at("name") == p.cls) c = k;
    ASSERT_FALSE(c.is_null()) << p.cls << ": " << r.out;
    const double p50 = c.at("packets_per_s").at("p50").get<double>();
    report(std::string(p.cls) + "_p50_pps", p50);
    report(std::string(p.cls) + "_suggested_rate", c.at("suggest").at("rate").at("value").get<double>());
    EXPECT_EQ(c.at("sources"), kSources) << p.cls << ": " << c.dump();
    EXPECT_NEAR(p50, p.pps, 0.2 * p.pps) << p.cls << ": " << c.dump();
    EXPECT_EQ(c.at("arrivals"), 0) << p.cls << ": every source was there before the window";
    // A suggestion covers what was seen: p99 x 1.5, rounded up.
    EXPECT_GE(c.at("suggest").at("rate").at("value").get<double>(), 1.5 * c.at("packets_per_s").at("p99").get<double>())
        << c.dump();
    EXPECT_EQ(c.at("suggest").at("rate").at("covers"), 1.0) << c.dump();
    EXPECT_EQ(c.at("admission"), "auto") << c.dump();
    EXPECT_TRUE(c.at("suggest").at("new_sources").is_null()) << c.dump();
  }
}

// --config is read before the window: a FIFO there is refused at once, in one line,
// instead of holding the command in open(2) until something writes it (which nothing does).
TEST_F(Suggest, AFifoAsTheConfigIsRefusedAtOnce) {
  TempDir dir;
  attach({"--config", dir.write("levee.toml", kThreeClasses)});
  const std::string fifo = dir.path() + "/fifo.toml";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  RunOptions o;
  o.timeout = std::chrono::milliseconds(10'000);
  const RunResult r = sb().levee({"suggest", sb().rx_if(), "--window", "2s", "--config", fifo}, o);
  EXPECT_FALSE(r.timed_out) << "levee suggest waited on the FIFO: " << r.describe();
  expect_error(r, 2,
               fifo +
                   ": the config file is a FIFO, not a regular file; give the path of a levee config file (see "
                   "examples/levee.toml)");
}

}  // namespace
}  // namespace lvt
