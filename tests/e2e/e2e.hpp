// e2e.hpp - shared fixture and assertions of the end-to-end tests.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

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

  std::unique_ptr<Sandbox> sb_;
};

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

// No XDP program on the interface, no pin directory, no staging directory.
inline void expect_nothing_left(const Sandbox& sb, const std::string& ns, const std::string& ifname) {
  XdpInfo x = xdp_query(ns, ifname);
  EXPECT_FALSE(x.any()) << ifname << " has an XDP program: mode " << x.attach_mode << " prog " << x.prog_id;
  EXPECT_FALSE(sb.pinned(ifname)) << sb.pin_dir(ifname) << " exists";
  auto staging = pin_entries(ifname + ":");
  EXPECT_TRUE(staging.empty()) << "staging directory left: " << (staging.empty() ? "" : staging.front());
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

}  // namespace lvt
