// metrics_fuzz.cpp - the metrics endpoint of `levee run --metrics`, without a socket.
//
// What a request goes through is cpp-httplib's: its request parser and its router pick
// one of levee's two routes (GET /metrics, GET /), and levee reads nothing of the path,
// the query or the headers. So two halves, the first byte of the input choosing:
//
//  - the request: raw bytes through httplib::Server::process_request (a stream over the
//    input instead of a socket) with the routes levee registers
//    (daemon/metrics_server.cpp). Properties: every request is answered with a status
//    line, and a 200 for /metrics carries exactly the exposition. Debian's httplib is a
//    prebuilt library without coverage, so libFuzzer explores it blind: this half is a
//    crash and leak check of what levee links, not a search inside httplib.
//  - the exposition (export/metrics: render_metrics): a snapshot whose interface name,
//    class names and counters come from the input, kept to what levee accepts
//    (valid_iface_name, valid_name). Properties: the interface name is one the kernel
//    could give; the text is well-formed Prometheus exposition 0.0.4 (each family's
//    HELP and TYPE once, before its samples; every sample of its family; label values
//    that unescape to the interface and class names; numeric values).
#include <httplib.h>

#include <fuzzer/FuzzedDataProvider.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/iface.hpp"
#include "export/metrics.hpp"
#include "fuzz.hpp"
#include "policy/validate.hpp"

namespace levee {
namespace {

using fuzz::escaped;

// ---- the request --------------------------------------------------------------------

// A connection that has sent `in` and then closed.
class InputStream : public httplib::Stream {
 public:
  explicit InputStream(std::string_view in) : in_(in) {}
  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, in_.size());
    std::copy_n(in_.data(), n, ptr);
    in_.remove_prefix(n);
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { ip = "127.0.0.1", port = 40000; }
  void get_local_ip_and_port(std::string& ip, int& port) const override { ip = "127.0.0.1", port = 9100; }
  socket_t socket() const override { return INVALID_SOCKET; }
  std::string out;

 private:
  std::string_view in_;
};

const std::string& exposition() {
  static const std::string text = [] {
    MetricsSnapshot s;
    s.iface = "eth0";
    s.version = "fuzz";
    return render_metrics(s);
  }();
  return text;
}

// levee's routes, as MetricsServer::start registers them, on a server that is handed
// connections instead of listening.
class RequestPath : public httplib::Server {
 public:
  RequestPath() {
    Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(exposition(), "text/plain; version=0.0.4; charset=utf-8");
    });
    Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("levee run eth0: metrics at /metrics\n", "text/plain; charset=utf-8");
    });
  }
  std::string answer(std::string_view request) {
    InputStream s(request);
    bool closed = false;
    process_request(s, true, closed, nullptr);
    return std::move(s.out);
  }
};

void check_request(std::string_view request) {
  static RequestPath server;  // its routes are regexes: built once
  const std::string out = server.answer(request);
  if (out.empty()) return;  // nothing read that asks for an answer (the connection closed first)
  LV_PROPERTY(out.rfind("HTTP/1.1 ", 0) == 0 && out.size() >= 12 && std::isdigit(static_cast<unsigned char>(out[9])),
              "{} answered {}", escaped(request.substr(0, 200)), escaped(out.substr(0, 200)));
  const bool metrics = request.rfind("GET /metrics HTTP/1.1\r\n", 0) == 0;
  // Compressed (Prometheus asks for gzip), the body is not the text to compare.
  const bool plain = out.substr(0, out.find("\r\n\r\n")).find("Content-Encoding:") == std::string::npos;
  if (metrics && plain && out.rfind("HTTP/1.1 200", 0) == 0)
    LV_PROPERTY(out.size() >= exposition().size() &&
                    out.compare(out.size() - exposition().size(), std::string::npos, exposition()) == 0,
                "{}: a 200 without the exposition", escaped(request.substr(0, 200)));
}

// ---- the exposition -----------------------------------------------------------------

// The kernel's dev_valid_name(): 1 to 15 bytes, not "." or "..", no '/', ':' or blank
// (isspace in the C locale), no NUL (a C string).
bool kernel_iface_name(std::string_view n) {
  if (n.empty() || n.size() >= 16 || n == "." || n == "..") return false;
  for (char c : n)
    if (c == '\0' || c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string unescape(std::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != '\\' || i + 1 == v.size()) {
      out += v[i];
      continue;
    }
    const char c = v[++i];
    out += c == 'n' ? '\n' : c;
  }
  return out;
}

// One sample line: name{k="v",...} value. The labels, or an error.
struct Sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  std::string value;
  std::string error;
};

