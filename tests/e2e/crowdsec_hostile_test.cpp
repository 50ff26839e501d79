// crowdsec_hostile_test.cpp - `levee run`'s CrowdSec clients (the bouncer's pull, the
// machine's login and alerts) against a Local API of the test's own that misbehaves
// (fake_lapi.hpp), and what the operator is told: a FIFO as the key file on SIGHUP.
//
// The fake Local API and levee run both run in the sandbox's receiver namespace, on its
// loopback; nothing listens or sends outside it.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "e2e.hpp"
#include "fake_lapi.hpp"
#include "levee_run.hpp"

namespace lvt {
namespace {

constexpr int kFakeLapiPort = 18081;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// How many times `what` is in `text` (a daemon line each, in the tests below).
size_t lines_with(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
bool has_line(const std::string& text, const std::string& what) { return lines_with(text, what) > 0; }

class CrowdsecHostile : public E2e {
 protected:
  // A loose default class and [crowdsec] pulling `lapi` every second with a key file of
  // mode 600; `extra`: more keys of [crowdsec].
  std::string config(const FakeLapi& lapi, const std::string& extra = "") {
    key_ = dir_.write("crowdsec.key", "levee0fake0key\n");
    chmod(key_.c_str(), 0600);
    return dir_.write("levee.toml", "[default]\nrate = 100\nburst = 10\n\n[crowdsec]\nurl = \"" + lapi.url() +
                                        "\"\napi_key_file = \"" + key_ + "\"\npoll = \"1s\"\n" + extra);
  }
  TempDir dir_;
  std::string key_;
};

// A FIFO given as the key file, then SIGHUP: the daemon says so in one line and its loop
// goes on. Before, open(2) of the FIFO held the main loop (no events written, no walk,
// no key rotation) until the next signal.
TEST_F(CrowdsecHostile, SighupWithAFifoAsTheKeyFileSaysSoAndTheLoopGoesOn) {
  FakeLapi lapi(sb().rx_ns(), kFakeLapiPort, FakeLapi::behave);
  LeveeRun d(sb(), {"--config", config(lapi)});
  d.wait_ready();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(eventually([&] { return d.sample("levee_crowdsec_up") == 1; }, 5'000)) << d.scrape().body;

  ASSERT_EQ(unlink(key_.c_str()), 0);
  ASSERT_EQ(mkfifo(key_.c_str(), 0600), 0);
  d.signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return d.sample("levee_reloads_total", {{"result", "success"}}) == 2; }, 5'000));
  // The loop writes the datapath's events: a source over its limit is one.
  const double events = d.sample("levee_events_total");
  send_udp(sb(), Addrs::src4()[0], 2000, 0.3);
  EXPECT_TRUE(eventually([&] { return d.sample("levee_events_total") > events; }, 5'000))
      << "no event written after the SIGHUP: the loop is held";
  EXPECT_EQ(d.sample("levee_crowdsec_up"), 1) << "the running bouncer keeps its key and pulls on";
  const RunResult r = d.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_NE(r.err.find("crowdsec: " + key_ +
                       ": the CrowdSec key file is a FIFO, not a regular file; write the key `cscli bouncers add "
                       "levee -o raw` printed into it, alone, mode 600\n"),
            std::string::npos)
      << r.err;
}

// Sends a status line, then one header line a second, never ending its head.
void slow_loris(LapiConn& c, const LapiCall&) {
  if (!c.send("HTTP/1.1 200 OK\r\n")) return;
  for (int i = 0; c.pause(1'000) && c.send("X-Slow-" + std::to_string(i) + ": 1\r\n"); ++i) {
  }
  c.close();
}

// A Local API that sends a header line a second: each pull ends at its deadline
// ([crowdsec] timeout = "2s"), and `levee status` and the metrics say so; when it answers
// again, the pulls work again. Before, the first pull never ended: the metrics said up,
// nothing was said, and no decision could come.
TEST_F(CrowdsecHostile, ASlowLorisLocalApiEndsEachPullAtItsDeadlineAndStatusSaysSo) {
  FakeLapi lapi(sb().rx_ns(), kFakeLapiPort, slow_loris);
  LeveeRun d(sb(), {"--config", config(lapi, "timeout = \"2s\"\n")});
  d.wait_ready();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(eventually([&] { return d.sample("levee_crowdsec_pull_timeouts_total") >= 2; }, 15'000))
      << d.scrape().body;
  EXPECT_EQ(d.sample("levee_crowdsec_up"), 0);
  EXPECT_GE(d.sample("levee_crowdsec_pulls_total", {{"result", "failure"}}), 2);
  const double took = d.sample("levee_crowdsec_pull_duration_seconds");
  report("slow_loris_pull_s", took);
  EXPECT_GE(took, 1.9);
  EXPECT_LT(took, 4.0) << "the deadline of 2 s was not kept";

  const std::string error =
      "http://127.0.0.1:" + std::to_string(kFakeLapiPort) +
      "/v1/decisions/stream?startup=true: no whole reply within 2s ([crowdsec] timeout): its status line and headers "
      "had not ended";
  const nlohmann::json b = sb().status().at("crowdsec").at("bouncer");
  EXPECT_EQ(b.at("up"), false) << b.dump();
  EXPECT_GE(b.at("pull_timeouts").get<int>(), 2) << b.dump();
  EXPECT_EQ(b.at("last_error"), error) << b.dump();
  const RunResult text = sb().levee({"status"});
  EXPECT_NE(text.out.find("at their deadline): " + error + "\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  crowdsec 0 decisions held, 0 in force; pulls failing for "), std::string::npos)
      << text.out;

  // It answers again: the next pull (within the backoff) works, and status says so.
  lapi.set_handler(FakeLapi::behave);
  EXPECT_TRUE(eventually([&] { return d.sample("levee_crowdsec_up") == 1; }, 15'000)) << d.scrape().body;
  EXPECT_EQ(sb().status().at("crowdsec").at("bouncer").at("up"), true);
  EXPECT_NE(sb().levee({"status"}).out.find("in force; pulls working for "), std::string::npos);
  const RunResult r = d.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_NE(r.err.find("crowdsec: " + error + "; the Local API is stuck or too slow"), std::string::npos) << r.err;
}

// Replies levee must refuse, each said at once for what it is, never as a Local API that
// is not running: one cut short (a declared length, the connection closed before it),
// one declaring 2 GB and then sending 1 KB a second (refused from its length: before,
// nothing was said until 64 MiB had come, which at that pace is never), one of chunks
// without end (refused at 64 MiB).
TEST_F(CrowdsecHostile, RepliesCutShortOrTooLargeAreSaidAtOnceForWhatTheyAre) {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";
  FakeLapi lapi(sb().rx_ns(), kFakeLapiPort, [&](LapiConn& c, const LapiCall&) {
    c.send(head + "Content-Length: 1000000\r\n\r\n" + std::string(300'000, ' '));
    c.close();
  });
  LeveeRun d(sb(), {"--config", config(lapi)});
  d.wait_ready();
  if (HasFatalFailure()) return;
  const auto failures = [&] { return d.sample("levee_crowdsec_pulls_total", {{"result", "failure"}}); };
  ASSERT_TRUE(eventually([&] { return failures() >= 1; }, 5'000)) << d.scrape().body;

  lapi.set_handler([&](LapiConn& c, const LapiCall&) {
    if (!c.send(head + "Content-Length: 2147483648\r\n\r\n")) return;
    while (c.pause(1'000) && c.send(std::string(1024, ' '))) {
    }
    c.close();
  });
  double before = failures();
  // The next pull is due within the backoff (1 s, then 2 s); refused as soon as it is.
  EXPECT_TRUE(eventually([&] { return failures() > before; }, 4'000))
      << "a reply declaring 2 GB was not refused from its length";

  lapi.set_handler([&](LapiConn& c, const LapiCall&) {
    if (!c.send(head + "Transfer-Encoding: chunked\r\n\r\n")) return;
    const std::string chunk = "100000\r\n" + std::string(0x100000, ' ') + "\r\n";
    while (c.send(chunk)) {
    }
    c.close();
  });
  before = failures();
  EXPECT_TRUE(eventually([&] { return failures() > before; }, 8'000)) << "a reply without end was not refused";

  const RunResult r = d.stop();
  const std::string at =
      "crowdsec: http://127.0.0.1:" + std::to_string(kFakeLapiPort) + "/v1/decisions/stream?startup=true: ";
  EXPECT_NE(
      r.err.find(at + "the reply (HTTP 200) was cut short: 300,000 of its 1,000,000 bytes had come when the "
                      "connection ended; the Local API, or something on the way, closed the connection mid-reply: "
                      "see its log (the filter keeps the decisions it holds; retrying)\n"),
      std::string::npos)
      << r.err;
  EXPECT_NE(
      r.err.find(at + "the reply declares 2,147,483,648 bytes, more than the 64 MiB levee reads; is the url that of "
                      "a CrowdSec Local API?"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(at + "the reply is larger than 64 MiB, the most levee reads; is the url that of a CrowdSec "
                            "Local API?"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("is the CrowdSec Local API running there?"), std::string::npos) << r.err;
}

// The daemon's resident memory, in KiB (0 if it is gone).
uint64_t rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6));
  return 0;
}

// levee run as a CrowdSec machine against a Local API that misbehaves at each of its
// requests: a login whose head never ends, one declaring 10 MB, one of endless header
// bytes (cpp-httplib reads a header line of any length: before, the daemon's memory grew
// with it, 1.2 GB in 10 s), a token with a line break (it goes into a header), alerts
// refused with a body of many lines and control characters. Each is said in one line for what it
// is, the daemon stays small, and the ban it queued meanwhile is published once, when the
// Local API behaves.
TEST_F(CrowdsecHostile, PublishingAgainstAHostileLocalApiSaysWhyAndPublishesOnceItBehaves) {
  const auto login = [](const LapiCall& call) { return call.path == "/v1/watchers/login"; };
  FakeLapi lapi(sb().rx_ns(), kFakeLapiPort, [&](LapiConn& c, const LapiCall& call) {
    if (login(call)) return slow_loris(c, call);
    FakeLapi::behave(c, call);
  });
  const std::string password = dir_.write("machine.password", "fake0password\n");
  chmod(password.c_str(), 0600);
  const std::string cfg = config(lapi,
                                 "timeout = \"2s\"\npublish = true\nmachine_id = \"levee-test\"\n"
                                 "machine_password_file = \"" +
                                     password + "\"\n");
  // A source over its limit is banned for 2 minutes: a ban to publish.
  dir_.write("levee.toml", read_file(cfg) +
                               "\n[[class]]\nname = \"udp\"\nmatch.proto = \"udp\"\nrate = 100\n"
                               "burst = 10\nban = \"2m\"\n");
  LeveeRun d(sb(), {"--config", cfg});
  d.wait_ready();
  if (HasFatalFailure()) return;
  const auto errors = [&] { return d.sample("levee_crowdsec_publish_errors_total"); };
  ASSERT_TRUE(eventually([&] { return errors() >= 1; }, 6'000)) << d.scrape().body;
  send_udp(sb(), Addrs::src4()[0], 2000, 0.3);
  ASSERT_TRUE(eventually([&] { return d.sample("levee_crowdsec_publish_queue") == 1; }, 5'000)) << d.scrape().body;

  const auto next_error = [&](const char* what) {
    const double before = errors();
    EXPECT_TRUE(eventually([&] { return errors() > before; }, 15'000)) << what;
  };
  lapi.set_handler([&](LapiConn& c, const LapiCall& call) {
    if (!login(call)) return FakeLapi::behave(c, call);
    c.send("HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\n{");
    c.pause(3'000);
    c.close();
  });
  next_error("a login declaring 10 MB");
  lapi.set_handler([&](LapiConn& c, const LapiCall& call) {
    if (!login(call)) return FakeLapi::behave(c, call);
    if (!c.send("HTTP/1.1 200 OK\r\nX-Endless: ")) return;
    const std::string bytes(1 << 20, 'x');
    while (c.send(bytes)) {
    }
    c.close();
  });
  next_error("a login of endless header bytes");
  const uint64_t rss = rss_kib(d.pid());
  report("publisher_rss_kib_after_endless_header", static_cast<double>(rss));
  EXPECT_LT(rss, 200u << 10) << "the daemon grew with the endless header";
  lapi.set_handler([&](LapiConn& c, const LapiCall& call) {
    if (!login(call)) return FakeLapi::behave(c, call);
    c.reply(200, "{\"code\":200,\"token\":\"t\\r\\nX-Evil: 1\"}");
  });
  next_error("a token with a line break");
  lapi.set_handler([&](LapiConn& c, const LapiCall& call) {
    if (call.path == "/v1/alerts") return void(c.reply(500, "{\"message\":\"no\nway\r\n\x1b[31m\"}\nline 2\nline 3"));
    FakeLapi::behave(c, call);
  });
  next_error("alerts refused");
  EXPECT_EQ(d.sample("levee_crowdsec_publish_queue"), 1) << "the ban waits for the Local API";

  lapi.set_handler(FakeLapi::behave);
  EXPECT_TRUE(eventually([&] { return d.sample("levee_crowdsec_alerts_published_total") == 1; }, 15'000))
      << d.scrape().body;
  EXPECT_EQ(d.sample("levee_crowdsec_publish_queue"), 0);
  EXPECT_EQ(lapi.count("POST /v1/alerts"), 2u) << "refused once, accepted once";
  const RunResult r = d.stop();
  const std::string at = "crowdsec: publishing: http://127.0.0.1:" + std::to_string(kFakeLapiPort);
  for (const std::string said : {
           "/v1/watchers/login: no whole reply within 2s ([crowdsec] timeout): its status line and headers had not "
           "ended",
           "/v1/watchers/login: the reply declares 10,000,000 bytes, more than the 1 MiB levee reads",
           "/v1/watchers/login: the reply has a status line and headers larger than 64 KiB, the most levee reads",
           "/v1/watchers/login: the Local API's login reply has a token of other than printable characters",
           "/v1/alerts: HTTP status 500: '{\"message\":\"no\\x0away\\x0d\\x0a\\x1b[31m\"}\\x0aline",
       })
    EXPECT_TRUE(has_line(r.err, at + said)) << said << "\n" << r.err;
  for (const LapiCall& call : lapi.calls()) EXPECT_FALSE(call.has("X-Evil")) << call.head;
  for (const char* stray : {"\nway", "\nline 2", "\x1b"}) EXPECT_EQ(r.err.find(stray), std::string::npos) << r.err;
  EXPECT_TRUE(has_line(r.err, "crowdsec: the Local API takes levee's bans again")) << r.err;
}

// 20 SIGHUPs with [crowdsec] unchanged: the bouncer goes on (one startup pull, its start
// said once) and so does the publisher (one login). Before, each SIGHUP started both
// again: a pull in progress aborted, a startup pull and a login every time. A new key in
// the key file starts the bouncer again (with that key), a changed publish setting the
// publisher, each once and nothing else.
TEST_F(CrowdsecHostile, TwentySighupsWithCrowdsecUnchangedRestartNothing) {
  FakeLapi lapi(sb().rx_ns(), kFakeLapiPort, FakeLapi::behave);
  const std::string password = dir_.write("machine.password", "fake0password\n");
  chmod(password.c_str(), 0600);
  const std::string publish =
      "publish = true\nmachine_id = \"levee-test\"\nmachine_password_file = \"" + password + "\"\n";
  const std::string cfg = config(lapi, publish);
  LeveeRun d(sb(), {"--config", cfg});
  d.wait_ready();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(eventually(
      [&] { return d.sample("levee_crowdsec_up") == 1 && d.sample("levee_crowdsec_publish_up") == 1; }, 5'000))
      << d.scrape().body;
  const std::string startup = "GET /v1/decisions/stream?startup=true", login = "POST /v1/watchers/login";

  for (int i = 0; i < 20; ++i) {
    d.signal(SIGHUP);
    ASSERT_TRUE(eventually([&] { return d.sample("levee_reloads_total", {{"result", "success"}}) == 2 + i; }, 5'000));
  }
  // Pulls go on (one a second), not one of them a startup pull again.
  const double pulls = d.sample("levee_crowdsec_pulls_total", {{"result", "success"}});
  EXPECT_TRUE(eventually(
      [&] {
        return d.sample("levee_crowdsec_pulls_total", {{"result", "success"}}) >= pulls + 2;
      },
      5'000));
  EXPECT_EQ(lapi.count(startup), 1u) << "the bouncer started again";
  EXPECT_EQ(lapi.count(login), 1u) << "the publisher started again";

  // A new key: the bouncer starts again, with it; the publisher goes on.
  chmod(dir_.write("crowdsec.key", "levee0new0key\n").c_str(), 0600);
  d.signal(SIGHUP);
  EXPECT_TRUE(eventually([&] { return lapi.count(startup) == 2; }, 5'000));
  const std::vector<LapiCall> calls = lapi.calls();
  EXPECT_TRUE(calls.back().has("X-Api-Key: levee0new0key")) << calls.back().head;
  // A publish setting changes: the publisher starts again (a login); the bouncer goes on.
  dir_.write("levee.toml", read_file(cfg) + "publish_min_ban = \"2m\"\n");
  d.signal(SIGHUP);
  EXPECT_TRUE(eventually([&] { return lapi.count(login) == 2; }, 5'000));
  EXPECT_TRUE(eventually([&] { return d.sample("levee_reloads_total", {{"result", "success"}}) == 23; }, 5'000));
  EXPECT_EQ(lapi.count(startup), 2u);
  EXPECT_EQ(lapi.count(login), 2u);

  const RunResult r = d.stop();
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_EQ(lines_with(r.err, "crowdsec: pulling decisions from"), 2u) << r.err;
  EXPECT_EQ(lines_with(r.err, "crowdsec: publishing bans of"), 2u) << r.err;
}

}  // namespace
}  // namespace lvt
