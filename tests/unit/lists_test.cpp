// lists_test.cpp - the allow, deny and override lists without the kernel: a blocklist
// file as `levee deny import` reads it (and refuses one with nothing valid before it
// touches the kernel), --expires as a duration or a time, and `levee allow/deny/override
// list`'s output.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cli/app.hpp"
#include "cli/blocklist.hpp"
#include "cli/lists.hpp"
#include "export/render_lists.hpp"
#include "export/render_units.hpp"
#include "policy/config.hpp"
#include "unit.hpp"

namespace levee::cli {
namespace {

// 2026-11-22T03:00:00Z
constexpr uint64_t kNow = 1'795'316'400ull * kSec;

// ---- the blocklist file parser ------------------------------------------------------

std::vector<std::string> strings(const std::vector<Cidr>& v) {
  std::vector<std::string> out;
  for (const Cidr& c : v) out.push_back(c.to_string());
  return out;
}

TEST(Blocklist, NetsetStyle) {
  const Blocklist b = parse_blocklist(
      "#\n"
      "# FireHOL-style netset: comments, blank lines\n"
      "#\n"
      "\n"
      "198.51.100.0/24\n"
      "203.0.113.7\n"
      "  2001:db8:bad::/48  \n"
      "\t192.0.2.0/25\t\n");
  EXPECT_EQ(strings(b.entries),
            (std::vector<std::string>{"198.51.100.0/24", "203.0.113.7/32", "2001:db8:bad::/48", "192.0.2.0/25"}));
  EXPECT_EQ(b.repeated, 0u);
  EXPECT_TRUE(b.rejected.empty());
}

TEST(Blocklist, TrailingCommentsSemicolonsCrlfAndBom) {
  const Blocklist b = parse_blocklist(
      "\xEF\xBB\xBF; Spamhaus DROP style\r\n"
      "198.51.100.0/24 ; SBL123456\r\n"
      "203.0.113.0/25 # a note\r\n"
      "2001:db8:1::/48;no space\r\n"
      "\r\n"
      "192.0.2.1");  // no newline at the end
  EXPECT_EQ(strings(b.entries),
            (std::vector<std::string>{"198.51.100.0/24", "203.0.113.0/25", "2001:db8:1::/48", "192.0.2.1/32"}));
  EXPECT_TRUE(b.rejected.empty()) << b.rejected[0].why;
}

TEST(Blocklist, DuplicatesAreCountedOnce) {
  const Blocklist b = parse_blocklist("198.51.100.0/24\n203.0.113.7\n198.51.100.0/24\n203.0.113.7/32\n");
  EXPECT_EQ(strings(b.entries), (std::vector<std::string>{"198.51.100.0/24", "203.0.113.7/32"}));
  EXPECT_EQ(b.repeated, 2u);  // an address and its /32 are one network
}

// inet_pton reads up to a NUL: what follows one must not be dropped unread, neither in
// a file nor in a config string ("\u0000").
TEST(Blocklist, ALineWithANulByteIsRejectedNotCutShort) {
  using namespace std::string_literals;
  const Blocklist b = parse_blocklist("203.0.113.7\0junk\n198.51.100.0/24\0\n2001:db8::1\n"s);
  EXPECT_EQ(strings(b.entries), (std::vector<std::string>{"2001:db8::1/128"}));
  ASSERT_EQ(b.rejected.size(), 2u);
  EXPECT_NE(b.rejected[0].why.find("NUL"), std::string::npos) << b.rejected[0].why;
  EXPECT_FALSE(Cidr::parse("198.51.100.0\0/24"s).ok());
}

TEST(Blocklist, RejectsWithLineNumbersAndReasons) {
  const Blocklist b = parse_blocklist(
      "198.51.100.0/24\n"      // 1 ok
      "198.51.100.300\n"       // 2 not an address
      "203.0.113.7/24\n"       // 3 host bits
      "# comment\n"            // 4
      "198.51.100.0/33\n"      // 5 too long
      "1.2.3.4 5.6.7.8\n"      // 6 two fields
      "0.0.0.0/0\n"            // 7 everything
      "192.0.2.1-192.0.2.9\n"  // 8 a range
      "2001:db8::/129\r\n"     // 9
      "::/0\n"                 // 10
      "2001:db8:1::/48\n");    // 11 ok
  EXPECT_EQ(strings(b.entries), (std::vector<std::string>{"198.51.100.0/24", "2001:db8:1::/48"}));
  ASSERT_EQ(b.rejected.size(), 8u);
  const std::vector<unsigned> lines{2, 3, 5, 6, 7, 8, 9, 10};
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(b.rejected[i].line, lines[i]) << i;
  EXPECT_NE(b.rejected[0].why.find("198.51.100.300"), std::string::npos) << b.rejected[0].why;
  EXPECT_NE(b.rejected[1].why.find("did you mean 203.0.113.0/24"), std::string::npos) << b.rejected[1].why;
  EXPECT_NE(b.rejected[2].why.find("/32"), std::string::npos) << b.rejected[2].why;
  EXPECT_NE(b.rejected[3].why.find("one CIDR per line"), std::string::npos) << b.rejected[3].why;
  EXPECT_NE(b.rejected[4].why.find("every address"), std::string::npos) << b.rejected[4].why;
  EXPECT_EQ(b.rejected[3].text, "1.2.3.4 5.6.7.8");
}

TEST(Blocklist, EmptyAndCommentOnly) {
  EXPECT_TRUE(parse_blocklist("").entries.empty());
  const Blocklist b = parse_blocklist("# nothing\n;\n\n   \n");
  EXPECT_TRUE(b.entries.empty());
  EXPECT_TRUE(b.rejected.empty());
}

// A temporary file with the given contents, removed at scope exit.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char tmpl[] = "/tmp/levee-unit-XXXXXX";
    int fd = mkstemp(tmpl);
    path = tmpl;
    if (fd >= 0) {
      (void)!write(fd, text.data(), text.size());
      close(fd);
    }
  }
  ~TempFile() { std::remove(path.c_str()); }
};

