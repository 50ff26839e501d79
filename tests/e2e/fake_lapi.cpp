#include "fake_lapi.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <stdexcept>

#include "sandbox.hpp"
#include "traffic.hpp"

namespace lvt {
namespace {

// Waits up to 100 ms for fd to be readable; false if not (yet).
bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 100) > 0;
}

// The value of a request header (case-insensitive name), or "".
std::string header(const std::string& head, const std::string& name) {
  size_t at = head.find("\r\n");
  while (at != std::string::npos && at + 2 < head.size()) {
    const size_t start = at + 2, end = head.find("\r\n", start);
    const std::string line = head.substr(start, end - start);
    if (line.size() > name.size() && line[name.size()] == ':' &&
        strncasecmp(line.data(), name.data(), name.size()) == 0)
      return line.substr(line.find_first_not_of(' ', name.size() + 1));
    at = end;
  }
  return "";
}

std::string rfc3339_in(time_t seconds) {
  const time_t t = time(nullptr) + seconds;
  tm u{};
  gmtime_r(&t, &u);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &u);
  return buf;
}

}  // namespace

bool LapiConn::send(std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    if (stopping_) return false;
    pollfd p{fd_, POLLOUT, 0};
    if (poll(&p, 1, 100) == 0) continue;  // a client not reading: wait, but not past stop()
    const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool LapiConn::pause(unsigned ms) {
  for (unsigned waited = 0; waited < ms; waited += 10) {
    if (stopping_) return false;
    usleep(10'000);
  }
  return !stopping_;
}

bool LapiConn::reply(int status, const std::string& json) {
  return send("HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\nContent-Length: " +
              std::to_string(json.size()) + "\r\n\r\n" + json);
}

void FakeLapi::behave(LapiConn& c, const LapiCall& call) {
  if (call.path.starts_with("/v1/decisions/stream")) {
    c.reply(200, R"({"new":null,"deleted":null})");
  } else if (call.path == "/v1/watchers/login" || call.path == "/v1/refresh_token") {
    c.reply(200, R"({"code":200,"expire":")" + rfc3339_in(3600) + R"(","token":"fake0token"})");
  } else if (call.path == "/v1/alerts") {
    c.reply(201, R"(["1"])");
  } else {
    c.reply(404, "{}");
  }
}

FakeLapi::FakeLapi(const std::string& ns, int port, Handler handler) : port_(port), handler_(std::move(handler)) {
  listen_ = socket_in(ns, AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(listen_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  socklen_t len = 0;
  const sockaddr_storage a = sockaddr_of("127.0.0.1", static_cast<uint16_t>(port), len);
  if (bind(listen_.get(), reinterpret_cast<const sockaddr*>(&a), len) != 0 || listen(listen_.get(), 64) != 0)
    sys_fail("fake Local API on port " + std::to_string(port));
  acceptor_ = std::thread([this] { accept_loop(); });
}

void FakeLapi::set_handler(Handler h) {
  std::lock_guard l(mu_);
  handler_ = std::move(h);
}

FakeLapi::Handler FakeLapi::handler() const {
  std::lock_guard l(mu_);
  return handler_;
}

std::vector<LapiCall> FakeLapi::calls() const {
  std::lock_guard l(mu_);
  return calls_;
}

size_t FakeLapi::count(std::string_view prefix) const {
  std::lock_guard l(mu_);
  size_t n = 0;
  for (const LapiCall& c : calls_) n += (c.method + " " + c.path).starts_with(prefix);
  return n;
}

void FakeLapi::stop() {
  stopping_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> conns;
  {
    std::lock_guard l(mu_);
    conns.swap(conns_);
  }
  for (std::thread& t : conns) t.join();
}

void FakeLapi::accept_loop() {
  while (!stopping_) {
    if (!readable(listen_.get())) continue;
    levee::Fd fd(accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd.valid()) continue;
    std::lock_guard l(mu_);
    conns_.emplace_back([this, f = std::make_shared<levee::Fd>(std::move(fd))] { serve(std::move(*f)); });
  }
}

// Requests one after another on one connection, each handed to the handler whole.
void FakeLapi::serve(levee::Fd fd) {
  std::string in;
  LapiConn conn(fd.get(), stopping_);
  while (!stopping_ && !conn.closed()) {
    const size_t end = in.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (!readable(fd.get())) continue;
      char buf[65536];
      const ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
      if (n <= 0) return;
      in.append(buf, static_cast<size_t>(n));
      continue;
    }
    LapiCall call;
    call.head = in.substr(0, end + 2);
    const size_t sp1 = call.head.find(' '), sp2 = call.head.find(' ', sp1 + 1);
    call.method = call.head.substr(0, sp1);
    call.path = call.head.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string length = header(call.head, "Content-Length");
    const size_t body = length.empty() ? 0 : std::stoul(length);
    while (in.size() < end + 4 + body && !stopping_) {
      if (!readable(fd.get())) continue;
      char buf[65536];
      const ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
      if (n <= 0) return;
      in.append(buf, static_cast<size_t>(n));
    }
    call.body = in.substr(end + 4, body);
    in.erase(0, end + 4 + body);
    {
      std::lock_guard l(mu_);
      calls_.push_back(call);
    }
    handler()(conn, call);
  }
}

}  // namespace lvt
