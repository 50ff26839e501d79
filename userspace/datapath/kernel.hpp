// kernel.hpp - preflight checks and small wrappers around the bpf() syscall.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/fd.hpp"
#include "core/result.hpp"

namespace levee {

// Root, or the capabilities loading and attaching XDP needs. `action` names the
// command in the error ("attach").
Status check_privileges(std::string_view action);

// /sys/fs/bpf must be a mounted BPF filesystem for pins.
Status check_bpffs();

// What every command that loads levee or opens its pins checks first: both of the
// above, then that nobody else owns or may write levee's pin directory
// (check_pin_root). `action` names the command in the error ("attach", "stats").
Status preflight(std::string_view action);

// The interface's index in this network namespace.
Result<unsigned> iface_index(const std::string& iface);

// Open a pinned BPF object.
Result<Fd> open_pin(const std::string& path);

// The name of an interface index, or "" if it is gone.
std::string iface_name(unsigned ifindex);

// How an XDP program is attached to the interface: "native", "generic", "offload",
// "multi", "none", or "unknown" when the kernel cannot say.
std::string attached_mode(unsigned ifindex);

// A map's max_entries as the kernel sized it, or 0 when it cannot be read.
uint32_t map_max_entries(int map_fd);

// Route libbpf's messages: quiet (warnings kept for errors) or verbose (all).
void set_libbpf_verbose(bool verbose);
// The last warnings libbpf printed (the verifier log tail on a refused load).
std::string libbpf_last_warnings();

}  // namespace levee
