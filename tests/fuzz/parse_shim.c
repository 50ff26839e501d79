/* parse_shim.c - bpf/parse.h compiled for userspace (C: it does arithmetic on void *),
 * behind one function the C++ fuzz harness calls. */
#include <stddef.h>
#include <stdint.h>

#include "parse.h"

uint32_t lv_fuzz_parse(const uint8_t* data, size_t len, struct lv_packet* pkt) {
  struct lv_cursor cur = {.pos = (void*)data, .end = (void*)(data + len)};

  return lv_parse(&cur, pkt);
}
