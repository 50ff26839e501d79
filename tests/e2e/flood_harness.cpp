#include "flood_harness.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#ifndef LEVEE_FLOOD_BIN
#error "LEVEE_FLOOD_BIN must name the levee-flood binary"
#endif

namespace fs = std::filesystem;

namespace lvt {
namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

bool in_path(const std::string& exe) {
  const char* path = std::getenv("PATH");
  std::string p = path && *path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  // Root's PATH may lack the sbin directories where Debian puts nginx.
  p += ":/usr/sbin:/sbin";
  std::stringstream ss(p);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    if (access((dir + "/" + exe).c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::string which(const std::string& exe) {
  for (const char* d : {"/usr/sbin/", "/usr/bin/", "/sbin/", "/bin/", "/usr/local/sbin/", "/usr/local/bin/"}) {
    std::string p = std::string(d) + exe;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return exe;  // let execvp search
}

uint64_t steady_deadline_ns(unsigned ms) { return now_ns() + uint64_t{ms} * 1'000'000ull; }

}  // namespace

// ---- levee-flood --------------------------------------------------------------------

std::string Flood::binary() { return LEVEE_FLOOD_BIN; }

Flood::Flood(const FloodSpec& s) : spec_(s) {
  std::vector<std::string> argv;
  if (s.cpu >= 0) argv = {"taskset", "-c", std::to_string(s.cpu)};
  argv.insert(argv.end(),
              {LEVEE_FLOOD_BIN, "--dev", s.dev, "--dst", s.dst, "--proto", s.proto, "--dport", std::to_string(s.dport),
               "--duration", fmt("%.3f", s.seconds), "--threads", std::to_string(s.threads), "--json"});
  if (!s.random.empty()) {
    argv.insert(argv.end(), {"--random", s.random});
  } else if (s.sources > 0) {
    argv.insert(argv.end(), {"--sources", std::to_string(s.sources), "--src-base", s.src_base});
  } else if (!s.src.empty()) {
    argv.insert(argv.end(), {"--src", s.src});
  }
  if (s.rate > 0) argv.insert(argv.end(), {"--rate", fmt("%.0f", s.rate)});
  if (s.size > 0) argv.insert(argv.end(), {"--size", std::to_string(s.size)});
  RunOptions o;
  o.netns = s.ns;
  o.die_with_parent = true;
  // A timed live run may overrun its last ~1 s call on a loaded machine; never hang.
  o.timeout = std::chrono::milliseconds(static_cast<int64_t>((s.seconds + 60) * 1000));
  child_.emplace(argv, o);
}

FloodResult Flood::wait() {
  FloodResult r;
  r.run = child_->wait();
  if (r.run.code != 0) return r;
  try {
    // The JSON object is the last line of stdout.
    std::string line, last;
    std::stringstream ss(r.run.out);
    while (std::getline(ss, line))
      if (!line.empty() && line[0] == '{') last = line;
    r.json = nlohmann::json::parse(last);
    r.packets = r.json.at("packets").get<uint64_t>();
    r.seconds = r.json.at("seconds").get<double>();
    r.pps = r.json.at("pps").get<double>();
    const int64_t off = realtime_offset_ns();
    r.t_start = static_cast<uint64_t>(static_cast<int64_t>(r.json.at("start_unix").get<double>() * 1e9) - off);
    r.t_end = static_cast<uint64_t>(static_cast<int64_t>(r.json.at("end_unix").get<double>() * 1e9) - off);
    if (r.json.contains("dev_tx_dropped") && r.json["dev_tx_dropped"].is_number())
      r.dev_tx_dropped = r.json["dev_tx_dropped"].get<int64_t>();
    r.ok = true;
  } catch (const std::exception& e) {
    r.run.err += std::string("\n(harness: cannot parse levee-flood's JSON: ") + e.what() + ")";
  }
  return r;
}

std::string FloodResult::describe() const {
  std::string s = "levee-flood: " + std::to_string(packets) + " packets in " + fmt("%.3f", seconds) +
                  " s = " + fmt("%.2f", pps / 1e6) + " Mpps, dev_tx_dropped " + std::to_string(dev_tx_dropped);
  if (!ok) s += "; FAILED: " + run.describe();
  return s;
}

// ---- nginx --------------------------------------------------------------------------

bool Nginx::available() { return in_path("nginx"); }

std::string Nginx::url(const std::string& address) {
  if (address.find(':') != std::string::npos) return "http://[" + address + "]:80/index.html";
  return "http://" + address + ":80/index.html";
}

Nginx::Nginx(const std::string& ns, const std::vector<std::string>& listen, size_t body_bytes)
    : body_bytes_(body_bytes) {
  if (!available()) throw std::runtime_error("nginx is not installed (apt-get install nginx; scripts/test.sh does)");
  const std::string& d = dir_.path();
  fs::create_directories(d + "/html");
  fs::create_directories(d + "/tmp");
  fs::create_directories(d + "/logs");
  std::string body(body_bytes, 'x');
  for (size_t i = 63; i < body.size(); i += 64) body[i] = '\n';
  dir_.write("html/index.html", body);
  std::string conf =
      "# levee e2e: a private nginx, one process, in the receiver's namespace\n"
      "master_process off;\n"
      "worker_processes 1;\n"
      "pid " +
      d +
      "/nginx.pid;\n"
      "error_log " +
      d +
      "/logs/error.log warn;\n"
      "events { worker_connections 4096; }\n"
      "http {\n"
      "  access_log off;\n"
      "  default_type text/plain;\n"
      "  client_body_temp_path " +
      d +
      "/tmp/body;\n"
      "  proxy_temp_path " +
      d +
      "/tmp/proxy;\n"
      "  fastcgi_temp_path " +
      d +
      "/tmp/fastcgi;\n"
      "  uwsgi_temp_path " +
      d +
      "/tmp/uwsgi;\n"
      "  scgi_temp_path " +
      d +
      "/tmp/scgi;\n"
      "  server {\n";
  for (const auto& a : listen) {
    const bool v6 = a.find(':') != std::string::npos;
    conf += "    listen " + (v6 ? "[" + a + "]" : a) + ":80 backlog=4096;\n";
  }
  conf += "    root " + d +
          "/html;\n"
          "    location / { }\n"
          "  }\n"
          "}\n";
  dir_.write("nginx.conf", conf);

  RunOptions o;
  o.netns = ns;
  o.die_with_parent = true;
  o.timeout = std::chrono::minutes(30);  // stopped by stop(); never outlives the test
  child_.emplace(std::vector<std::string>{which("nginx"), "-p", d + "/", "-c", d + "/nginx.conf", "-e",
                                          d + "/logs/error.log", "-g", "daemon off;"},
                 o);

  // Ready when every address accepts a connection (from inside its namespace).
  const uint64_t deadline = steady_deadline_ns(10'000);
  for (const auto& a : listen) {
    for (;;) {
      if (!child_->running()) {
        std::string why = "nginx exited at start: " + child_->wait().describe() + "\nerror.log: " + error_log();
        child_.reset();
        throw std::runtime_error(why);
      }
      bool up = false;
      in_netns(ns, [&] {
        levee::Fd fd(socket(a.find(':') != std::string::npos ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (!fd.valid()) return;
        socklen_t len = 0;
        const sockaddr_storage ss = sockaddr_of(a, 80, len);
        up = connect(fd.get(), reinterpret_cast<const sockaddr*>(&ss), len) == 0;
      });
      if (up) break;
      if (now_ns() > deadline) {
        std::string why = "nginx does not accept connections on " + a + ":80 after 10 s\nerror.log: " + error_log();
        (void)child_->stop();
        child_.reset();
        throw std::runtime_error(why);
      }
      usleep(20'000);
    }
  }
}

std::string Nginx::error_log() const {
  std::ifstream in(dir_.path() + "/logs/error.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Nginx::running() { return child_ && child_->running(); }

std::string Nginx::stop() {
  if (!child_) return {};
  RunResult r = child_->stop(std::chrono::milliseconds(3000));
  child_.reset();
  return r.describe() + "\nerror.log: " + error_log();
}

Nginx::~Nginx() {
  try {
    (void)stop();
  } catch (...) {
  }
}

// ---- wrk ----------------------------------------------------------------------------

bool Wrk::available() { return in_path("wrk"); }

namespace {

constexpr const char* kWrkScript =
    R"(-- levee e2e: one new TCP connection per request, paced; the summary as one JSON line
wrk.method = "GET"
wrk.headers["Connection"] = "close"
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
  gap = tonumber(args[1]) or 20
  want = tonumber(args[2]) or -1
  good = 0
  bad = 0
end
function delay() return gap end
function response(status, headers, body)
  if status == 200 and (want < 0 or (body ~= nil and #body == want)) then good = good + 1 else bad = bad + 1 end
end
function done(summary, latency, requests)
  local g, b = 0, 0
  for _, t in ipairs(threads) do g = g + t:get("good"); b = b + t:get("bad") end
  local e = summary.errors
  io.write(string.format('LVT_WRK {"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"good":%d,"bad":%d,"lat_mean_us":%.1f,"lat_p99_us":%d,"lat_max_us":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout, g, b,
    latency.mean, latency:percentile(99.0), latency.max))
end
)";

}  // namespace

Wrk::Wrk(const WrkSpec& s) : spec_(s) {
  if (!available()) throw std::runtime_error("wrk is not installed (apt-get install wrk; scripts/test.sh does)");
  const std::string script = dir_.write("pace.lua", kWrkScript);
  RunOptions o;
  o.netns = s.ns;
  o.die_with_parent = true;
  o.timeout = std::chrono::seconds(s.seconds + 30);
  t_start_ = now_ns();
  std::vector<std::string> argv;
  if (s.cpu >= 0) argv = {"taskset", "-c", std::to_string(s.cpu)};
  argv.insert(argv.end(),
              {which("wrk"), "-t1", "-c" + std::to_string(s.connections), "-d" + std::to_string(s.seconds) + "s",
               "--timeout", std::to_string(s.timeout_s) + "s", "-s", script, s.url, "--", std::to_string(s.delay_ms),
               std::to_string(s.body_bytes ? static_cast<long>(s.body_bytes) : -1L)});
  child_.emplace(argv, o);
}

WrkResult Wrk::wait() {
  WrkResult r;
  r.run = child_->wait();
  r.t_start = t_start_;
  r.t_end = now_ns();
  const auto pos = r.run.out.find("LVT_WRK ");
  if (r.run.code != 0 || pos == std::string::npos) return r;
  try {
    auto eol = r.run.out.find('\n', pos);
    auto j = nlohmann::json::parse(r.run.out.substr(pos + 8, eol == std::string::npos ? eol : eol - pos - 8));
    r.requests = j.at("requests");
    r.good = j.at("good");
    r.bad = j.at("bad");
    r.connect = j.at("connect");
    r.read = j.at("read");
    r.write = j.at("write");
    r.status = j.at("status");
    r.timeout = j.at("timeout");
    r.duration_s = j.at("duration_us").get<double>() / 1e6;
    r.lat_mean_ms = j.at("lat_mean_us").get<double>() / 1e3;
    r.lat_p99_ms = j.at("lat_p99_us").get<double>() / 1e3;
    r.lat_max_ms = j.at("lat_max_us").get<double>() / 1e3;
    r.ok = true;
  } catch (const std::exception& e) {
    r.run.err += std::string("\n(harness: cannot parse the wrk summary: ") + e.what() + ")";
  }
  return r;
}

std::string WrkResult::describe() const {
  if (!ok) return "wrk failed: " + run.describe();
  return "wrk: " + std::to_string(requests) + " responses (" + std::to_string(good) + " good, " + std::to_string(bad) +
         " bad) in " + fmt("%.2f", duration_s) + " s; errors connect " + std::to_string(connect) + " read " +
         std::to_string(read) + " write " + std::to_string(write) + " status " + std::to_string(status) + " timeout " +
         std::to_string(timeout) + "; latency mean " + fmt("%.2f", lat_mean_ms) + " ms p99 " + fmt("%.2f", lat_p99_ms) +
         " ms max " + fmt("%.1f", lat_max_ms) + " ms";
}

void set_rps(const std::string& ns, const std::string& ifname, unsigned cpu_mask) {
  char mask[16];
  std::snprintf(mask, sizeof mask, "%x", cpu_mask);
  const std::string script =
      "for q in /sys/class/net/" + ifname + "/queues/rx-*; do echo " + mask + " > $q/rps_cpus || exit 1; done";
  RunResult r = run({"ip", "netns", "exec", ns, "sh", "-c", script});
  if (r.code != 0) throw std::runtime_error("set rps_cpus of " + ifname + ": " + r.describe());
}

// ---- a flood scenario ---------------------------------------------------------------

int env_int(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : dflt;
}

double env_double(const char* name, double dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : dflt;
}

int flood_threads() { return std::max(1, env_int("LVT_FLOOD_THREADS", 1)); }

int wire_cpu() {
  if (flood_threads() > 1) return -1;
  const int forced = env_int("LVT_WIRE_CPU", -2);
  if (forced != -2) return forced;
  cpu_set_t cs;
  CPU_ZERO(&cs);
  if (sched_getaffinity(0, sizeof cs, &cs) != 0) return -1;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &cs)) return i;
  return -1;
}

namespace {

int64_t status_sources(const nlohmann::json& j) {
  if (j.is_null() || !j.contains("sources") || !j["sources"].is_number()) return -1;
  return j["sources"].get<int64_t>();
}

// levee status --json: the new sources a class admitted (-1: not reported).
int64_t status_admitted(const nlohmann::json& j, const std::string& cls = "default") {
  if (j.is_null() || !j.contains("classes") || !j["classes"].is_array()) return -1;
  for (const auto& c : j["classes"])
    if (c.value("name", "") == cls && c.contains("admitted") && c["admitted"].is_number())
      return c["admitted"].get<int64_t>();
  return -1;
}

ScenarioSnapshot snapshot(const Sandbox& sb) {
  ScenarioSnapshot s;
  s.stats = sb.stats();
  const auto st = sb.status();
  s.sources = status_sources(st);
  s.admitted = status_admitted(st);
  s.tx_link = link_counters(sb.tx_ns(), sb.tx_if());
  s.rx_link = link_counters(sb.rx_ns(), sb.rx_if());
  return s;
}

int64_t link_delta(const std::map<std::string, int64_t>& a, const std::map<std::string, int64_t>& b,
                   const std::string& k) {
  auto ia = a.find(k), ib = b.find(k);
  return ia == a.end() || ib == b.end() ? -1 : ib->second - ia->second;
}

}  // namespace

ScenarioResult run_scenario(Sandbox& sb, const ScenarioSpec& spec) {
  ScenarioResult r;
  r.wire_cpu = spec.wire_cpu;
  const std::string dst = spec.family.rx(), src = spec.family.src()[0];
  r.client_src = src;
  // What gets through to the receiver's stack is answered by nothing: no routes back.
  sb.ip_rx({spec.family.pick("-4", "-6"), "route", "add", "blackhole", spec.flood_prefix});

  // Every packet toward the filter leaves from wire_cpu: the sender side's own
  // receive processing (its TCP ACKs to nginx's responses) included.
  if (spec.wire_cpu >= 0) set_rps(sb.tx_ns(), sb.tx_if(), 1u << spec.wire_cpu);
  std::optional<Nginx> nginx;
  if (spec.web) nginx.emplace(sb.rx_ns(), std::vector<std::string>{Addrs::rx4, Addrs::rx6});
  UdpReceiver rx(sb.rx_ns(), spec.family.af, kPort);
  std::optional<SourceTap> tap;
  if (spec.tap) tap.emplace(sb.rx_ns(), sb.rx_if(), spec.flood_prefix, spec.source_bits);
  const NetCounters tx0 = net_counters(sb.tx_ns()), rx0 = net_counters(sb.rx_ns());

  // The client and wrk outlast the flood: a timed live run can overrun by seconds on
  // a loaded machine.
  const double lead = 1.0, tail = 5.0;
  const uint64_t t0 = start_soon(50);
  Sender client({.ns = sb.tx_ns(),
                 .src = src,
                 .dst = dst,
                 .pps = spec.client_pps,
                 .seconds = lead + spec.flood_seconds + tail,
                 .seq = true,
                 .cpu = spec.wire_cpu},
                t0);
  std::optional<Wrk> wrk;
  if (spec.web)
    wrk.emplace(WrkSpec{.ns = sb.tx_ns(),
                        .url = Nginx::url(dst),
                        .connections = spec.wrk_connections,
                        .seconds = static_cast<int>(std::ceil(lead + spec.flood_seconds + tail - 0.5)),
                        .delay_ms = spec.wrk_gap_ms,
                        .timeout_s = 2,
                        .body_bytes = nginx->body_bytes(),
                        .cpu = spec.wire_cpu});
  // The client and wrk have been running for a second: known sources now.
  while (now_ns() < t0 + static_cast<uint64_t>(lead * 1e9)) usleep(5'000);
  r.before = snapshot(sb);
  std::optional<StatusPoller> poller;
  if (spec.status_ms) poller.emplace(sb, spec.status_ms);

  std::optional<OfferedWatch> offered;
  if (spec.tap) offered.emplace(sb.tx_ns(), sb.tx_if(), 20);
  Flood flood({.ns = sb.tx_ns(),
               .dev = sb.tx_if(),
               .dst = dst,
               .random = spec.flood_prefix,
               .proto = spec.flood_proto,
               .dport = spec.flood_dport,
               .seconds = spec.flood_seconds,
               .threads = spec.flood_threads,
               .cpu = spec.flood_threads == 1 ? spec.wire_cpu : -1});
  r.flood = flood.wait();
  if (offered) r.offered = offered->stop();
  if (poller) {
    r.samples = poller->stop();
    r.status_error = poller->error();
  }
  r.client = client.join();
  if (wrk) r.wrk = wrk->wait();
  rx.finish();
  if (tap) {
    tap->finish();
    r.admitted = tap->distinct();
    r.admitted_at = tap->first_seen();
    r.flood_frames_passed = tap->frames();
    if (r.flood.ok)
      r.flood_frames_after = tap->frames_after(r.flood.t_start + static_cast<uint64_t>(spec.tap_after_s * 1e9));
    r.tap_drops = tap->tap_drops();
  }
  r.after = snapshot(sb);
  const NetCounters tx1 = net_counters(sb.tx_ns()), rx1 = net_counters(sb.rx_ns());
  r.syn_retrans = counter_delta(tx0, tx1, "TcpExt.TCPSynRetrans");
  r.retrans_segs = counter_delta(tx0, tx1, "Tcp.RetransSegs");
  r.listen_drops = counter_delta(rx0, rx1, "TcpExt.ListenDrops");
  r.client_socket_drops = rx.socket_drops();
  if (nginx) {
    if (!nginx->running()) r.nginx_log = "nginx died during the run: ";
    r.nginx_log += nginx->stop();
  }

  const uint64_t from = r.flood.t_start, to = std::min(r.flood.t_end, r.client.t_last);
  r.loss = seq_loss(r.client, rx.indexes(src), from, to);
  r.coverage = r.flood.t_end > r.flood.t_start && to > from
                   ? static_cast<double>(to - from) / static_cast<double>(r.flood.t_end - r.flood.t_start)
                   : 0.0;
  return r;
}

int64_t ScenarioResult::peak_sources() const {
  int64_t peak = -1;
  for (const auto& s : samples) peak = std::max(peak, s.sources);
  return peak;
}

int64_t ScenarioResult::tx_veth_dropped() const { return link_delta(before.tx_link, after.tx_link, "tx_dropped"); }

int64_t ScenarioResult::rx_veth_dropped() const { return link_delta(before.rx_link, after.rx_link, "rx_dropped"); }

void report_scenario(const std::string& tag, const ScenarioResult& r) {
  report(tag + "_flood_packets", d(r.flood.packets));
  report(tag + "_flood_seconds", r.flood.seconds);
  report(tag + "_flood_mpps", r.flood.pps / 1e6);
  report(tag + "_flood_dev_tx_dropped", d(r.flood.dev_tx_dropped));
  report(tag + "_wire_cpu", r.wire_cpu);
  report(tag + "_client_tried_in_flood", d(r.loss.tried()));
  report(tag + "_client_not_received_in_flood", d(r.loss.lost));
  report(tag + "_client_refused_in_flood", d(r.loss.refused));
  report(tag + "_client_loss_pct", 100.0 * r.loss.loss());
  report(tag + "_client_coverage", r.coverage);
  report(tag + "_client_socket_drops", d(r.client_socket_drops));
  report(tag + "_wrk_attempts", d(r.wrk.attempts()));
  report(tag + "_wrk_good", d(r.wrk.good));
  report(tag + "_wrk_latency_max_ms", r.wrk.lat_max_ms);
  report(tag + "_tcp_syn_retrans", d(r.syn_retrans));
  report(tag + "_tcp_retrans_segs", d(r.retrans_segs));
  report(tag + "_tcp_listen_drops", d(r.listen_drops));
  report(tag + "_flood_sources_through", d(r.admitted));
  report(tag + "_flood_frames_through", d(r.flood_frames_passed));
  report(tag + "_tap_drops", d(r.tap_drops));
  report(tag + "_tx_veth_tx_dropped", d(r.tx_veth_dropped()));
  report(tag + "_rx_veth_rx_dropped", d(r.rx_veth_dropped()));
  report(tag + "_sources_before", d(r.before.sources));
  report(tag + "_sources_after", d(r.after.sources));
  report(tag + "_sources_peak_sampled", d(r.peak_sources()));
  std::printf("[measured] %s: %s\n[measured] %s: client %s\n[measured] %s: %s\n", tag.c_str(),
              r.flood.describe().c_str(), tag.c_str(), r.loss.describe().c_str(), tag.c_str(),
              r.wrk.describe().c_str());
  std::printf("[measured] %s: stats %s | %s | %s\n", tag.c_str(), stat_reasons_text(r.after.stats, "passed").c_str(),
              stat_reasons_text(r.after.stats, "dropped").c_str(),
              stat_reasons_text(r.after.stats, "would_drop").c_str());
  std::fflush(stdout);
}

// ---- kernel counters ----------------------------------------------------------------

NetCounters net_counters(const std::string& ns) {
  RunOptions o;
  o.netns = ns;
  o.timeout = std::chrono::seconds(10);
  RunResult r = run({"cat", "/proc/net/netstat", "/proc/net/snmp", "/proc/net/snmp6"}, o);
  if (r.code != 0) throw std::runtime_error("read /proc/net counters in " + ns + ": " + r.describe());
  NetCounters out;
  std::stringstream ss(r.out);
  std::string line, header;
  while (std::getline(ss, line)) {
    std::stringstream ls(line);
    std::string first;
    ls >> first;
    if (first.empty()) continue;
    if (first.back() == ':') {
      if (header.empty() || header.substr(0, header.find(' ')) != first) {
        header = line;  // names
        continue;
      }
      // values for the previous header line
      std::stringstream hs(header);
      std::string prefix, name;
      hs >> prefix;
      prefix.pop_back();
      std::string v;
      while (hs >> name && ls >> v) {
        try {
          out[prefix + "." + name] = std::stoll(v);
        } catch (...) {
        }
      }
      header.clear();
    } else {
      std::string v;
      if (ls >> v) {
        try {
          out[first] = std::stoll(v);
        } catch (...) {
        }
      }
    }
  }
  return out;
}

int64_t counter_delta(const NetCounters& a, const NetCounters& b, const std::string& key) {
  auto ia = a.find(key), ib = b.find(key);
  if (ia == a.end() || ib == b.end()) return 0;
  return ib->second - ia->second;
}

std::map<std::string, int64_t> link_counters(const std::string& ns, const std::string& ifname) {
  RunResult r = run({"ip", "-n", ns, "-s", "-j", "link", "show", "dev", ifname});
  std::map<std::string, int64_t> out;
  if (r.code != 0) return out;
  try {
    auto j = nlohmann::json::parse(r.out);
    const auto& st = j.at(0).at("stats64");
    for (const char* dir : {"rx", "tx"})
      for (const auto& [k, v] : st.at(dir).items())
        if (v.is_number()) out[std::string(dir) + "_" + k] = v.get<int64_t>();
  } catch (...) {
  }
  return out;
}

// ---- loss of a numbered flow ------------------------------------------------------

SeqLoss seq_loss(const SendLog& log, const std::vector<uint64_t>& received, uint64_t from, uint64_t to) {
  SeqLoss s;
  std::vector<bool> got(log.times.size(), false);
  for (uint64_t i : received) {
    if (i < got.size()) {
      if (!got[i]) ++s.received_total;
      got[i] = true;
    }
  }
  s.sent_total = log.times.size();
  s.refused_total = log.error_times.size();
  for (uint64_t t : log.error_times)
    if (t >= from && t <= to) ++s.refused;
  for (size_t i = 0; i < log.times.size(); ++i) {
    if (log.times[i] < from || log.times[i] > to) continue;
    ++s.sent;
    if (got[i])
      ++s.received;
    else
      ++s.lost;
  }
  return s;
}

std::string SeqLoss::describe() const {
  return std::to_string(lost + refused) + " of " + std::to_string(tried()) + " lost in the window (" +
         fmt("%.3f", 100.0 * loss()) + "%: " + std::to_string(lost) + " sent but not received, " +
         std::to_string(refused) + " refused by the sender's kernel (ENOBUFS: the veth's ring full)); " +
         std::to_string(received_total) + " of " + std::to_string(sent_total + refused_total) + " received overall";
}

// ---- SourceTap ----------------------------------------------------------------------

SourceTap::Match SourceTap::match_of(const std::string& prefix, int source_bits) {
  Match m;
  const auto slash = prefix.find('/');
  const std::string addr = prefix.substr(0, slash);
  m.plen = slash == std::string::npos ? -1 : std::stoi(prefix.substr(slash + 1));
  m.family = addr.find(':') != std::string::npos ? AF_INET6 : AF_INET;
  if (inet_pton(m.family, addr.c_str(), m.net) != 1) throw std::invalid_argument("bad prefix " + prefix);
  const int width = m.family == AF_INET6 ? 128 : 32;
  if (m.plen < 0) m.plen = width;
  m.source_bits = source_bits < 0 || source_bits > width ? width : source_bits;
  return m;
}

// Only the headers are read: 14 + 40 bytes cover the IPv6 source.
SourceTap::SourceTap(const std::string& ns, const std::string& ifname, const std::string& prefix, int source_bits)
    : match_(match_of(prefix, source_bits)),
      t0_(now_ns()),
      rx_(packet_socket(ns, ifname, 64 << 20, {PACKET_IGNORE_OUTGOING}), 128,
          [this](const Received& m) { return on_read(m); }) {
  // And only they are kept in the socket's buffer.
  sock_filter code[] = {{BPF_RET | BPF_K, 0, 0, 64}};
  sock_fprog prog{1, code};
  setsockopt(rx_.fd(), SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog);
}

bool SourceTap::on_read(const Received& m) {
  if (reinterpret_cast<const sockaddr_ll&>(m.from).sll_pkttype == PACKET_OUTGOING) return false;
  const uint8_t* f = m.data;
  if (m.len < 14) return false;
  const uint16_t type = static_cast<uint16_t>(f[12] << 8 | f[13]);
  const uint8_t* src;
  size_t alen;
  if (match_.family == AF_INET && type == 0x0800 && m.len >= 14 + 20) {
    src = f + 14 + 12;
    alen = 4;
  } else if (match_.family == AF_INET6 && type == 0x86dd && m.len >= 14 + 40) {
    src = f + 14 + 8;
    alen = 16;
  } else {
    return false;
  }
  const int full = match_.plen / 8, rem = match_.plen % 8;
  const uint8_t rem_mask = static_cast<uint8_t>(0xff << (8 - rem));
  if (std::memcmp(src, match_.net, static_cast<size_t>(full)) != 0) return false;
  if (rem && ((src[full] ^ match_.net[full]) & rem_mask)) return false;
  ++frames_;
  // The source as levee keys it: the address masked to source_bits.
  uint8_t a[16] = {};
  std::memcpy(a, src, alen);
  for (size_t bit = static_cast<size_t>(match_.source_bits); bit < alen * 8; ++bit)
    a[bit / 8] = static_cast<uint8_t>(a[bit / 8] & ~(0x80u >> (bit % 8)));
  Key k{0, 0};
  if (alen == 4) {
    uint32_t v;
    std::memcpy(&v, a, 4);
    k.lo = v;
  } else {
    std::memcpy(&k.hi, a, 8);
    std::memcpy(&k.lo, a + 8, 8);
  }
  std::lock_guard l(mu_);
  if (seen_.insert(k).second) first_seen_.push_back(m.t);
  const size_t ms = m.t > t0_ ? static_cast<size_t>((m.t - t0_) / 1'000'000ull) : 0;
  if (ms >= per_ms_.size()) per_ms_.resize(std::max(ms + 1, per_ms_.size() * 2), 0);
  ++per_ms_[ms];
  return true;
}

uint64_t SourceTap::frames_between(uint64_t from, uint64_t to) const {
  // Millisecond i holds the frames read in [t0 + i ms, t0 + (i + 1) ms): those of the
  // milliseconds that begin in [from, to), rounded to the nearest.
  auto index = [&](uint64_t t) -> size_t {
    if (t <= t0_) return 0;
    const uint64_t d = t - t0_;
    return d > UINT64_MAX - 500'000ull ? SIZE_MAX : static_cast<size_t>((d + 500'000ull) / 1'000'000ull);
  };
  std::lock_guard l(mu_);
  const size_t lo = std::min(index(from), per_ms_.size()), hi = std::min(index(to), per_ms_.size());
  uint64_t n = 0;
  for (size_t i = lo; i < hi; ++i) n += per_ms_[i];
  return n;
}

uint64_t SourceTap::distinct() const {
  std::lock_guard l(mu_);
  return seen_.size();
}

uint64_t SourceTap::distinct_before(uint64_t t) const {
  std::lock_guard l(mu_);
  return static_cast<uint64_t>(std::lower_bound(first_seen_.begin(), first_seen_.end(), t) - first_seen_.begin());
}

std::vector<uint64_t> SourceTap::first_seen() const {
  std::lock_guard l(mu_);
  return first_seen_;
}

int64_t SourceTap::tap_drops() const {
  // Reading the statistics resets them: the drops since the last read are added.
  tpacket_stats st{};
  socklen_t len = sizeof st;
  if (getsockopt(rx_.fd(), SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) drops_ += st.tp_drops;
  return drops_.load();
}

// ---- Periodic, OfferedWatch -----------------------------------------------------------

Periodic::Periodic(unsigned interval_ms, std::function<void()> tick) {
  thread_ = std::thread([this, interval_ms, tick = std::move(tick)] {
    uint64_t next = now_ns();
    while (!stop_) {
      tick();
      next += uint64_t{interval_ms} * 1'000'000ull;
      while (!stop_ && now_ns() < next) usleep(1'000);
    }
  });
}

void Periodic::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

// A route netlink socket in `ns`, whose replies are waited for a second at most.
static levee::Fd rtnetlink_in(const std::string& ns) {
  levee::Fd fd = socket_in(ns, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  const timeval tv{1, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

OfferedWatch::OfferedWatch(const std::string& ns, const std::string& ifname, unsigned interval_ms)
    : nl_(rtnetlink_in(ns)), ifname_(ifname), periodic_(interval_ms, [this] {
        const uint64_t t = now_ns();
        if (auto n = read_frames()) {
          std::lock_guard l(mu_);
          samples_.push_back({t, *n});
        }
      }) {}

std::vector<OfferedWatch::Sample> OfferedWatch::stop() {
  periodic_.stop();
  std::lock_guard l(mu_);
  return samples_;
}

// RTM_GETLINK for the interface by name; its IFLA_STATS64's tx_packets.
std::optional<uint64_t> OfferedWatch::read_frames() {
  struct {
    nlmsghdr h;
    ifinfomsg i;
    char attrs[64];
  } req{};
  req.h.nlmsg_type = RTM_GETLINK;
  req.h.nlmsg_flags = NLM_F_REQUEST;
  req.i.ifi_family = AF_UNSPEC;
  auto* a = reinterpret_cast<rtattr*>(req.attrs);
  a->rta_type = IFLA_IFNAME;
  a->rta_len = static_cast<unsigned short>(RTA_LENGTH(ifname_.size() + 1));
  std::memcpy(RTA_DATA(a), ifname_.c_str(), ifname_.size() + 1);
  req.h.nlmsg_len = static_cast<uint32_t>(NLMSG_LENGTH(sizeof req.i) + RTA_ALIGN(a->rta_len));
  if (send(nl_.get(), &req, req.h.nlmsg_len, 0) < 0) return std::nullopt;
  alignas(nlmsghdr) char buf[16384];
  const ssize_t got = recv(nl_.get(), buf, sizeof buf, 0);
  if (got <= 0) return std::nullopt;
  auto* h = reinterpret_cast<nlmsghdr*>(buf);
  if (!NLMSG_OK(h, static_cast<uint32_t>(got)) || h->nlmsg_type != RTM_NEWLINK) return std::nullopt;
  int len = static_cast<int>(IFLA_PAYLOAD(h));
  for (auto* at = IFLA_RTA(static_cast<ifinfomsg*>(NLMSG_DATA(h))); RTA_OK(at, len); at = RTA_NEXT(at, len)) {
    if (at->rta_type != IFLA_STATS64 || RTA_PAYLOAD(at) < sizeof(rtnl_link_stats64)) continue;
    rtnl_link_stats64 st;
    std::memcpy(&st, RTA_DATA(at), sizeof st);
    return st.tx_packets;
  }
  return std::nullopt;
}

// ---- StatusPoller -------------------------------------------------------------------

StatusPoller::StatusPoller(const Sandbox& sb, unsigned interval_ms)
    : sb_(sb), periodic_(interval_ms, [this] { sample(); }) {}

void StatusPoller::sample() {
  Sample s;
  s.t0 = now_ns();
  try {
    auto j = sb_.status();
    if (!j.is_null() && j.contains("sources") && j["sources"].is_number()) s.sources = j["sources"].get<int64_t>();
  } catch (const std::exception& e) {
    std::lock_guard l(mu_);
    if (error_.empty()) error_ = e.what();
  }
  s.t1 = now_ns();
  std::lock_guard l(mu_);
  samples_.push_back(s);
}

std::vector<StatusPoller::Sample> StatusPoller::stop() {
  periodic_.stop();
  std::lock_guard l(mu_);
  return samples_;
}

std::string StatusPoller::error() const {
  std::lock_guard l(mu_);
  return error_;
}

void expect_nginx_through(const ScenarioResult& r) {
  ASSERT_TRUE(r.wrk.ok) << r.wrk.describe() << "\nnginx: " << r.nginx_log;
  ASSERT_GT(r.wrk.attempts(), 0u) << r.wrk.describe();
  const double attempts = d(r.wrk.attempts());
  const double good = d(r.wrk.good) - std::min(d(r.wrk.good), d(r.syn_retrans));
  EXPECT_GE(good / attempts, 0.99) << "nginx through the flood: " << num(good) << " of " << num(attempts)
                                   << " requests succeeded (" << pct(good / attempts) << ", expected >= 99%); "
                                   << r.wrk.describe() << "; SYN retransmits " << r.syn_retrans
                                   << ", retransmitted segments " << r.retrans_segs << ", listen drops "
                                   << r.listen_drops << "; the veth dropped " << r.tx_veth_dropped()
                                   << " frames meanwhile (its ring full: before the filter)";
}

}  // namespace lvt
