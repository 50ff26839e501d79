// same_filter.hpp - whether the filter pinned on an interface is the one an attach asks
// for: what `levee attach` does when the interface is attached already.
//
// The same filter is the same policy as compiled (classes with their limits and modes,
// overrides, the interface's settings and monitor switch, where it came from), the same
// list entries of the file, the same XDP mode asked for and the same map sizes. Its
// state (buckets, bans, counters), the entries added at run time and the generation are
// not settings: an attach that finds them changed still finds the same filter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/result.hpp"
#include "datapath/attach.hpp"
#include "datapath/pins.hpp"
#include "levee_abi.h"

namespace levee {

// What differs, one phrase each ("XDP mode generic (attached with auto)", "class dns",
// "the file's list entries"); empty: the filter is already the one asked for.
Result<std::vector<std::string>> attach_differences(const Pinned& p, const AttachOptions& o, const Clocks& clk);

// The settings that apply at attach only (the XDP mode asked for, the maps' sizes) where
// one is given and differs from the pinned filter's: "max_sources 2000000 (attached with
// 1000000)". What a reload of a file that gives them keeps as it is.
struct AttachSettings {
  std::optional<lv_attach_mode> mode;
  std::optional<uint32_t> max_sources, max_bans;
};
std::vector<std::string> attach_setting_differences(const AttachSettings& want, const Pinned& p, const lv_control& ctl);

}  // namespace levee
