// fake_lapi.hpp - a CrowdSec Local API of the test's own, for what Debian's real one
// (lapi.hpp) never does: a reply sent one header line a second, cut short, longer than
// levee reads, a login that never ends. It listens on the receiver namespace's loopback
// (its socket is made in that namespace: nothing listens outside the sandbox) and
// serves each connection on a thread of its own, request after request (levee's clients
// keep connections alive), with the handler the test gives: what to send, and when.
// Every request is recorded. The destructor (and stop()) ends every connection and joins
// its threads, also when the test fails.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/fd.hpp"

namespace lvt {

struct LapiCall {
  std::string method, path;  // path with its query: "/v1/decisions/stream?startup=true"
  std::string head;          // the request line and headers as sent
  std::string body;
  bool has(std::string_view text) const { return head.find(text) != std::string::npos; }
};

// One connection, as a handler writes to it.
class LapiConn {
 public:
  LapiConn(int fd, const std::atomic<bool>& stopping) : fd_(fd), stopping_(stopping) {}
  // false once the client has gone or the server stops.
  bool send(std::string_view bytes);
  // Sleeps `ms`; false if the server stops meanwhile.
  bool pause(unsigned ms);
  // A whole reply: status, a JSON body and its length, kept alive.
  bool reply(int status, const std::string& json);
  // Ends the connection after this request (the handler's last word).
  void close() { closed_ = true; }
  bool closed() const { return closed_; }

 private:
  int fd_;
  const std::atomic<bool>& stopping_;
  bool closed_ = false;
};

class FakeLapi {
 public:
  using Handler = std::function<void(LapiConn&, const LapiCall&)>;
  FakeLapi(const std::string& ns, int port, Handler handler);
  ~FakeLapi() { stop(); }
  FakeLapi(const FakeLapi&) = delete;
  FakeLapi& operator=(const FakeLapi&) = delete;

  void set_handler(Handler h);
  std::vector<LapiCall> calls() const;
  // Calls whose "METHOD path" starts with `prefix` ("GET /v1/decisions/stream?startup").
  size_t count(std::string_view prefix) const;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void stop();

  // What a Local API answers to each kind of request, for handlers that behave.
  static void behave(LapiConn& c, const LapiCall& call);

 private:
  void accept_loop();
  void serve(levee::Fd fd);
  Handler handler() const;

  int port_;
  levee::Fd listen_;
  mutable std::mutex mu_;
  Handler handler_;
  std::vector<LapiCall> calls_;
  std::vector<std::thread> conns_;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
};

}  // namespace lvt