TEST(Blocklist, ImportOfAFileWithNothingValidFailsBeforeTouchingTheKernel) {
  TempFile f("# only comments\n\nnot-a-network\n203.0.113.7/24\n");
  ListArgs a;
  a.kind = LV_LIST_DENY;
  a.op = ListOp::Import;
  a.iface = "eth0";
  a.file = f.path;
  testing::internal::CaptureStdout();
  Status s = lists(a);
  const std::string out = testing::internal::GetCapturedStdout();
  ASSERT_FALSE(s.ok());
  EXPECT_FALSE(s.error().usage);
  EXPECT_NE(s.error().message().find("no valid entry"), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("2 lines rejected"), std::string::npos) << s.error().message();
  EXPECT_NE(out.find("line 3: "), std::string::npos) << out;
  EXPECT_NE(out.find("line 4: "), std::string::npos) << out;

  a.file = "/nonexistent/levee-blocklist";
  Status missing = lists(a);
  ASSERT_FALSE(missing.ok());
  EXPECT_FALSE(missing.error().usage);
  EXPECT_NE(missing.error().message().find("/nonexistent/levee-blocklist"), std::string::npos);
}

// A `levee deny import` of `file` on eth0 that must fail before touching the kernel:
// its error message (empty when it did not fail).
std::string import_error(const std::string& file) {
  ListArgs a;
  a.kind = LV_LIST_DENY;
  a.op = ListOp::Import;
  a.iface = "eth0";
  a.file = file;
  testing::internal::CaptureStdout();
  Status s = lists(a);
  testing::internal::GetCapturedStdout();
  return s.ok() ? "" : s.error().message();
}

TEST(Blocklist, ImportReadsAtMostTheConfigFilesCapAndSaysSo) {
  // An endless device is not read at all: it is neither a file nor a pipe.
  const std::string e = import_error("/dev/zero");
  EXPECT_NE(e.find("/dev/zero: the blocklist is a character device, not a regular file or a pipe"), std::string::npos)
      << e;
  EXPECT_EQ(kMaxInputFileBytes, size_t{64} << 20);
}

