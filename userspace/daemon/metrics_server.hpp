// metrics_server.hpp - `levee run --metrics`: the Prometheus endpoint. cpp-httplib serves
// it on threads of its own, which never take the daemon's signals, behind a waiting room
// that slow and idle clients cannot get past (http_guard.hpp); a scrape reads the
// per-CPU counters and the policy (no walk of the maps) and what the loop recorded.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/result.hpp"
#include "daemon/health.hpp"
#include "datapath/pins.hpp"
#include "export/metrics.hpp"

namespace levee::daemon {

class GuardedServer;

class MetricsServer {
 public:
  using Scrape = std::function<Result<MetricsSnapshot>()>;

  MetricsServer(std::string iface, Scrape scrape);
  ~MetricsServer();  // stop()
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds, and serves from then on: before the filter is attached, so that a port in
  // use fails the start before anything touches the kernel. Scrapes get 503 until ready().
  Status start(const std::string& host, uint16_t port);
  // The filter is in place: scrapes may read it.
  void ready() { ready_.store(true, std::memory_order_release); }
  void stop();

 private:
  std::string iface_;
  Scrape scrape_;
  std::atomic<bool> ready_{false};
  std::unique_ptr<GuardedServer> server_;
  std::thread thread_;
};

// Where the endpoint listens, as --metrics takes it: "127.0.0.1:9740", an IPv6 host in
// brackets ("[::1]:9740", as in a URL: RFC 3986), so that the text can be pasted back.
std::string listen_address_text(const std::string& host, uint16_t port);
// The endpoint's URL: "http://127.0.0.1:9740/metrics", "http://[::1]:9740/metrics".
std::string metrics_url(const std::string& host, uint16_t port);

// One scrape of an interface: what the exposition renders.
Result<MetricsSnapshot> metrics_snapshot(const std::string& iface, const Pinned& pins, const Health& health);

}  // namespace levee::daemon
