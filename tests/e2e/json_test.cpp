// json_test.cpp - the JSON of every command, run for real against an attached interface
// with classes, a network limit, bans, lists of each kind and an override, after traffic
// that got a source banned: each output has exactly the fields docs/JSON.md describes,
// of the types it gives (stats and top also with --watch; the events of a ban as
// levee events prints them; suggest with a diff of the file).
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "e2e.hpp"
#include "json_doc.hpp"

namespace lvt {
namespace {

using nlohmann::json;
using Json = E2e;

constexpr const char* kPolicy = R"([[class]]
name = "udp"
match.proto = "udp"
match.port = 5001
rate = 100
burst = 20
ban = "2s"
network = { prefix4 = 24, prefix6 = 48, rate = "10k", burst = "1k" }

[[class]]
name = "other-udp"
match.proto = "udp"
new_sources = 100
rate = 1000
burst = 100

[default]
rate = "10k"
burst = "1k"

[[override]]
name = "partner"
networks = ["192.0.2.0/24", "2001:db8:200::/48"]
rate = "20k"
burst = "2k"
classes = ["udp"]

[lists]
allow = ["198.51.100.0/26"]
deny = ["203.0.113.0/24", { cidr = "198.51.100.128/25", expires = "7d" }]
)";

// Checks each output of one command against its table of docs/JSON.md.
class Described {
 public:
  explicit Described(std::string md) : md_(std::move(md)) {}

  void expect(const std::string& what, const std::string& table, const std::vector<json>& outputs) const {
    ASSERT_FALSE(outputs.empty()) << what << " printed nothing";
    expect(what, lvdocs::json_schema(md_, table), outputs);
  }
  void expect(const std::string& what, const lvdocs::JsonSchema& s, const std::vector<json>& outputs) const {
    lvdocs::JsonCheck c;
    for (const json& j : outputs) lvdocs::check_json(j, s, c);
    EXPECT_TRUE(c.problems.empty()) << what << " differs from docs/JSON.md:\n" << lvdocs::joined(c.problems);
  }
  // An event against the fields every event has and those of its type.
  void expect_event(const json& e) const {
    lvdocs::JsonSchema s = lvdocs::json_schema(md_, "events");
    const std::string type = e.value("type", "");
    if (md_.find("<!-- json: events." + type + " -->") != std::string::npos)
      s = lvdocs::merged(s, lvdocs::json_schema(md_, "events." + type));
    expect("levee events --json (" + type + ")", s, {e});
  }

 private:
  std::string md_;
};

// The lines a command printed, each a JSON object; the command must succeed.
std::vector<json> outputs_of(Sandbox& sb, const std::vector<std::string>& args) {
  RunResult r = sb.levee(args);
  EXPECT_EQ(r.code, 0) << r.describe();
  return json_lines(r.out);
}

TEST_F(Json, EveryCommandMatchesJsonMd) {
  const Described doc(lvdocs::read_doc("JSON.md"));
  TempDir dir;
  const std::string config = dir.write("levee.toml", kPolicy);
  attach({"--config", config});
  const std::string& ifname = sb().rx_if();
  ASSERT_EQ(sb().levee({"deny", "add", ifname, "203.0.113.7", "--expires", "1h"}).code, 0);
  Child events = sb().levee_start({"events", ifname, "--json", "--duration", "20"});
  usleep(300'000);
  // A source over its limit in "udp" (banned), others within theirs.
  const std::string flooder = Addrs::src4()[0];
  send_udp(sb(), flooder, 2000, 0.5);
  send_udp(sb(), Addrs::src4()[1], 20, 0.3);

  doc.expect("levee stats --json", "stats", outputs_of(sb(), {"stats", ifname, "--json"}));
  doc.expect("levee stats --watch --json", "stats",
             outputs_of(sb(), {"stats", ifname, "--json", "--watch", "--interval", "0.1", "--count", "2"}));
  // status: the entry of our interface (other filters on this machine are not ours).
  const std::vector<json> status = outputs_of(sb(), {"status", "--json"});
  ASSERT_EQ(status.size(), 1u);
  json ours = json::array();
  for (const json& e : status[0].at("interfaces"))
    if (e.value("interface", "") == ifname) ours.push_back(e);
  ASSERT_EQ(ours.size(), 1u);
  doc.expect("levee status --json", "status", {json{{"interfaces", ours}}});
  doc.expect("levee show --json", "show",
             {sb().show(flooder), sb().show("192.0.2.9"), sb().show("203.0.113.7"), sb().show("198.18.200.1")});
  doc.expect("levee top --json", "top", outputs_of(sb(), {"top", ifname, "--json"}));
  doc.expect("levee top --networks --watch --json", "top",
             outputs_of(sb(), {"top", ifname, "--json", "--networks", "--watch", "--interval", "0.2", "--count", "2"}));
  for (const char* kind : {"allow", "deny", "override"})
    doc.expect(std::string("levee ") + kind + " list --json", "list",
               outputs_of(sb(), {kind, "list", ifname, "--json"}));
  doc.expect("levee suggest --json --config", "suggest",
             outputs_of(sb(), {"suggest", ifname, "--json", "--window", "400ms", "--interval", "200ms", "--min-sources",
                               "1", "--config", config}));
  doc.expect("levee prune --json", "prune", outputs_of(sb(), {"prune", ifname, "--json"}));

  // The ban ends 2 s after the flood; its end is found within a second.
  usleep(3'500'000);
  RunResult ev = events.stop();
  EXPECT_EQ(ev.code, 0) << ev.describe();
  std::set<std::string> types;
  for (const json& e : json_lines(ev.out)) {
    doc.expect_event(e);
    types.insert(e.value("type", ""));
  }
  for (const char* t : {"limited", "banned", "ban_ended"}) EXPECT_TRUE(types.contains(t)) << t << ": " << ev.out;
}

}  // namespace
}  // namespace lvt