TEST(Blocklist, ImportOfADirectorySaysItIsADirectory) {
  const std::string e = import_error("/tmp");
  EXPECT_NE(e.find("/tmp: the blocklist is a directory, not a regular file or a pipe"), std::string::npos) << e;
}

TEST(Blocklist, ImportRefusesAnOverlongLineWholeNamingTheLine) {
  TempFile f("198.51.100.0/24\n# " + std::string(kMaxBlocklistLineBytes, 'x') + "\n203.0.113.7\n");
  const std::string e = import_error(f.path);
  EXPECT_NE(e.find(f.path + ":2: a line longer than 4096 bytes; nothing was added"), std::string::npos) << e;
  const Blocklist b = parse_blocklist("# " + std::string(kMaxBlocklistLineBytes - 2, 'x') + "\n203.0.113.7\n");
  EXPECT_EQ(b.stopped_at, 0u) << "a line of exactly the cap is read";
  EXPECT_EQ(strings(b.entries), std::vector<std::string>{"203.0.113.7/32"});
}

TEST(Blocklist, ImportRefusesMoreEntriesOfAFamilyThanAListHolds) {
  // A list of 3 for the parse; the refusal as import words it for the real capacity.
  const Blocklist b = parse_blocklist("# four\n10.0.0.1\n2001:db8::1\n10.0.0.2\n10.0.0.3\n10.0.0.1\n10.0.0.4\n", 3);
  EXPECT_TRUE(b.full);
  EXPECT_EQ(b.stopped_at, 7u) << "the fourth IPv4 entry; the repeated one does not count";
  EXPECT_FALSE(parse_blocklist("198.18.0.1\n198.18.0.2\n198.18.0.3\n2001:db8::1\n", 3).full);
  const Status s = check_blocklist_limits(b, "big.netset");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("big.netset:7: more than 1,000,000 entries of one family, the capacity of a "
                                     "list; nothing was added"),
            std::string::npos)
      << s.error().message();
  EXPECT_EQ(kMaxBlocklistEntries, size_t{LV_MAX_LIST_ENTRIES});
}

TEST(Blocklist, RejectedLinesPastTheFirstThousandAreCountedNotKept) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "junk\n";
  text += "203.0.113.7\n";
  const Blocklist b = parse_blocklist(text);
  EXPECT_EQ(b.rejected.size(), kRejectedKept);
  EXPECT_EQ(b.rejected_lines, 5000u);
  EXPECT_EQ(b.entries.size(), 1u);
}

TEST(Blocklist, ReadsAPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string text = "198.51.100.0/24\n203.0.113.7\n";
  ASSERT_EQ(write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fds[1]);
  auto r = read_blocklist("/dev/fd/" + std::to_string(fds[0]));
  close(fds[0]);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(*r, text);
}

TEST(Blocklist, AnIpv4MappedEntryIsTheIpv4Entry) {
  const Blocklist b = parse_blocklist("::ffff:198.19.1.200\n198.19.1.200/32\n::ffff:198.19.2.0/120\n");
  EXPECT_EQ(strings(b.entries), (std::vector<std::string>{"198.19.1.200/32", "198.19.2.0/24"}));
  EXPECT_EQ(b.repeated, 1u);
}

// ---- addresses and networks as written ------------------------------------------------

TEST(Cidr, Ipv4MappedIsIpv4) {
  for (auto [text, want] : {std::pair{"::ffff:198.19.1.200", "198.19.1.200/32"},
                            {"::ffff:198.19.1.200/128", "198.19.1.200/32"},
                            {"::FFFF:c613:1c8", "198.19.1.200/32"},
                            {"::ffff:198.19.0.0/112", "198.19.0.0/16"},
                            {"::ffff:0:0/96", "0.0.0.0/0"}}) {
    auto c = Cidr::parse(text);
    ASSERT_TRUE(c.ok()) << text << ": " << c.error().message();
    EXPECT_EQ(c->family, 4) << text;
    EXPECT_EQ(c->to_string(), want) << text;
  }
  // Host bits are judged on the IPv4 network it is.
  auto bits = Cidr::parse("::ffff:198.19.1.200/120");
  ASSERT_FALSE(bits.ok());
  EXPECT_NE(bits.error().message().find("did you mean 198.19.1.0/24?"), std::string::npos) << bits.error().message();
  // Shorter than the mapped range, or another range: IPv6 as written.
  EXPECT_EQ(Cidr::parse("::fffe:0:0/95")->family, 6);
  EXPECT_EQ(Cidr::parse("::198.19.1.200")->family, 6);
  EXPECT_EQ(Cidr::parse("64:ff9b::198.19.1.200")->family, 6);
}

