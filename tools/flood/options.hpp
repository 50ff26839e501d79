// options.hpp - what the command line asks for, and the checks that need no interface:
// the values and their combinations, the frame size, and how the source address changes.
//
// A UsageError is the caller's mistake (exit status 2, "see --help"); anything else
// thrown later is an error of the run (exit status 1).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "spec.hpp"

namespace levee::flood {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string dev, dst, dst_mac, src, src_base, random, proto = "udp", method = "auto", netns;
  uint32_t sources = 1;
  uint16_t dport = 9, sport = 40000;
  int vlan = -1;
  size_t size = 64;
  bool size_given = false;
  double rate = 0, duration = -1;
  uint64_t count = 0;
  int threads = 1;
  unsigned batch = 64;
  bool json = false, verbose = false;
};

// How the source address changes: the mode, and for Random the prefix's base and mask
// (network byte order).
struct Sources {
  SrcMode mode = SrcMode::Fixed;
  std::array<uint32_t, 4> rbase{}, rmask{};
};

bool is_v6(const std::string& a);

// --dst and the values and combinations of the options; fills in the default duration.
// Throws UsageError.
void check_options(Options& o);

Proto proto_of(const Options& o);

// The frame length to send: --size, or what the headers need. Throws UsageError.
size_t frame_size(const Options& o, bool v6, Proto proto);

// Checks --src / --src-base / --random against --dst and says how the source changes.
// Throws UsageError.
Sources source_mode(const Options& o, bool v6);

// Messages on stderr: a warning always, a note with --verbose only.
void warn(const std::string& s);
void note(const Options& o, const std::string& s);

}  // namespace levee::flood
