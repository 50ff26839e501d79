// frame.hpp - from the options and the interface to the frame sent: its MACs, its
// source address (the options', or the first address of --dev) and the spec both send
// methods share (spec.hpp).
#pragma once

#include <cstddef>

#include "device.hpp"
#include "options.hpp"
#include "spec.hpp"

namespace levee::flood {

// The frame's addresses and headers. The destination MAC is --dst-mac, else the peer's,
// else broadcast. Throws UsageError (a bad --dst-mac, no source to be found).
FrameRequest frame_request(const Options& o, const Device& dev, Proto proto, size_t size, const Sources& src);

// The template frame and how its source changes; notes what is sent with --verbose.
// Throws UsageError when the round robin runs past the end of the address space.
FloodSpec make_spec(const Options& o, const FrameRequest& req, const Sources& src);

}  // namespace levee::flood