// ---- --expires ----------------------------------------------------------------------

TEST(Expiry, Durations) {
  EXPECT_EQ(parse_expiry("90s", kNow).value(), kNow + 90 * kSec);
  EXPECT_EQ(parse_expiry("30m", kNow).value(), kNow + 1800 * kSec);
  EXPECT_EQ(parse_expiry("2h", kNow).value(), kNow + 7200 * kSec);
  EXPECT_EQ(parse_expiry("1d12h", kNow).value(), kNow + 36 * 3600 * kSec);
  EXPECT_EQ(parse_expiry("1w", kNow).value(), kNow + 7 * 86400 * kSec);
  EXPECT_EQ(parse_expiry("1h30m15s", kNow).value(), kNow + 5415 * kSec);
  for (const char* bad : {"", "2", "h", "2x", "1.5h", "-2h", "2h ", "0s", "0h0m", "99999d", "2H"})
    EXPECT_FALSE(parse_expiry(bad, kNow).ok()) << bad;
}

TEST(Expiry, Rfc3339) {
  EXPECT_EQ(parse_expiry("2026-12-01T00:00:00Z", kNow).value(), 1'796'083'200ull * kSec);
  EXPECT_EQ(parse_expiry("2026-12-01t00:00:00z", kNow).value(), 1'796'083'200ull * kSec);
  EXPECT_EQ(parse_expiry("2026-12-01T02:00:00+02:00", kNow).value(), 1'796'083'200ull * kSec);
  EXPECT_EQ(parse_expiry("2026-11-30T19:00:00-05:00", kNow).value(), 1'796'083'200ull * kSec);
  EXPECT_EQ(parse_expiry("2026-12-01T00:00:00.25Z", kNow).value(), 1'796'083'200ull * kSec + kSec / 4);
  EXPECT_EQ(parse_expiry("2028-02-29T00:00:00Z", kNow).value(), 1'835'395'200ull * kSec);  // a leap day
  for (const char* bad : {"2026-12-01", "2026-12-01T00:00:00", "2026-13-01T00:00:00Z", "2027-02-29T00:00:00Z",
                          "2026-12-01T24:00:00Z", "2026-12-01T00:00:00+2:00", "2026-12-01T00:00:00Zjunk"})
    EXPECT_FALSE(parse_expiry(bad, kNow).ok()) << bad;
  auto past = parse_expiry("2026-11-22T02:59:59Z", kNow);
  ASSERT_FALSE(past.ok());
  EXPECT_TRUE(past.error().usage);
  EXPECT_NE(past.error().message().find("in the past"), std::string::npos);
  EXPECT_TRUE(parse_expiry("2046-11-22T03:00:00Z", kNow).ok());   // twenty years: within the limit
  EXPECT_FALSE(parse_expiry("2127-11-22T03:00:00Z", kNow).ok());  // more than 100 years (kMaxDurationNs)
  // One reader of durations: weeks too, as in the config file.
  EXPECT_EQ(parse_expiry("1w", kNow).value(), kNow + 7 * 86400 * kSec);
}

// Past 2554 a time no longer fits unsigned nanoseconds since 1970: it must be too far
// away, never wrap around into a time within the next 100 years.
TEST(Expiry, TimesPastTheNanosecondCounterAreTooFarNotWrapped) {
  for (const char* far : {"9999-12-31T23:59:59Z", "8904-12-31T23:59:60-05:30", "2555-01-01T00:00:00Z"}) {
    auto t = parse_expiry(far, kNow);
    ASSERT_FALSE(t.ok()) << far << " read as " << t.value();
    EXPECT_NE(t.error().what.find("more than 100 years away"), std::string::npos) << t.error().what;
  }
}

// ---- the output of allow/deny/override list -----------------------------------------

TEST(ListOutput, TimesAndSpans) {
  EXPECT_EQ(format_time(1'796'083'200ull * kSec), "2026-12-01T00:00:00Z");
  EXPECT_EQ(format_span(0), "0s");
  EXPECT_EQ(format_span(42), "42s");
  EXPECT_EQ(format_span(3600), "1h");
  EXPECT_EQ(format_span(7500), "2h 5m");
  EXPECT_EQ(format_span(9 * 86400 + 3 * 3600 + 59), "9d 3h");
  EXPECT_EQ(format_expiry(kNow + 7200 * kSec, kNow), "in 2h");
  EXPECT_EQ(format_expiry(kNow + 7200 * kSec - 1, kNow), "in 2h");  // rounded up: just added for 2h
  EXPECT_EQ(format_expiry(kNow - 180 * kSec, kNow), "expired 3m ago");
}

ListRow row(const char* cidr, lv_list_kind kind, uint64_t expires = 0, lv_list_origin origin = LV_ORIGIN_CLI,
            std::string ov = "") {
  return ListRow{Cidr::parse(cidr).value(), kind, std::move(ov), expires, origin};
}

TEST(ListOutput, JsonFields) {
  auto j = list_json("eth0", LV_LIST_DENY,
                     {row("203.0.113.0/24", LV_LIST_DENY, kNow + 7200 * kSec, LV_ORIGIN_IMPORT),
                      row("2001:db8:bad::/48", LV_LIST_DENY, 0, LV_ORIGIN_CONFIG)},
                     kNow);
  EXPECT_EQ(j["interface"], "eth0");
  EXPECT_EQ(j["kind"], "deny");
  ASSERT_EQ(j["entries"].size(), 2u);
  const auto& e = j["entries"][0];
  for (const char* k :
       {"cidr", "family", "kind", "override", "expires", "expires_unix", "expires_in", "expired", "origin"})
    EXPECT_TRUE(e.contains(k)) << k;
  EXPECT_EQ(e["cidr"], "203.0.113.0/24");
  EXPECT_EQ(e["family"], 4);
  EXPECT_EQ(e["expires"], "2026-11-22T05:00:00Z");
  EXPECT_EQ(e["expires_unix"], kNow / kSec + 7200);
  EXPECT_EQ(e["expires_in"], 7200);
  EXPECT_EQ(e["expired"], false);
  EXPECT_EQ(e["origin"], "import");
  EXPECT_TRUE(e["override"].is_null());
  const auto& f = j["entries"][1];
  EXPECT_EQ(f["family"], 6);
  EXPECT_TRUE(f["expires"].is_null());
  EXPECT_TRUE(f["expires_in"].is_null());
  EXPECT_EQ(f["origin"], "config");

  auto o =
      list_json("eth0", LV_LIST_OVERRIDE, {row("192.0.2.0/24", LV_LIST_OVERRIDE, 0, LV_ORIGIN_CLI, "partner")}, kNow);
  EXPECT_EQ(o["entries"][0]["override"], "partner");
}

TEST(ListOutput, Text) {
  EXPECT_EQ(list_text("eth0", LV_LIST_ALLOW, {}, kNow), "eth0: no allow entries\n");
  const std::string t = list_text(
      "eth0", LV_LIST_DENY,
      {row("203.0.113.0/24", LV_LIST_DENY, kNow + 7200 * kSec), row("198.51.100.0/24", LV_LIST_DENY, kNow - 60 * kSec)},
      kNow);
  EXPECT_NE(t.find("eth0: 2 deny entries"), std::string::npos) << t;
  EXPECT_NE(t.find("2026-11-22T05:00:00Z (in 2h)"), std::string::npos) << t;
  EXPECT_NE(t.find("(expired 1m ago)"), std::string::npos) << t;
  EXPECT_NE(t.find("cli"), std::string::npos) << t;
}

}  // namespace
}  // namespace levee::cli
