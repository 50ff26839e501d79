// options.cpp - the checks of the command line that need no interface (options.hpp).
// Their order is the order of the messages: the first mistake found is the one reported.
#include "options.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>

#include "packet.hpp"

namespace levee::flood {
namespace {

// Parses an address of the family `v6` says; throws UsageError prefixed with `what`.
void check_address(const std::string& a, bool v6, const char* what) {
  try {
    v6 ? (void)pkt::ipv6_bytes(a) : (void)pkt::ipv4_bytes(a);
  } catch (const std::exception& e) {
    throw UsageError(std::string(what) + e.what());
  }
}

}  // namespace

bool is_v6(const std::string& a) { return a.find(':') != std::string::npos; }

void check_options(Options& o) {
  check_address(o.dst, is_v6(o.dst), "--dst: ");
  if (!o.random.empty() && (!o.src.empty() || !o.src_base.empty() || o.sources != 1))
    throw UsageError("--random excludes --src, --src-base and --sources");
  if (!o.src_base.empty() && !o.src.empty()) throw UsageError("give --src or --src-base, not both");
  if (o.sources == 0) throw UsageError("--sources must be at least 1");
  if (o.method != "auto" && o.method != "live" && o.method != "packet")
    throw UsageError("--method must be auto, live or packet");
  if (o.method == "live" && o.rate > 0)
    throw UsageError("--method live sends at full speed only; use --method packet for --rate");
  if (o.rate < 0) throw UsageError("--rate must be >= 0");
  if (o.threads < 1 || o.threads > 64) throw UsageError("--threads must be 1..64");
  if (o.vlan > 4094) throw UsageError("--vlan must be 0..4094");
  if (o.batch < 1 || o.batch > 256) throw UsageError("--batch must be 1..256");
  if (o.duration < 0 && o.count == 0) o.duration = 10;
  if (o.duration < 0) o.duration = 0;
}

Proto proto_of(const Options& o) { return o.proto == "udp" ? Proto::Udp : o.proto == "syn" ? Proto::Syn : Proto::Icmp; }

size_t frame_size(const Options& o, bool v6, Proto proto) {
  size_t min_size = min_frame_size(v6, proto, o.vlan >= 0);
  if (o.size_given && o.size < min_size)
    throw UsageError("--size " + std::to_string(o.size) + " is below the " + std::to_string(min_size) +
                     " bytes these headers need");
  return std::max(o.size, min_size);
}

Sources source_mode(const Options& o, bool v6) {
  for (const std::string* a : {&o.src, &o.src_base}) {
    if (a->empty()) continue;
    if (is_v6(*a) != v6) throw UsageError("the source and --dst are not the same address family");
    check_address(*a, v6, "source: ");
  }
  Sources s;
  if (!o.random.empty()) {
    bool pv6 = false;
    try {
      parse_prefix(o.random, pv6, s.rbase, s.rmask);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--random: ") + e.what());
    }
    if (pv6 != v6) throw UsageError("--random and --dst are not the same address family");
    s.mode = SrcMode::Random;
  } else if (o.sources > 1) {
    if (o.src.empty() && o.src_base.empty()) throw UsageError("--sources needs --src-base");
    s.mode = SrcMode::RoundRobin;
  }
  return s;
}

void warn(const std::string& s) { std::fprintf(stderr, "levee-flood: warning: %s\n", s.c_str()); }
void note(const Options& o, const std::string& s) {
  if (o.verbose) std::fprintf(stderr, "levee-flood: %s\n", s.c_str());
}

}  // namespace levee::flood
