// http_guard.hpp - the metrics endpoint's defence against slow and idle clients.
//
// cpp-httplib (Debian 12: 0.11.4) gives each connection one of its workers from accept to
// close, and its read timeout bounds each read, not the request: a client that sends a
// header every few seconds, or nothing, keeps a worker as long as it likes, and eight of
// them keep them all (the default pool). GuardedServer keeps httplib's parsing, routing
// and responses, and changes only where a connection waits: in one epoll thread (the
// waiting room), costing no worker, until its request head is complete in the socket.
// Then a worker of a small pool reads it and answers, under a deadline. A client can
// hold a place in the room, never a worker; the room is bounded, and when it is full the
// connection waiting longest makes room.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/fd.hpp"

namespace levee::daemon {

// What one client may take. The defaults are levee run's (docs/OPERATING.md, "Metrics").
struct HttpLimits {
  // A new connection's request head (request line and headers) is complete within this
  // of its accept, a kept-alive connection's within this of its next request's first byte.
  std::chrono::milliseconds request_timeout{5000};
  // A kept-alive connection that sends nothing for this long is closed.
  std::chrono::milliseconds idle_timeout{5000};
  // A worker's time for one request: reading the head and any body, writing the answer.
  std::chrono::milliseconds serve_timeout{5000};
  size_t workers = 4;
  size_t max_waiting = 256;       // connections in the waiting room; the longest waiting goes first
  size_t max_head = 8192;         // bytes of a request head (httplib's own line cap is 8 KiB)
  size_t max_body = 4096;         // bytes of a request body (a scrape has none): 413 beyond
  unsigned keep_alive_max = 100;  // requests on one connection
};

// Connections waiting, without a worker, for a complete request head. `admit` from any
// thread; `ready` is called on the room's thread for each connection whose head is in.
class WaitingRoom {
 public:
  using Ready = std::function<void(int fd, unsigned served)>;
  WaitingRoom(const HttpLimits& limits, Ready ready);
  ~WaitingRoom();  // stop()
  WaitingRoom(const WaitingRoom&) = delete;
  WaitingRoom& operator=(const WaitingRoom&) = delete;

  // Takes the connection (it closes it when it fails or expires); `served`: requests
  // answered on it so far (0: just accepted).
  void admit(int fd, unsigned served);
  // Ends the room's thread and closes every connection waiting; admit() then closes
  // what it is given.
  void stop();

 private:
  using Clock = std::chrono::steady_clock;
  struct Waiting {
    unsigned served = 0;
    Clock::time_point since;     // admitted
    Clock::time_point deadline;  // closed then
    bool started = false;        // its request's first byte came
  };
  enum class Head { Complete, Partial, Empty, Gone };

  void run();
  Head inspect(int fd);
  void drop(int fd);  // mu_ held
  int wait_ms();      // mu_ held: until the next deadline

  const HttpLimits limits_;
  Ready ready_;
  std::mutex mu_;
  std::map<int, Waiting> waiting_;
  Fd epoll_, wake_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<char[]> peek_;
  std::thread thread_;
};

// An httplib::Server whose connections go through a WaitingRoom and are answered by a
// fixed pool of workers. Configure routes as for any Server; bind and listen as usual.
// Threads start in the constructor: make it where signals are blocked.
class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(HttpLimits limits = {});
  ~GuardedServer() override;
  GuardedServer(const GuardedServer&) = delete;
  GuardedServer& operator=(const GuardedServer&) = delete;

  const HttpLimits& limits() const { return limits_; }
  // After Server::stop() and the end of listen_after_bind(): every connection closed,
  // the workers joined.
  void stop_serving();

 private:
  // httplib's accept loop hands each connection here (on its thread, through a task
  // queue that runs it at once): into the waiting room.
  bool process_and_close_socket(socket_t sock) override;
  void serve(int fd, unsigned served);

  HttpLimits limits_;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<httplib::ThreadPool> workers_;
  std::unique_ptr<WaitingRoom> room_;
};

}  // namespace levee::daemon
