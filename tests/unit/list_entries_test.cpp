// The list entry that decides for one address, as `levee show` reports it: found and
// judged as the datapath does (bpf/shared/rules.h), over lists as compile() makes them. An
// expired entry falls back to the entries covering it in the order the datapath takes
// them, never to whichever covering entry happens not to expire.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "datapath/list_entries.hpp"
#include "datapath/policy_map.hpp"
#include "policy/compile.hpp"
#include "policy/policy.hpp"

namespace levee {
namespace {

constexpr uint64_t kSec = 1'000'000'000;
// The controller's clocks when it compiled the lists.
const Clocks kClocks{4'000'000, 1'800'000'000 * kSec, 1'000 * kSec};

Cidr cidr(std::string_view text) {
  auto c = Cidr::parse(text);
  if (!c) throw std::invalid_argument(std::string(text));
  return *c;
}

// An entry; `expires_in` seconds after the lists were compiled (0: never).
ListEntry entry(std::string_view net, lv_list_kind kind, uint64_t expires_in = 0, std::string override_name = {}) {
  ListEntry e;
  e.cidr = cidr(net);
  e.kind = kind;
  e.override_name = std::move(override_name);
  e.expires_unix_ns = expires_in ? kClocks.now_unix_ns + expires_in * kSec : 0;
  return e;
}

Lists compiled(std::vector<ListEntry> entries) {
  Policy p;
  ClassSpec c;
  c.name = "default";
  c.packets = {100, 10};
  p.classes = {c};
  OverrideSpec o;
  o.name = "partner";
  o.packets = {1000, 100};
  p.overrides = {o};
  p.lists = std::move(entries);
  CompiledPolicy cp = compile(p, kClocks);
  return Lists{std::move(cp.list4), std::move(cp.list6)};
}

// The deciding entry for `addr`, `at` seconds after the lists were compiled, as
// "kind network" ("none": limited by its class).
std::string decides(const Lists& lists, std::string_view addr, uint64_t at) {
  const std::optional<AnyEntry> e = deciding_entry(lists, cidr(addr), kClocks.now_mono_ns + at * kSec);
  if (!e) return "none";
  const char* kind = e->value.kind == LV_LIST_ALLOW ? "allow" : e->value.kind == LV_LIST_DENY ? "deny" : "override";
  return std::string(kind) + " " + e->cidr.to_string();
}

// An allow network, a deny network inside it, a deny host inside that, per family.
struct Nested {
  std::string allow, deny, host;
  std::string addr, neighbour, outside;  // the host; another in the deny network; one only in the allow
};
const Nested kNested[] = {
    {"198.18.0.0/16", "198.18.7.0/24", "198.18.7.7/32", "198.18.7.7", "198.18.7.8", "198.18.8.1"},
    {"2001:db8::/32", "2001:db8:7::/48", "2001:db8:7::7/128", "2001:db8:7::7", "2001:db8:7::8", "2001:db8:8::1"},
};

// An expired deny /32 inside a deny /24 that expires later, inside an allow /16 that
// never does: the datapath drops (the /24 decides) until the /24 expires too. (`levee
// show` once said "allow" here: it fell back to the nearest entry without an expiry.)
TEST(DecidingListEntry, AnExpiredDenyFallsBackToTheDenyCoveringItWhileThatIsInForce) {
  for (const Nested& n : kNested) {
    SCOPED_TRACE(n.host);
    const Lists lists =
        compiled({entry(n.allow, LV_LIST_ALLOW), entry(n.deny, LV_LIST_DENY, 20), entry(n.host, LV_LIST_DENY, 10)});
    EXPECT_EQ(decides(lists, n.addr, 5), "deny " + n.host);
    EXPECT_EQ(decides(lists, n.addr, 15), "deny " + n.deny);
    EXPECT_EQ(decides(lists, n.addr, 25), "allow " + n.allow);
    EXPECT_EQ(decides(lists, n.neighbour, 15), "deny " + n.deny);
    EXPECT_EQ(decides(lists, n.outside, 15), "allow " + n.allow);
  }
}

TEST(DecidingListEntry, AnExpiredEntryNothingCoversLeavesTheAddressToItsClass) {
  const Lists lists = compiled({entry("198.18.7.7/32", LV_LIST_DENY, 10), entry("198.18.9.0/24", LV_LIST_DENY, 10)});
  EXPECT_EQ(decides(lists, "198.18.7.7", 5), "deny 198.18.7.7/32");
  EXPECT_EQ(decides(lists, "198.18.7.7", 15), "none");
  EXPECT_EQ(decides(lists, "198.18.9.1", 15), "none");
  EXPECT_EQ(decides(lists, "198.18.8.1", 5), "none") << "on no list";
}

TEST(DecidingListEntry, AnExpiredDenyInsideAnOverrideIsLimitedByTheOverride) {
  const Lists lists =
      compiled({entry("198.18.7.0/24", LV_LIST_OVERRIDE, 0, "partner"), entry("198.18.7.7/32", LV_LIST_DENY, 10)});
  const std::optional<AnyEntry> e = deciding_entry(lists, cidr("198.18.7.7"), kClocks.now_mono_ns + 15 * kSec);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->cidr, cidr("198.18.7.0/24"));
  EXPECT_EQ(e->value.kind, LV_LIST_OVERRIDE);
  EXPECT_EQ(e->value.override_id, 0u) << "partner is override 0";
  EXPECT_EQ(e->value.expires_ns, 0u);
}

// The most specific entry decides, whatever the kinds around it.
TEST(DecidingListEntry, TheMostSpecificEntryInForceDecides) {
  const Lists lists = compiled({entry("198.18.0.0/16", LV_LIST_DENY), entry("198.18.7.0/24", LV_LIST_ALLOW),
                                entry("198.18.7.7/32", LV_LIST_DENY, 10)});
  EXPECT_EQ(decides(lists, "198.18.7.7", 5), "deny 198.18.7.7/32");
  EXPECT_EQ(decides(lists, "198.18.7.7", 15), "allow 198.18.7.0/24");
  EXPECT_EQ(decides(lists, "198.18.7.8", 5), "allow 198.18.7.0/24");
  EXPECT_EQ(decides(lists, "198.18.8.8", 5), "deny 198.18.0.0/16");
}

}  // namespace
}  // namespace levee
