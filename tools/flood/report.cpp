// report.cpp - printing the outcome of a run (report.hpp). The JSON keys are an
// interface (scripts/bench.sh and the tests read them; README.md lists them).
#include "report.hpp"

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "netdev.hpp"

namespace levee::flood {
namespace {

// When the run was, and how fast.
struct Timing {
  double seconds = 0, pps = 0, start_unix = 0, end_unix = 0;
};

Timing timing_of(const Outcome& out) {
  Timing t;
  t.seconds = static_cast<double>(out.end_ns - out.start_ns) / 1e9;
  t.pps = t.seconds > 0 ? static_cast<double>(out.packets) / t.seconds : 0;
  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  double now_unix = static_cast<double>(rt.tv_sec) + static_cast<double>(rt.tv_nsec) / 1e9;
  t.end_unix = now_unix - static_cast<double>(mono_ns() - out.end_ns) / 1e9;
  t.start_unix = t.end_unix - t.seconds;
  return t;
}

const char* src_mode_name(SrcMode mode) {
  return mode == SrcMode::Fixed ? "single" : mode == SrcMode::RoundRobin ? "round-robin" : "random";
}

void print_json(const Options& o, const RunSummary& run, const Outcome& out, const Timing& t) {
  const FloodSpec& spec = run.spec;
  nlohmann::json j;
  j["packets"] = out.packets;
  j["seconds"] = t.seconds;
  j["pps"] = t.pps;
  j["method"] = run.method;
  j["threads"] = run.plan.threads;
  j["per_thread"] = out.per_thread;
  j["dev"] = o.dev;
  j["frame_size"] = spec.frame.size();
  j["bytes"] = out.packets * spec.frame.size();
  j["family"] = spec.v6 ? "ipv6" : "ipv4";
  j["proto"] = o.proto;
  j["vlan"] = o.vlan >= 0 ? nlohmann::json(o.vlan) : nlohmann::json(nullptr);
  j["sources"] = src_mode_name(spec.mode);
  j["source_count"] = spec.mode == SrcMode::RoundRobin ? nlohmann::json(o.sources) : nlohmann::json(nullptr);
  j["dst_mac"] = format_mac(run.req.dst_mac);
  j["rate"] = run.plan.rate;
  j["start_unix"] = t.start_unix;
  j["end_unix"] = t.end_unix;
  j["dev_tx_dropped"] = run.dropped ? nlohmann::json(*run.dropped) : nlohmann::json(nullptr);
  j["schedule_slipped"] = out.slipped;
  j["interrupted"] = g_stop.load();
  if (!out.errors.empty()) j["error"] = out.errors.front();
  std::printf("%s\n", j.dump().c_str());
}

void print_text(const Options& o, const RunSummary& run, const Outcome& out, const Timing& t) {
  const FloodSpec& spec = run.spec;
  char rate_s[64];
  if (t.pps >= 1e6)
    std::snprintf(rate_s, sizeof rate_s, "%.0f pps (%.2f Mpps)", t.pps, t.pps / 1e6);
  else
    std::snprintf(rate_s, sizeof rate_s, "%.0f pps", t.pps);
  std::printf("levee-flood: %llu packets in %.3f s = %s; %s, %d thread%s, %zu-byte %s/%s%s, %s source%s%s\n",
              static_cast<unsigned long long>(out.packets), t.seconds, rate_s, run.method.c_str(), run.plan.threads,
              run.plan.threads == 1 ? "" : "s", spec.frame.size(),
              o.proto == "syn"   ? "SYN"
              : o.proto == "udp" ? "UDP"
                                 : "ICMP",
              spec.v6 ? "IPv6" : "IPv4", o.vlan >= 0 ? (", VLAN " + std::to_string(o.vlan)).c_str() : "",
              src_mode_name(spec.mode), spec.mode == SrcMode::Fixed ? "" : "s",
              run.dropped ? (", " + o.dev + " dropped " + std::to_string(*run.dropped)).c_str() : "");
}

void print_warnings(const Options& o, const RunSummary& run, const Outcome& out) {
  if (run.dropped && *run.dropped * 100 > out.packets && run.method == "live")
    warn(o.dev + " dropped " + std::to_string(*run.dropped) + " frames: the peer's ring was full (a slow receiver" +
         (run.plan.threads > 1 ? ", or fewer peer rx queues than threads" : std::string()) + ")");
  if (out.slipped) warn("the schedule slipped by " + std::to_string(out.slipped) + " packets (the sender stalled)");
  for (const auto& e : out.errors) std::fprintf(stderr, "levee-flood: error: %s\n", e.c_str());
}

}  // namespace

int report(const Options& o, const RunSummary& run, const Outcome& out) {
  Timing t = timing_of(out);
  if (o.json)
    print_json(o, run, out, t);
  else
    print_text(o, run, out, t);
  print_warnings(o, run, out);
  return out.errors.empty() ? 0 : kExitError;
}

}  // namespace levee::flood
