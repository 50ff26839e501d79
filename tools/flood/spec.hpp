// spec.hpp - what to send: the template frame and how its source address changes.
//
// Both methods share this: the live method hands the numbers to flood.bpf.c's .rodata,
// the packet method applies the same rewrite in userspace (SourceGen + rewrite_source).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "packet.hpp"

namespace levee::flood {

enum class SrcMode : uint32_t { Fixed = 0, RoundRobin = 1, Random = 2 };  // = flood.bpf.c
enum class Proto { Udp, Syn, Icmp };

struct FrameRequest {
  pkt::Mac dst_mac{}, src_mac{};
  std::string src;  // template source (base address / prefix address)
  std::string dst;
  bool v6 = false;
  Proto proto = Proto::Udp;
  uint16_t sport = 40000, dport = 9;
  int vlan = -1;    // -1: untagged
  size_t size = 0;  // wanted frame length without FCS (0: the smallest valid frame)
};

struct FloodSpec {
  std::vector<uint8_t> frame;  // the template, correct for base[] as source
  size_t hdr_len = 0;          // Ethernet .. end of the transport header
  bool v6 = false;
  SrcMode mode = SrcMode::Fixed;
  uint32_t rr_count = 1;
  std::array<uint32_t, 4> base{};  // network byte order
  std::array<uint32_t, 4> mask{};  // network byte order, random bits (Random)
  size_t src_off = 0;
  size_t ip_csum_off = 0;  // 0: none (IPv6)
  size_t l4_csum_off = 0;  // 0: does not cover the address (ICMPv4)
  bool l4_udp = false;
  uint32_t ip_csum_base = 0, l4_csum_base = 0;  // see flood.bpf.c
};

// Smallest frame for these headers (Ethernet minimum 60 included).
size_t min_frame_size(bool v6, Proto proto, bool vlan);

// Builds the template and fills in the offsets and checksum bases; mode, rr_count,
// base and mask are left to the caller (base defaults to the template source).
FloodSpec build_spec(const FrameRequest& req);

// Parses "a.b.c.d/len" or "x::/len": network-order words and the random-bit mask.
// Throws std::invalid_argument.
void parse_prefix(const std::string& s, bool& v6, std::array<uint32_t, 4>& base, std::array<uint32_t, 4>& mask);

std::string format_addr(bool v6, const std::array<uint32_t, 4>& words);

// Next source address of one sender, as flood.bpf.c computes it.
class SourceGen {
 public:
  SourceGen(const FloodSpec& spec, uint64_t seed);
  void next(std::array<uint32_t, 4>& out);

 private:
  uint32_t rand32();
  const FloodSpec& spec_;
  uint32_t idx_ = 0;
  uint64_t rng_;
};

// Write `addr` as the source of `frame` (a copy of spec.frame) and fix the checksums.
void rewrite_source(const FloodSpec& spec, uint8_t* frame, const std::array<uint32_t, 4>& addr);

}  // namespace levee::flood
