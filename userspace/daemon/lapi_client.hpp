// lapi_client.hpp - requests to the CrowdSec Local API, for the bouncer's pulls and the
// machine's logins and alerts alike, with what the server (or anything at its address)
// can do to levee bounded, and said as what happened.
//
// cpp-httplib 0.11 (Debian 12) bounds each read, not a request: a server sending one
// header line a second held the stream pull forever. And it reads a status or header
// line of any length, and any body into memory. So every request here has:
// - a deadline for the whole exchange ([crowdsec] timeout), the connection included;
// - a cap on its reply's body (a declared Content-Length above it is refused before a
//   byte of the body is read) and on everything the connection receives meanwhile (the
//   head's lines too: the kernel's count of the bytes received, TCP_INFO);
// enforced by a watch thread that shuts the request's socket (httplib's stop(), the one
// call it makes safe from another thread) once either is passed. And an error says
// which: no connection, no whole reply within the deadline, a reply larger than the cap,
// or a reply cut short, with how much of it came.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "policy/crowdsec.hpp"

namespace httplib {
class Client;
}

namespace levee::daemon {

// The status line and headers of a reply, beyond its body's cap: a Local API sends a
// few hundred bytes of them.
inline constexpr size_t kMaxLapiHeadBytes = size_t{64} << 10;

inline constexpr const char* kLapiDownHint =
    "is the CrowdSec Local API running there? (crowdsec, or systemctl status crowdsec)";

using LapiHeaders = std::vector<std::pair<std::string, std::string>>;

struct LapiReply {
  int status = 0;
  std::string body;
};

// The kernel's count of the bytes a TCP socket received (TCP_INFO); nothing if it is
// not one.
std::optional<uint64_t> tcp_bytes_received(int fd);

class LapiClient {
 public:
  // A client of the Local API at spec's url: connected within 2 s, each request whole
  // within spec.timeout_ns, each reply's body at most `max_body` bytes; idle reads give
  // up after `idle` (or the deadline, if sooner). Connections are kept alive.
  LapiClient(const CrowdsecSpec& spec, size_t max_body, std::chrono::seconds idle);
  ~LapiClient();
  LapiClient(const LapiClient&) = delete;
  LapiClient& operator=(const LapiClient&) = delete;

  Result<LapiReply> get(const std::string& path, const LapiHeaders& headers);
  Result<LapiReply> post(const std::string& path, const LapiHeaders& headers, const std::string& json);
  // Ends a request in progress, and any made after, from another thread (the daemon's
  // stop): they fail as cancelled().
  void cancel();
  bool cancelled() const;
  // "http://host:port", for messages.
  const std::string& where() const { return where_; }
  // How long the last request took, whatever its end; and whether its deadline ended it.
  double last_seconds() const { return last_seconds_; }
  bool last_timed_out() const { return last_timed_out_; }

 private:
  class Watch;
  Result<LapiReply> send(const std::string& method, const std::string& path, const LapiHeaders& headers,
                         const std::string* json);

  std::string where_;
  std::chrono::nanoseconds timeout_;
  size_t max_body_;
  std::unique_ptr<httplib::Client> client_;
  std::unique_ptr<Watch> watch_;
  double last_seconds_ = 0;
  bool last_timed_out_ = false;
};

}  // namespace levee::daemon
