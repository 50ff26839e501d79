// levee_run.hpp - `levee run` as the daemon tests drive it: started in the receiver
// namespace with its metrics on a port of that namespace's loopback, scraped there, and
// polled for a condition. Shared by daemon_test.cpp and faults_test.cpp.
#pragma once

#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "e2e.hpp"

namespace lvt {

inline constexpr int kMetricsPort = 19740;

// GET http://127.0.0.1:port/path inside a namespace; status -1 if nothing answered.
struct Http {
  int status = -1;
  std::string body;
};
inline Http http_get(const std::string& ns, int port, const std::string& path, const httplib::Params& params = {}) {
  Http out;
  in_netns(ns, [&] {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(2);
    c.set_read_timeout(10);
    auto r = c.Get(path, params, httplib::Headers{});
    if (r) out = {r->status, r->body};
  });
  return out;
}

// Polls until `ok` holds (every 100 ms), at most `ms`.
inline bool eventually(const std::function<bool()>& ok, unsigned ms) {
  for (unsigned waited = 0;; waited += 100) {
    if (ok()) return true;
    if (waited >= ms) return false;
    usleep(100'000);
  }
}

// The value of one sample of the exposition text ("name{labels}"), summed over the
// samples whose label set contains every pair given; -1 if none.
inline double metric(const std::string& text, const std::string& name,
                     const std::map<std::string, std::string>& want = {}) {
  std::stringstream ss(text);
  std::string line;
  double sum = 0;
  bool any = false;
  while (std::getline(ss, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto brace = line.find('{');
    if (line.compare(0, brace, name) != 0 || brace != name.size()) continue;
    bool match = true;
    for (const auto& [k, v] : want) match &= line.find(k + "=\"" + v + "\"") != std::string::npos;
    if (!match) continue;
    sum += std::stod(line.substr(line.rfind(' ') + 1));
    any = true;
  }
  return any ? sum : -1;
}

// `levee run IFACE --metrics kMetricsPort EXTRA...` in the receiver namespace (on the
// sandbox's interface unless EXTRA names another first: give `iface`).
class LeveeRun {
 public:
  LeveeRun(Sandbox& sb, const std::vector<std::string>& extra, RunOptions o = {}, const std::string& iface = "")
      : sb_(sb) {
    std::vector<std::string> args{"run", iface.empty() ? sb.rx_if() : iface, "--metrics", std::to_string(kMetricsPort)};
    args.insert(args.end(), extra.begin(), extra.end());
    o.die_with_parent = true;
    o.timeout = std::chrono::milliseconds(120'000);
    child_.emplace(sb.levee_start(args, o));
  }
  // The metrics endpoint answers (the filter is attached or adopted by then).
  void wait_ready(unsigned ms = 10'000) {
    ASSERT_TRUE(eventually([&] { return scrape().status == 200 || !child_->running(); }, ms));
    ASSERT_TRUE(child_->running()) << "levee run ended: " << child_->stop().describe();
  }
  Http scrape() { return http_get(sb_.rx_ns(), kMetricsPort, "/metrics"); }
  // One sample of a scrape (summed as metric() does); -1 if absent or nothing answered.
  double sample(const std::string& name, const std::map<std::string, std::string>& want = {}) {
    return metric(scrape().body, name, want);
  }
  pid_t pid() const { return child_->pid(); }
  bool running() { return child_->running(); }
  RunResult stop() { return child_->stop(); }
  void signal(int sig) { ::kill(child_->pid(), sig); }
  RunResult kill9() {
    ::kill(child_->pid(), SIGKILL);
    return child_->wait();
  }

 private:
  Sandbox& sb_;
  std::optional<Child> child_;
};

}  // namespace lvt
