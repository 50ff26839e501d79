// parse_fuzz.cpp - the datapath's packet parser (bpf/parse.h, compiled for userspace by
// parse_shim.c) against the reference parser (tests/model/parse_model.hpp) on every
// input: the same reason, and for a parsed frame the same family, source, kind, ports
// and the bytes from the transport header on.
// Any difference aborts with both answers.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "parse_model.hpp"

extern "C" {
struct lv_packet {
  uint32_t addr[4];
  uint8_t family;
  uint8_t kind : 4;  // bit-fields as parse.h has them, from the low bit
  uint8_t more_frags : 1;
  uint16_t dport;
  uint16_t sport;
  uint16_t l4_tail;
};
uint32_t lv_fuzz_parse(const uint8_t* data, size_t len, struct lv_packet* pkt);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A frame reaches the program with at least an Ethernet header (the kernel refuses
  // shorter ones); shorter inputs still must not read out of bounds.
  lv_packet pkt{};
  const uint32_t got = lv_fuzz_parse(data, size, &pkt);
  const levee::model::Parsed want = levee::model::parse_frame({data, size});
  bool same = got == want.reason;
  if (same && got == LV_R_CONFORMING)
    same = pkt.family == want.family && pkt.kind == want.kind && pkt.dport == want.dport && pkt.sport == want.sport &&
           pkt.l4_tail == want.l4_tail && (pkt.more_frags != 0) == want.more_frags &&
           std::memcmp(pkt.addr, want.addr.data(), 16) == 0;
  if (!same) {
    std::fprintf(stderr,
                 "parse.h: reason %u family %u kind %u dport %u sport %u l4_tail %u\nmodel:   reason %u family %u kind "
                 "%u dport %u "
                 "sport %u l4_tail %u\n",
                 got, pkt.family, pkt.kind, pkt.dport, pkt.sport, pkt.l4_tail, want.reason, want.family, want.kind,
                 want.dport, want.sport, want.l4_tail);
    std::abort();
  }
  return 0;
}
