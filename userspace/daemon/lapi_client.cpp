#include "daemon/lapi_client.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "core/units.hpp"
#include "daemon/block_signals.hpp"
#include "export/render_units.hpp"

namespace levee::daemon {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr time_t kConnectSeconds = 2;
// How often the watch looks at a request in progress: a deadline is kept to within this,
// and a flood of bytes overshoots the cap by what arrives in it.
constexpr auto kWatchTick = std::chrono::milliseconds(50);

enum class Cut { None, Deadline, Oversize, Cancelled };

std::string mib(size_t bytes) {
  return bytes >= (size_t{1} << 20) ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{} KiB", bytes >> 10);
}

}  // namespace

// The deadline and the byte cap of the request in progress, and cancel(): a thread of
// its own, idle between requests, which shuts the request's socket (httplib's stop())
// once one of them is passed, every tick until the request has ended.
class LapiClient::Watch {
 public:
  explicit Watch(httplib::Client& c) : c_(c) {
    BlockDaemonSignals blocked;
    thread_ = std::thread([this] { run(); });
  }
  ~Watch() {
    {
      std::lock_guard l(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  // httplib made a connection: its count of bytes starts at 0.
  void socket(int fd) {
    std::lock_guard l(mu_);
    fd_ = fd;
    base_ = 0;
  }
  void arm(std::chrono::nanoseconds timeout, uint64_t max_bytes) {
    {
      std::lock_guard l(mu_);
      armed_ = true;
      cut_ = cancelled_ ? Cut::Cancelled : Cut::None;
      deadline_ = SteadyClock::now() + timeout;
      max_ = max_bytes;
      // A kept-alive connection: what it received before this request does not count.
      base_ = fd_ >= 0 ? tcp_bytes_received(fd_).value_or(0) : 0;
    }
    cv_.notify_all();
  }
  Cut disarm() {
    std::lock_guard l(mu_);
    armed_ = false;
    return cut_;
  }
  void cancel() {
    {
      std::lock_guard l(mu_);
      cancelled_ = true;
      if (armed_) cut_ = Cut::Cancelled;
    }
    cv_.notify_all();
    c_.stop();
  }
  bool cancelled() const {
    std::lock_guard l(mu_);
    return cancelled_;
  }

 private:
  void run() {
    std::unique_lock l(mu_);
    while (!quit_) {
      if (!armed_) {
        cv_.wait(l);
        continue;
      }
      cv_.wait_for(l, kWatchTick);
      if (!armed_ || quit_) continue;
      if (cut_ == Cut::None) cut_ = judge();
      if (cut_ == Cut::None) continue;
      // Not under mu_: httplib calls socket() with its own lock held, which stop() takes.
      l.unlock();
      c_.stop();
      l.lock();
    }
  }
  Cut judge() const {
    if (cancelled_) return Cut::Cancelled;
    if (SteadyClock::now() >= deadline_) return Cut::Deadline;
    const auto got = fd_ >= 0 ? tcp_bytes_received(fd_) : std::nullopt;
    return got && *got >= base_ && *got - base_ > max_ ? Cut::Oversize : Cut::None;
  }

  httplib::Client& c_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, quit_ = false, cancelled_ = false;
  Cut cut_ = Cut::None;
  SteadyClock::time_point deadline_;
  int fd_ = -1;
  uint64_t base_ = 0, max_ = 0;
  std::thread thread_;
};

LapiClient::LapiClient(const CrowdsecSpec& spec, size_t max_body, std::chrono::seconds idle)
    : where_(fmt::format("http://{}:{}", spec.host.find(':') != std::string::npos ? "[" + spec.host + "]" : spec.host,
                         spec.port)),
      timeout_(spec.timeout_ns),
      max_body_(max_body),
      client_(std::make_unique<httplib::Client>(spec.host, spec.port)),
      watch_(std::make_unique<Watch>(*client_)) {
  const auto timeout_s = std::chrono::duration_cast<std::chrono::seconds>(timeout_);
  const time_t io = std::max<time_t>(1, std::min(idle, timeout_s).count());
  client_->set_connection_timeout(std::min<time_t>(kConnectSeconds, io), 0);
  client_->set_read_timeout(io, 0);
  client_->set_write_timeout(io, 0);
  client_->set_keep_alive(true);
  client_->set_socket_options([w = watch_.get()](socket_t fd) { w->socket(fd); });
}

LapiClient::~LapiClient() = default;

void LapiClient::cancel() { watch_->cancel(); }

bool LapiClient::cancelled() const { return watch_->cancelled(); }

Result<LapiReply> LapiClient::get(const std::string& path, const LapiHeaders& headers) {
  return send("GET", path, headers, nullptr);
}

Result<LapiReply> LapiClient::post(const std::string& path, const LapiHeaders& headers, const std::string& json) {
  return send("POST", path, headers, &json);
}

namespace {

// What came of a reply before the request failed.
struct Progress {
  bool head = false;  // its status line and headers came
  int status = 0;
  std::optional<uint64_t> declared;  // its Content-Length
  size_t got = 0;                    // bytes of its body
  bool over = false;                 // refused as larger than the cap
};

std::string so_far(const Progress& p) {
  if (!p.head) return "its status line and headers had not ended";
  if (p.declared) return fmt::format("{} of its {} bytes had come", group_digits(p.got), group_digits(*p.declared));
  return fmt::format("{} bytes of it had come", group_digits(p.got));
}

// The failure of a request as what happened, for the operator.
Error failure(const std::string& at, httplib::Error err, Cut cut, const Progress& p, std::chrono::nanoseconds timeout,
              size_t max_body) {
  const char* not_lapi = "is the url that of a CrowdSec Local API?";
  if (cut == Cut::Cancelled) return Error{fmt::format("{}: cancelled: levee run is stopping", at)};
  if (cut == Cut::Deadline)
    return Error{fmt::format("{}: no whole reply within {} ([crowdsec] timeout): {}", at,
                             format_duration(static_cast<uint64_t>(timeout.count())), so_far(p)),
                 0, "the Local API is stuck or too slow: see its log (raise timeout if its replies take this long)"};
  if (p.over && p.declared && *p.declared > max_body)
    return Error{fmt::format("{}: the reply declares {} bytes, more than the {} levee reads", at,
                             group_digits(*p.declared), mib(max_body)),
                 0, not_lapi};
  if (p.over)
    return Error{fmt::format("{}: the reply is larger than {}, the most levee reads", at, mib(max_body)), 0, not_lapi};
  if (cut == Cut::Oversize)
    return Error{
        fmt::format("{}: the reply {} larger than {}, the most levee reads", at,
                    p.head ? "is" : "has a status line and headers", mib(p.head ? max_body : kMaxLapiHeadBytes)),
        0, not_lapi};
  if (p.head)
    return Error{
        fmt::format("{}: the reply (HTTP {}) was cut short: {} when the connection ended", at, p.status, so_far(p)), 0,
        "the Local API, or something on the way, closed the connection mid-reply: see its log"};
  if (err == httplib::Error::Connection || err == httplib::Error::ConnectionTimeout)
    return Error{fmt::format("{}: cannot connect ({})", at, httplib::to_string(err)), 0, kLapiDownHint};
  if (err == httplib::Error::Read)
    return Error{fmt::format("{}: the connection ended before a reply came", at), 0,
                 std::string("see the Local API's log; ") + not_lapi};
  return Error{fmt::format("{}: {}", at, httplib::to_string(err)), 0, kLapiDownHint};
}

}  // namespace

Result<LapiReply> LapiClient::send(const std::string& method, const std::string& path, const LapiHeaders& headers,
                                   const std::string* json) {
  httplib::Request req;
  req.method = method;
  req.path = path;
  for (const auto& [k, v] : headers) req.headers.emplace(k, v);
  if (json) {
    req.body = *json;
    req.headers.emplace("Content-Type", "application/json");
  }
  LapiReply out;
  Progress p;
  req.response_handler = [&](const httplib::Response& r) {
    p.head = true;
    p.status = r.status;
    if (r.has_header("Content-Length"))
      p.declared = std::strtoull(r.get_header_value("Content-Length").c_str(), nullptr, 10);
    // Refused before a byte of the body: its length says it all.
    if (p.declared && *p.declared > max_body_) return p.over = true, false;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    if (out.body.size() + len > max_body_) return p.over = true, false;
    out.body.append(data, len);
    p.got = out.body.size();
    return true;
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  const auto t0 = SteadyClock::now();
  watch_->arm(timeout_, max_body_ + kMaxLapiHeadBytes);
  const bool ok = client_->send(req, res, err);
  const Cut cut = watch_->disarm();
  last_seconds_ = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  // A cut that lands as the reply ends changes nothing: it is whole.
  last_timed_out_ = !ok && cut == Cut::Deadline;
  if (ok && !p.over) {
    out.status = res.status;
    return out;
  }
  return failure(where_ + path, err, cut, p, timeout_, max_body_);
}

}  // namespace levee::daemon
