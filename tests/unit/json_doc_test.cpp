// json_doc_test.cpp - the JSON of every command against docs/JSON.md, the one place it
// is described: each renderer's output, once with every object it may hold filled and
// once with each of them null or empty, has exactly the fields the doc describes, of the
// types it gives, and every field the doc describes is printed by some output. And the
// check itself: it finds a field left out, one added, and one of another type.
// (The real commands against an attached interface: e2e Json.EveryCommandMatchesJsonMd.)
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/event_types.hpp"
#include "core/reasons.hpp"
#include "export/events.hpp"
#include "export/render_lists.hpp"
#include "export/render_prune.hpp"
#include "export/render_show.hpp"
#include "export/render_stats.hpp"
#include "export/render_status.hpp"
#include "export/render_suggest.hpp"
#include "export/top.hpp"
#include "json_doc.hpp"
#include "policy/compile.hpp"
#include "unit.hpp"

namespace levee {
namespace {

using nlohmann::json;

const std::string& json_md() {
  static const std::string text = lvdocs::read_doc("JSON.md");
  return text;
}

// Each output against the table `name`; every field of the table seen in one of them.
void expect_described(const std::string& name, const std::vector<json>& outputs) {
  const lvdocs::JsonSchema s = lvdocs::json_schema(json_md(), name);
  lvdocs::JsonCheck c;
  for (const json& j : outputs) lvdocs::check_json(j, s, c);
  EXPECT_TRUE(c.problems.empty()) << name << " differs from docs/JSON.md:\n" << lvdocs::joined(c.problems);
  EXPECT_EQ(lvdocs::unseen(s, c.seen), "") << name << ": described in docs/JSON.md, printed by no output above";
}

constexpr uint64_t kNowMono = 5'000 * kSec;
constexpr uint64_t kNowUnix = 1'795'316'400ull * kSec;

// ---- the check itself -------------------------------------------------------------

TEST(JsonDoc, FindsFieldsLeftOutAddedAndOfAnotherType) {
  const std::string md = R"(<!-- json: t -->
| field | type | meaning |
|---|---|---|
| `a`, `b` | integer | |
| `n` | number or null | |
| `o` | object or absent | |
| `o.*` | string | |
| `l` | array | |
| `l[].x` | boolean | |
)";
  const lvdocs::JsonSchema s = lvdocs::json_schema(md, "t");
  auto problems = [&](const json& j) {
    lvdocs::JsonCheck c;
    lvdocs::check_json(j, s, c);
    return lvdocs::joined(c.problems);
  };
  EXPECT_EQ(problems({{"a", 1}, {"b", 2}, {"n", 1.5}, {"l", {{{"x", true}}}}}), "");
  EXPECT_EQ(problems({{"a", 1}, {"b", 2}, {"n", nullptr}, {"o", {{"k", "v"}}}, {"l", json::array()}}), "");
  EXPECT_EQ(problems({{"a", 1}, {"n", 2}, {"l", json::array()}}), "missing field b\n");
  EXPECT_EQ(problems({{"a", 1}, {"b", 2}, {"c", 3}, {"n", 2}, {"l", json::array()}}), "undescribed field c\n");
  EXPECT_EQ(problems({{"a", 1.5}, {"b", 2}, {"n", 2}, {"l", json::array()}}), "a is number: 1.5\n");
  EXPECT_EQ(problems({{"a", 1}, {"b", 2}, {"n", 2}, {"o", {{"k", 1}}}, {"l", {{{"x", 1}, {"y", 2}}}}}),
            "l[].x is integer: 1\nundescribed field l[].y\no.* is integer: 1\n");
  lvdocs::JsonCheck c;
  lvdocs::check_json({{"a", 1}, {"b", 2}, {"n", 2}, {"l", json::array()}}, s, c);
  EXPECT_EQ(lvdocs::unseen(s, c.seen), "l[].x\no\no.*\n");
  EXPECT_THROW(lvdocs::json_schema("<!-- json: u -->\n| f | t | m |\n|---|---|---|\n| `a` | text | |\n", "u"),
               std::runtime_error);
  EXPECT_THROW(lvdocs::json_schema(md, "none"), std::runtime_error);
}

// ---- stats ------------------------------------------------------------------------

TEST(JsonDoc, Stats) {
  Counters c{};
  for (const ReasonInfo& r : kReasons) c.by_reason[r.id] = {r.id + 1, 64 * (r.id + 1)};
  c.would[LV_R_RATE] = {5, 320};
  c.handoff[LV_HO_HANDED] = 3;
  c.marks_capped = 2;
  c.by_class[1].passed = {10, 640};
  const json full = stats_json("eth0", c, {{"dns", 1}, {"default", 0}});
  expect_described("stats", {full, stats_json("eth0", Counters{})});
  // The keys that are names: every reason of its verdict, every would-be drop.
  for (const ReasonInfo& r : kReasons) {
    EXPECT_TRUE(full.at(lv_reason_drops(r.id) ? "dropped" : "passed").contains(r.name)) << r.name;
    EXPECT_EQ(full.at("would_drop").contains(r.name), would_drop_reason(r.id)) << r.name;
  }
}

// ---- status -----------------------------------------------------------------------

IfaceStatus rich_status() {
  ClassSpec web;
  web.name = "web";
  web.packets = {100, 10};
  web.bytes = {10'000, 1'000};
  web.network.packets = {1'000, 100};
  web.total.packets = {50'000, 5'000};
  web.ban.ban_ns = 2 * kSec;
  ClassSpec def;
  def.name = "default";
  def.packets = {100, 10};
  def.new_sources = {500, 50};
  def.admission = Admission::Budget;
  def.monitor = true;
  IfaceStatus s;
  s.iface = "eth0";
  s.mode = "native";
  s.prog_id = 42;
  s.source = "/etc/levee/levee.toml";
  s.now_ns = kNowMono;
  for (const ClassSpec& c : {web, def}) {
    s.classes.push_back(compile_class(c, 4'000'000, 2));
    s.admitted.push_back(7);
  }
  s.class_ids = {3, 0};
  lv_guard g{};
  g.cost = 250'000;
  g.baseline = 812u << LV_GUARD_FP;
  g.engaged_ns = kNowMono - 10 * kSec;
  g.last_over_ns = kNowMono - kMs;
  s.guards = {g, lv_guard{}};
  IfaceStatus::Escalation e{};
  e.key.addr[2] = htonl(0xffff);
  e.key.addr[3] = htonl(0xc6120000u);
  e.key.family = LV_AF_INET | LV_KEY_WATCH;
  e.key.class_id = 3;
  e.watch.escalated_ns = kNowMono - kSec;
  s.escalated.push_back(e);
  lv_override o{};
  o.pkt = compile_packet_limit({10'000, 1'000});
  std::snprintf(o.name, sizeof o.name, "partner");
  s.overrides.push_back(o);
  s.policy_flags = LV_POL_REFUSE_FULL;
  s.full_at = 999'000;
  s.publish = IfaceStatus::Publish{"edge-1", true, 12, 0, 1, 0};
  s.bouncer = IfaceStatus::Bouncer{false, 3 * kSec, 2, 1, "the Local API answered 403"};
  IfaceStatus::SynAuth y;
  y.proxying = true;
  y.tcp_off = LV_TCP_OFF_TS;
  y.tc = TcPlace{0x1ee, 1};
  y.tc_present = true;
  y.marks_per_network = 256;
  s.syn = y;
  s.known_good = GoodFill{0.01, 1e-6};
  s.good_epoch = 3;
  s.max_sources = 1'000'000;
  s.max_bans = 65'536;
  return s;
}

TEST(JsonDoc, Status) {
  IfaceStatus plain = rich_status();
  plain.classes.pop_back();
  plain.classes[0] = compile_class(ClassSpec{"default", {}, {100, 10}, {}, 32, 64, {}}, 1);
  plain.guards.clear();
  plain.escalated.clear();
  plain.publish.reset();
  plain.bouncer = IfaceStatus::Bouncer{true, kSec, 0, 0, ""};
  plain.syn->tc = TcPlace{};
  plain.known_good.reset();
  plain.policy_flags = 0;
  expect_described("status", {status_json({rich_status()}), status_json({plain}), status_json({})});
  IfaceStatus bad;
  bad.iface = "eth1";
  bad.problem = "eth1 was attached by a levee with state layout 5, this one uses 10";
  expect_described("status.unreadable", {status_json({bad})});
}

// ---- show -------------------------------------------------------------------------

ShowClass show_class(const ClassSpec& spec) {
  ShowClass c;
  c.name = spec.name;
  c.class_id = 3;
  c.cls = compile_class(spec, 1);
  c.pkt = c.cls.pkt;
  c.bytes = c.cls.bytes;
  c.now_ns = kNowMono;
  c.state.ready_ns = kNowMono + kMs;
  c.state.passed = (uint64_t{640} << 32) | 10;
  return c;
}

TEST(JsonDoc, Show) {
  ClassSpec spec{"dns", {}, {100, 10}, {10'000, 1'000}, 32, 64, {}};
  spec.network.packets = {1'000, 100};
  ShowClass full = show_class(spec);
  full.override_name = "partner";
  full.network = full.state;
  full.probation = full.state;
  full.known_good = true;
  full.watch = lv_watch{};
  full.watch->escalated_ns = kNowMono - kSec;
  full.ban = lv_ban{};
  full.ban->until_ns = kNowMono + kSec;
  full.ban->since_ns = kNowMono - kSec;
  full.ban->offences = 1;
  ShowResult r;
  r.address = "198.51.100.7";
  r.now_ns = kNowMono;
  r.list =
      ListRow{Cidr::parse("198.51.100.0/24").value(), LV_LIST_OVERRIDE, "partner", kNowUnix + 60 * kSec, LV_ORIGIN_CLI};
  r.ban_all = lv_ban{};
  r.ban_all->since_ns = kNowMono - kSec;
  r.classes = {full, show_class(ClassSpec{"default", {}, {100, 10}, {}, 32, 64, {}})};
  ShowResult none;
  none.address = "192.0.2.1";
  expect_described("show", {show_json("eth0", r, kNowUnix), show_json("eth0", none, kNowUnix)});
}

// ---- top --------------------------------------------------------------------------

TEST(JsonDoc, Top) {
  TopRow src;
  src.address = "198.51.100.7";
  src.prefix = 32;
  src.class_name = "dns";
  src.tokens = 5;
  src.byte_tokens = 500;
  src.override_name = "partner";
  src.delta = TopCounts{1, 2, 3, 4};
  TopRow net = src;
  net.network = true;
  net.tokens.reset();
  net.byte_tokens.reset();
  net.override_name.clear();
  net.delta.reset();
  TopView watched;
  watched.iface = "eth0";
  watched.rows = {src, net};
  watched.with_networks = true;
  watched.interval = 1.0;
  TopView first;
  first.iface = "eth0";
  expect_described("top", {top_json(watched), top_json(first)});
}

// ---- prune, lists ---------------------------------------------------------------------

TEST(JsonDoc, Prune) {
  PruneResult refuse;
  refuse.refuse = true;
  refuse.count = 10;
  refuse.full_at = 999;
  refuse.seconds = 0.25;
  expect_described("prune", {prune_json("eth0", 600 * kSec, refuse), prune_json("eth0", kSec, PruneResult{})});
}

TEST(JsonDoc, Lists) {
  const std::vector<ListRow> rows = {
      {Cidr::parse("203.0.113.0/24").value(), LV_LIST_DENY, "", kNowUnix + 60 * kSec, LV_ORIGIN_CLI},
      {Cidr::parse("2001:db8::/48").value(), LV_LIST_OVERRIDE, "partner", 0, LV_ORIGIN_CONFIG}};
  expect_described("list", {list_json("eth0", LV_LIST_DENY, rows, kNowUnix), list_json("eth0", LV_LIST_ALLOW, {}, 0)});
}

// ---- suggest ----------------------------------------------------------------------

TEST(JsonDoc, Suggest) {
  SuggestReport r;
  r.iface = "eth0";
  ClassSuggestion budget;
  budget.name = "dns";
  budget.admission = Admission::Budget;
  budget.rate = budget.burst = budget.bytes_rate = budget.bytes_burst = budget.new_sources = Suggested{10, 0.99};
  ClassSuggestion kept = budget;
  kept.name = "web";
  kept.admission = Admission::Auto;
  kept.new_sources_kept = true;
  ClassSuggestion few;
  few.name = "default";
  r.classes = {budget, kept, few};
  const ConfigDiff diff{"--- f\n+++ f\n", {"class web: new_sources stays \"auto\""}};
  expect_described("suggest", {suggest_json(r, &diff, "f"), suggest_json(r)});
}

// ---- events -----------------------------------------------------------------------

TEST(JsonDoc, EveryEventType) {
  const lvdocs::JsonSchema common = lvdocs::json_schema(json_md(), "events");
  std::set<std::string> seen;
  for (const EventTypeInfo& t : kEventTypes) {
    lvdocs::JsonSchema s = common;
    if (json_md().find("<!-- json: events." + std::string(t.name) + " -->") != std::string::npos)
      s = lvdocs::merged(common, lvdocs::json_schema(json_md(), "events." + std::string(t.name)));
    EventRecord e;
    e.type = t.id;
    e.time_unix_ns = kNowUnix;
    e.iface = "eth0";
    if (t.id != LV_EV_ENGAGED && t.id != LV_EV_RELEASED) e.address = "198.51.100.0/24";
    e.class_name = t.id == LV_EV_LIMITED ? "" : "dns";
    if (t.id != LV_EV_BAN_ENDED) e.reason = LV_R_RATE;
    lvdocs::JsonCheck c;
    lvdocs::check_json(event_json(e), s, c);
    EXPECT_TRUE(c.problems.empty()) << t.name << " differs from docs/JSON.md:\n" << lvdocs::joined(c.problems);
    seen.insert(c.seen.begin(), c.seen.end());
  }
  EXPECT_EQ(lvdocs::unseen(common, seen), "") << "described in docs/JSON.md, printed by no event";
}

}  // namespace
}  // namespace levee
