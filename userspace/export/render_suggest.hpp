// render_suggest.hpp - `levee suggest`: what each class's sources did in the window and
// the limits suggested from it, as text or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "export/suggest.hpp"

namespace levee {

// {"interface", "window_s", "interval_s", "walks", "headroom", "min_sources",
//  "classes": [{"name", "sources", "packets_per_s", "bytes_per_s", "burst_packets",
//  "burst_bytes" (each {"p50", "p90", "p99", "max"}), "arrivals", "arrivals_per_s",
//  "arrivals_peak_per_s", "suggest": null (too few sources) or {"rate", "burst",
//  "bytes_rate", "bytes_burst", "new_sources"} (each {"value", "covers"}: covers the
//  share of sources, for new_sources of intervals, 0..1)}]}
nlohmann::json suggest_json(const SuggestReport& r);
std::string suggest_text(const SuggestReport& r);

}  // namespace levee
