#include "daemon/http_guard.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

namespace levee::daemon {
namespace {

using Clock = std::chrono::steady_clock;

void close_connection(int fd) {
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

// A connection as httplib reads and writes it, every wait bounded by one deadline: the
// read timeout of httplib's own stream bounds each read, so a client trickling bytes
// would keep a worker for ever. Reads are unbuffered (httplib reads a head byte by byte):
// a pipelined next request stays in the socket for the waiting room.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(int fd, Clock::time_point deadline) : fd_(fd), deadline_(deadline) {}

  bool is_readable() const override { return wait(POLLIN); }
  bool is_writable() const override { return wait(POLLOUT); }
  ssize_t read(char* ptr, size_t size) override {
    return retry([&] { return ::recv(fd_, ptr, size, MSG_DONTWAIT); }, POLLIN);
  }
  ssize_t write(const char* ptr, size_t size) override {
    return retry([&] { return ::send(fd_, ptr, size, MSG_DONTWAIT | MSG_NOSIGNAL); }, POLLOUT);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(::getpeername, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(::getsockname, ip, port); }
  socket_t socket() const override { return fd_; }

 private:
  // Until the socket is ready for `events` or the deadline passes.
  bool wait(short events) const {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_, events, 0};
      const int n = ::poll(&p, 1, static_cast<int>(left));
      if (n < 0 && errno == EINTR) continue;
      return n > 0;
    }
  }
  template <typename Op>
  ssize_t retry(Op op, short events) {
    for (;;) {
      const ssize_t n = op();
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if ((errno != EAGAIN && errno != EWOULDBLOCK) || !wait(events)) return -1;
    }
  }
  using NameOf = int (*)(int, sockaddr*, socklen_t*);
  void address(NameOf name_of, std::string& ip, int& port) const {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (name_of(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0 ||
        getnameinfo(reinterpret_cast<sockaddr*>(&a), len, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
      return;
    ip = host;
    port = std::atoi(serv);
  }

  int fd_;
  Clock::time_point deadline_;
};

// Runs each task at once, on the caller's thread: httplib's accept loop, whose task is
// only to hand the connection to the waiting room.
class AtOnce final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

}  // namespace

WaitingRoom::WaitingRoom(const HttpLimits& limits, Ready ready)
    : limits_(limits),
      ready_(std::move(ready)),
      epoll_(epoll_create1(EPOLL_CLOEXEC)),
      wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      peek_(new char[limits.max_head]) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_.get();
  epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &ev);
  thread_ = std::thread([this] { run(); });
}

WaitingRoom::~WaitingRoom() { stop(); }

void WaitingRoom::stop() {
  stop_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_.get(), &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  std::lock_guard g(mu_);
  while (!waiting_.empty()) drop(waiting_.begin()->first);
}

void WaitingRoom::admit(int fd, unsigned served) {
  std::lock_guard g(mu_);
  if (stop_) {
    close_connection(fd);
    return;
  }
  if (waiting_.size() >= limits_.max_waiting) {
    // Full: the one that has waited longest goes, so that a flood of connections can
    // delay a scraper by at most the room's turnover, never lock it out.
    const auto oldest = std::min_element(waiting_.begin(), waiting_.end(),
                                         [](const auto& a, const auto& b) { return a.second.since < b.second.since; });
    drop(oldest->first);
  }
  const auto now = Clock::now();
  waiting_[fd] = Waiting{served, now, now + (served ? limits_.idle_timeout : limits_.request_timeout), served == 0};
  // Edge-triggered: a head still incomplete is looked at again when more of it comes,
  // not on every wait. A head already there is reported once at the add.
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) drop(fd);
}

WaitingRoom::Head WaitingRoom::inspect(int fd) {
  const ssize_t n = ::recv(fd, peek_.get(), limits_.max_head, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return Head::Gone;
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Head::Empty : Head::Gone;
  if (std::string_view(peek_.get(), static_cast<size_t>(n)).find("\r\n\r\n") != std::string_view::npos)
    return Head::Complete;
  // A head longer than any we answer will not become one.
  return static_cast<size_t>(n) >= limits_.max_head ? Head::Gone : Head::Partial;
}

void WaitingRoom::drop(int fd) {
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  waiting_.erase(fd);
  close_connection(fd);
}

int WaitingRoom::wait_ms() {
  auto next = Clock::now() + std::chrono::seconds(1);
  for (const auto& [fd, w] : waiting_) next = std::min(next, w.deadline);
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();
  return static_cast<int>(std::max<int64_t>(ms, 0));
}

void WaitingRoom::run() {
  std::vector<epoll_event> events(64);
  std::vector<std::pair<int, unsigned>> heads;
  while (!stop_) {
    int timeout = 0;
    {
      std::lock_guard g(mu_);
      timeout = wait_ms();
    }
    const int n = epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), timeout);
    heads.clear();
    {
      std::lock_guard g(mu_);
      const auto now = Clock::now();
      for (int i = 0; i < std::max(n, 0); ++i) {
        const int fd = events[i].data.fd;
        const auto it = waiting_.find(fd);
        if (it == waiting_.end()) continue;  // the wake-up, or dropped meanwhile
        switch (inspect(fd)) {
          case Head::Complete:
            epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
            heads.emplace_back(fd, it->second.served);
            waiting_.erase(it);
            break;
          case Head::Gone:
            drop(fd);
            break;
          case Head::Partial:
            if (!it->second.started) {  // a kept-alive connection's next request began
              it->second.started = true;
              it->second.deadline = now + limits_.request_timeout;
            }
            break;
          case Head::Empty:
            break;
        }
      }
      std::vector<int> expired;
      for (const auto& [fd, w] : waiting_)
        if (w.deadline <= now) expired.push_back(fd);
      for (int fd : expired) drop(fd);
    }
    uint64_t drained = 0;
    [[maybe_unused]] const ssize_t r = ::read(wake_.get(), &drained, sizeof drained);
    for (const auto& [fd, served] : heads) ready_(fd, served);
  }
}

GuardedServer::GuardedServer(HttpLimits limits) : limits_(limits) {
  set_payload_max_length(limits_.max_body);
  set_read_timeout(std::chrono::duration_cast<std::chrono::seconds>(limits_.serve_timeout).count());
  set_write_timeout(std::chrono::duration_cast<std::chrono::seconds>(limits_.serve_timeout).count());
  new_task_queue = [] { return new AtOnce; };
  workers_ = std::make_unique<httplib::ThreadPool>(limits_.workers);
  room_ = std::make_unique<WaitingRoom>(
      limits_, [this](int fd, unsigned served) { workers_->enqueue([this, fd, served] { serve(fd, served); }); });
}

GuardedServer::~GuardedServer() { stop_serving(); }

void GuardedServer::stop_serving() {
  if (stopping_.exchange(true)) return;
  room_->stop();         // no more heads for the workers; the connections waiting closed
  workers_->shutdown();  // what is queued is closed unanswered (serve() sees stopping_)
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  room_->admit(sock, 0);
  return true;
}

void GuardedServer::serve(int fd, unsigned served) {
  if (stopping_) {
    close_connection(fd);
    return;
  }
  DeadlineStream s(fd, Clock::now() + limits_.serve_timeout);
  const bool last = served + 1 >= limits_.keep_alive_max;
  bool closed = false;
  const bool ok = process_request(s, last, closed, nullptr);
  if (ok && !closed && !last && !stopping_)
    room_->admit(fd, served + 1);
  else
    close_connection(fd);
}

}  // namespace levee::daemon
