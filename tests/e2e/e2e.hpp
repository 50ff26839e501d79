// e2e.hpp - shared fixture and assertions of the end-to-end tests.
#pragma once

#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "sandbox.hpp"
#include "traffic.hpp"

namespace lvt {

class E2e : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!running_as_root()) GTEST_SKIP() << "end-to-end tests need root (netns, XDP, bpffs)";
    sb_ = std::make_unique<Sandbox>();
  }
  void TearDown() override { sb_.reset(); }

  Sandbox& sb() { return *sb_; }

  // levee attach that must succeed.
  void attach(const std::vector<std::string>& extra, const std::string& ifname = "") {
    std::vector<std::string> args{"attach", ifname.empty() ? sb().rx_if() : ifname};
    args.insert(args.end(), extra.begin(), extra.end());
    RunResult r = sb().levee(args);
    ASSERT_EQ(r.code, 0) << r.describe();
  }

  // levee detach that must succeed.
  void detach(const std::string& ifname = "") {
    RunResult r = sb().levee({"detach", ifname.empty() ? sb().rx_if() : ifname});
    ASSERT_EQ(r.code, 0) << r.describe();
  }

  std::unique_ptr<Sandbox> sb_;
};

// The address family a test runs in. TEST_P(Suite, Name) on E2eFamily, instantiated
// with both families (below), runs as Suite.Name/Ipv4 and Suite.Name/Ipv6.
struct Family {
  int af;
  const char* name;  // the test name's suffix
  bool v6() const { return af == AF_INET6; }
  // The receiver's address, and the sender's extra source addresses (Addrs).
  const char* rx() const { return v6() ? Addrs::rx6 : Addrs::rx4; }
  const std::vector<std::string>& src() const { return v6() ? Addrs::src6() : Addrs::src4(); }
  // What differs between the families in a test: ipv4 in one, ipv6 in the other.
  template <class T>
  T pick(T ipv4, T ipv6) const {
    return v6() ? ipv6 : ipv4;
  }
};
inline constexpr Family kIpv4{AF_INET, "Ipv4"}, kIpv6{AF_INET6, "Ipv6"};
inline void PrintTo(const Family& f, std::ostream* os) { *os << f.name; }

class E2eFamily : public E2e, public ::testing::WithParamInterface<Family> {
 protected:
  const Family& family() const { return GetParam(); }
};
// INSTANTIATE_TEST_SUITE_P(, Suite, kBothFamilies, family_name);
inline const auto kBothFamilies = ::testing::Values(kIpv4, kIpv6);
inline std::string family_name(const ::testing::TestParamInfo<Family>& i) { return i.param.name; }

// The acceptance tolerance of a measured count or rate: +-5%.
inline constexpr double kTol = 0.05;

// A count as a double, for EXPECT_NEAR and arithmetic with rates.
template <std::integral T>
double d(T v) {
  return static_cast<double>(v);
}

// A number for a message: 4 significant digits, or whole counts as such.
inline std::string num(double v) {
  char b[48];
  if (std::fabs(v) >= 1e4 || v == std::floor(v))
    std::snprintf(b, sizeof b, "%.0f", v);
  else
    std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

// A share for a message, in percent: "0.198%".
inline std::string pct(double ratio) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f%%", 100.0 * ratio);
  return b;
}

// A paced UDP flow from one source to the receiver's IPv4 address, waited for.
inline SendLog send_udp(Sandbox& sb, const std::string& src, double pps, double seconds) {
  Sender s({.ns = sb.tx_ns(), .src = src, .dst = Addrs::rx4, .pps = pps, .seconds = seconds}, start_soon(50));
  return s.join();
}

// A paced flow of TCP SYNs (raw frames, SYN without ACK) from src to the receiver's
// IPv4 address, port dport.
inline Flow syn_flow(const Sandbox& sb, const std::string& src, uint16_t dport, double pps, double seconds) {
  return Flow{.ns = sb.tx_ns(),
              .src = src,
              .dst = Addrs::rx4,
              .pps = pps,
              .seconds = seconds,
              .frame = syn_frame(src, Addrs::rx4, dport),
              .dev = sb.tx_if()};
}

// Measured numbers go to the test log and into the XML report.
inline void report(const std::string& key, double value) {
  ::testing::Test::RecordProperty(key, std::to_string(value));
  std::printf("[measured] %s = %.3f\n", key.c_str(), value);
  std::fflush(stdout);
}

// The CLI contract for a failure: the exit code and exactly one line on stderr
// starting "levee: ".
inline void expect_error(const RunResult& r, int code, const std::string& mentions = "") {
  EXPECT_EQ(r.code, code) << r.describe();
  EXPECT_EQ(r.err.rfind("levee: ", 0), 0u) << r.describe();
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not one line:" << r.describe();
  EXPECT_TRUE(!r.err.empty() && r.err.back() == '\n') << r.describe();
  if (!mentions.empty()) {
    EXPECT_NE(r.err.find(mentions), std::string::npos) << r.describe();
  }
}

