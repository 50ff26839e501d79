// kernel.hpp - preflight checks and small wrappers around the bpf() syscall.
#pragma once

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

// The interface's index in this network namespace.
Result<unsigned> iface_index(const std::string& iface);

// Open a pinned BPF object.
Result<Fd> open_pin(const std::string& path);

// The name of an interface index, or "" if it is gone.
std::string iface_name(unsigned ifindex);

// Route libbpf's messages: quiet (warnings kept for errors) or verbose (all).
void set_libbpf_verbose(bool verbose);
// The last warnings libbpf printed (the verifier log tail on a refused load).
std::string libbpf_last_warnings();

}  // namespace levee