Sample parse_sample(std::string_view l) {
  Sample s;
  const size_t brace = l.find('{');
  if (brace == std::string_view::npos) return s.error = "no labels", s;
  s.name = l.substr(0, brace);
  size_t i = brace + 1;
  while (i < l.size() && l[i] != '}') {
    const size_t eq = l.find("=\"", i);
    if (eq == std::string_view::npos) return s.error = "a label without =\"", s;
    std::string key(l.substr(i, eq - i));
    size_t j = eq + 2;
    std::string raw;
    for (; j < l.size() && l[j] != '"'; ++j) {
      if (l[j] == '\\' && j + 1 < l.size()) {
        if (l[j + 1] != '\\' && l[j + 1] != '"' && l[j + 1] != 'n')
          return s.error = "an escape the format does not have", s;
        raw += l[j++];
      }
      raw += l[j];
    }
    if (j == l.size()) return s.error = "an unterminated label value", s;
    s.labels.emplace_back(std::move(key), unescape(raw));
    i = j + 1;
    if (i < l.size() && l[i] == ',') ++i;
  }
  if (i + 1 >= l.size() || l[i + 1] != ' ') return s.error = "no value after the labels", s;
  s.value = l.substr(i + 2);
  char* end = nullptr;
  std::strtod(s.value.c_str(), &end);
  if (s.value.empty() || *end != '\0') s.error = "a value that is not a number";
  return s;
}

MetricsSnapshot snapshot(FuzzedDataProvider& in) {
  MetricsSnapshot s;
  s.iface = in.ConsumeRandomLengthString(16);
  s.version = "fuzz";
  s.status.mode = in.PickValueInArray({"native", "generic", ""});
  s.status.generation = in.ConsumeIntegral<uint64_t>();
  s.status.max_sources = in.ConsumeIntegral<uint32_t>();
  const size_t n = in.ConsumeIntegralInRange<size_t>(0, 4);
  for (size_t i = 0; i < n; ++i) {
    ClassCounters k;
    k.name = in.ConsumeRandomLengthString(LV_NAME_LEN);
    k.id = static_cast<unsigned>(i);
    k.counters.passed.packets = in.ConsumeIntegral<uint64_t>();
    k.counters.dropped.bytes = in.ConsumeIntegral<uint64_t>();
    if (valid_name(k.name)) s.classes.push_back(k);
    s.status.admitted.push_back(in.ConsumeIntegral<uint64_t>());
  }
  for (auto& r : s.counters.by_reason) r.packets = in.ConsumeIntegral<uint64_t>();
  if (in.ConsumeBool()) {
    WalkCounts w;
    w.sources = in.ConsumeIntegral<uint64_t>();
    w.at_unix_ns = in.ConsumeIntegral<uint64_t>();
    w.seconds = in.ConsumeFloatingPointInRange<double>(0, 3600);
    s.walk = w;
  }
  if (in.ConsumeBool()) {
    DaemonHealth d;
    d.reloads_ok = in.ConsumeIntegral<uint64_t>();
    d.events["limited"] = in.ConsumeIntegral<uint64_t>();
    s.daemon = d;
  }
  return s;
}

void check_exposition(FuzzedDataProvider& in) {
  const MetricsSnapshot s = snapshot(in);
  if (!valid_iface_name(s.iface)) return;
  LV_PROPERTY(kernel_iface_name(s.iface), "valid_iface_name({}) holds, but the kernel gives no interface that name",
              escaped(s.iface));
  const std::string text = render_metrics(s);
  LV_PROPERTY(!text.empty() && text.back() == '\n', "an exposition that does not end its last line");
  std::set<std::string> typed;
  std::string family;
  std::vector<std::string> classes;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = text.find('\n', pos);
    const std::string_view l(text.data() + pos, end - pos);
    pos = end + 1;
    if (l.rfind("# HELP ", 0) == 0) {
      family = std::string(l.substr(7, l.find(' ', 7) - 7));
      continue;
    }
    if (l.rfind("# TYPE ", 0) == 0) {
      LV_PROPERTY(l == "# TYPE " + family + " counter" || l == "# TYPE " + family + " gauge", "{} after the HELP of {}",
                  escaped(l), family);
      LV_PROPERTY(typed.insert(family).second, "family {} twice", family);
      continue;
    }
    const Sample m = parse_sample(l);
    LV_PROPERTY(m.error.empty(), "{}: {} (interface {})", escaped(l), m.error, escaped(s.iface));
    LV_PROPERTY(m.name == family && typed.count(family), "a sample {} of family {}", m.name, family);
    LV_PROPERTY(!m.labels.empty() && m.labels[0].first == "iface" && m.labels[0].second == s.iface,
                "{} does not name interface {}", escaped(l), escaped(s.iface));
    if (family == "levee_class_admitted_sources_total") classes.push_back(m.labels.at(1).second);
  }
  for (size_t i = 0; i < classes.size(); ++i)
    LV_PROPERTY(classes[i] == s.classes[i].name, "class {} exposed as {}", s.classes[i].name, escaped(classes[i]));
}

}  // namespace
}  // namespace levee

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] & 1) {
    levee::check_request(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  } else {
    FuzzedDataProvider in(data + 1, size - 1);
    levee::check_exposition(in);
  }
  return 0;
}