// No XDP program on the interface, no pin directory, no staging directory, no clsact
// qdisc.
inline void expect_nothing_left(const Sandbox& sb, const std::string& ns, const std::string& ifname) {
  XdpInfo x = xdp_query(ns, ifname);
  EXPECT_FALSE(x.any()) << ifname << " has an XDP program: mode " << x.attach_mode << " prog " << x.prog_id;
  EXPECT_FALSE(sb.pinned(ifname)) << sb.pin_dir(ifname) << " exists";
  auto staging = pin_entries(ifname + ":");
  EXPECT_TRUE(staging.empty()) << "staging directory left: " << (staging.empty() ? "" : staging.front());
  // levee's tc filter and the clsact qdisc it created (the sandbox makes none); an
  // interface that is not there has none.
  const RunResult qdiscs = run({"tc", "-n", ns, "qdisc", "show", "dev", ifname});
  EXPECT_EQ(qdiscs.out.find("clsact"), std::string::npos) << ifname << " keeps a clsact qdisc: " << qdiscs.out;
}

// The one value of an attachment's pinned lv_policy (struct lv_control, levee_abi.h), as
// bytes: the keys, halves and places levee keeps there, read as the datapath reads them.
inline std::vector<uint8_t> pinned_control(const std::string& pin_dir) {
  const int fd = bpf_obj_get((pin_dir + "/lv_policy").c_str());
  if (fd < 0) throw std::runtime_error("open " + pin_dir + "/lv_policy");
  bpf_map_info info{};
  uint32_t len = sizeof info;
  std::vector<uint8_t> v;
  const uint32_t key = 0;
  int err = bpf_obj_get_info_by_fd(fd, &info, &len);
  if (!err) {
    v.resize(info.value_size);
    err = bpf_map_lookup_elem(fd, &key, v.data());
  }
  close(fd);
  if (err) throw std::runtime_error("read " + pin_dir + "/lv_policy");
  return v;
}

// Every JSON object of a text of JSON lines (a command's output, an events file).
inline std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> v;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line))
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  return v;
}

// One class's counters of `levee stats --json` ("classes"), as the difference s1 - s0.
struct ClassCounts {
  double passed = 0, dropped = 0, passed_bytes = 0, dropped_bytes = 0;
};
inline ClassCounts class_delta(const nlohmann::json& s0, const nlohmann::json& s1, const std::string& name) {
  auto get = [&](const nlohmann::json& s, const char* k) {
    const auto& c = s.at("classes");
    return c.contains(name) ? static_cast<double>(c.at(name).at(k).get<uint64_t>()) : 0.0;
  };
  return {get(s1, "passed_packets") - get(s0, "passed_packets"),
          get(s1, "dropped_packets") - get(s0, "dropped_packets"), get(s1, "passed_bytes") - get(s0, "passed_bytes"),
          get(s1, "dropped_bytes") - get(s0, "dropped_bytes")};
}

// The object of one class (by name) in `levee show --json`, or null.
inline nlohmann::json show_class(const nlohmann::json& show, const std::string& name) {
  for (const auto& c : show.at("classes"))
    if (c.at("name") == name) return c;
  return nullptr;
}

inline uint64_t ju(const nlohmann::json& j, const char* a, const char* b = nullptr, const char* c = nullptr) {
  const nlohmann::json* p = &j.at(a);
  if (b) p = &p->at(b);
  if (c) p = &p->at(c);
  return p->get<uint64_t>();
}

// ---- policies ----------------------------------------------------------------------

// The policy the tests of classes, lists and reloads start from: a UDP class of 200 pps,
// burst 50, beside a loose default class. A test appends the tables it needs.
inline const std::string kUdpClassPolicy = R"([[class]]
name = "udp"
match.proto = "udp"
rate = 200
burst = 50

[default]
rate = "10k"
burst = "1k"
)";

// The same with a class for TCP SYNs of 100 pps, burst 20 (matched after "udp").
inline const std::string kUdpAndSynPolicy = kUdpClassPolicy + R"(
[[class]]
name = "syn"
match.proto = "tcp"
match.syn = true
rate = 100
burst = 20
)";

// ---- levee stats --json by reason ---------------------------------------------------

// stats["verdict"]["reason"] (packets), or -1 when levee does not report it.
inline int64_t stat_reason(const nlohmann::json& stats, const std::string& verdict, const std::string& reason) {
  if (!stats.is_object() || !stats.contains(verdict)) return -1;
  const auto& v = stats.at(verdict);
  if (!v.is_object() || !v.contains(reason) || !v.at(reason).is_number()) return -1;
  return v.at(reason).get<int64_t>();
}

// s1 - s0 of a reason; missing in s0 counts as 0, missing in s1 gives -1.
inline int64_t stat_reason_delta(const nlohmann::json& s0, const nlohmann::json& s1, const std::string& verdict,
                                 const std::string& reason) {
  const int64_t b = stat_reason(s1, verdict, reason);
  if (b < 0) return -1;
  return b - std::max<int64_t>(0, stat_reason(s0, verdict, reason));
}

// The keys of stats[verdict] with their packets, "verdict: k=v k=v ...".
inline std::string stat_reasons_text(const nlohmann::json& stats, const std::string& verdict) {
  if (!stats.is_object() || !stats.contains(verdict) || !stats.at(verdict).is_object()) return verdict + ": (absent)";
  std::string s = verdict + ":";
  for (const auto& [k, v] : stats.at(verdict).items()) s += " " + k + "=" + v.dump();
  return s;
}

}  // namespace lvt
