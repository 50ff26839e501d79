/* bpf_helpers.h for a userspace build of the datapath's pure parsers (tests/fuzz):
 * parse.h needs only __always_inline from it; no BPF helper is called. */
#ifndef LEVEE_FUZZ_BPF_HELPERS_H
#define LEVEE_FUZZ_BPF_HELPERS_H
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#endif
