#include "daemon/metrics_server.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include "core/version.hpp"
#include "daemon/block_signals.hpp"
#include "daemon/http_guard.hpp"
#include "datapath/inspect.hpp"
#include "datapath/maps.hpp"

namespace levee::daemon {

MetricsServer::MetricsServer(std::string iface, Scrape scrape) : iface_(std::move(iface)), scrape_(std::move(scrape)) {}

MetricsServer::~MetricsServer() { stop(); }

Status MetricsServer::start(const std::string& host, uint16_t port) {
  BlockDaemonSignals blocked;  // the server's threads start in its constructor
  server_ = std::make_unique<GuardedServer>();
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    if (!ready_.load(std::memory_order_acquire)) {  // bound before the filter is attached
      res.status = 503;
      res.set_content("levee run is starting\n", "text/plain; charset=utf-8");
      return;
    }
    auto s = scrape_();
    if (!s) {
      res.status = 500;
      res.set_content(s.error().message() + "\n", "text/plain; charset=utf-8");
      return;
    }
    res.set_content(render_metrics(*s), "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(fmt::format("levee run {}: metrics at /metrics\n", iface_), "text/plain; charset=utf-8");
  });
  // SO_REUSEADDR (a restart binds past its predecessor's connections in TIME_WAIT), but
  // not cpp-httplib's default SO_REUSEPORT, under which a second levee run (or any
  // server asking for it) shares the port and gets half the scrapes instead of a refusal.
  server_->set_socket_options([](socket_t sock) {
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  if (!server_->bind_to_port(host, port))
    return Error{fmt::format("cannot serve metrics on {}", listen_address_text(host, port)), 0,
                 "the port is in use or the address is not one of this host's; give another with --metrics"};
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return {};
}

void MetricsServer::stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_->stop_serving();
  server_.reset();
}

std::string listen_address_text(const std::string& host, uint16_t port) {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

std::string metrics_url(const std::string& host, uint16_t port) {
  return fmt::format("http://{}/metrics", listen_address_text(host, port));
}

Result<MetricsSnapshot> metrics_snapshot(const std::string& iface, const Pinned& pins, const Health& health) {
  MetricsSnapshot s;
  s.iface = iface;
  s.version = levee_version();
  LV_TRY_ASSIGN(auto st, query_status(pins, false));
  LV_TRY_ASSIGN(auto c, interface_counters(pins));
  s.counters = c;
  s.classes = class_counters(st, c);
  s.status = std::move(st);
  health.read(s);
  return s;
}

}  // namespace levee::daemon
