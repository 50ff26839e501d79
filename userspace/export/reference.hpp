// reference.hpp - the parts of the docs that the code can write: tables and lists a
// person would otherwise copy from the code by hand, and forget.
//
// A generated part is a section of a Markdown file between two comment lines,
//   <!-- generated: NAME (levee-docgen) -->
//   <!-- end: NAME -->
// levee-docgen (tools/docgen) rewrites each such section of the files it is given with
// what the code generates now; `levee-docgen --check` (the unit test Docs.Generated)
// fails, naming the file and the section, when one lags.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace levee {

// The Markdown of a generated section (its lines, each ending in '\n'), or nullopt for a
// name there is none of:
//   reasons      the table of drop and pass reasons: name, verdict, meaning (core/reasons.hpp)
//   would_drop   the reasons monitor mode counts as would-be drops, as a list of names
//   event_types  the table of event types and what each says happened (core/event_types.hpp)
//   maps         the program's maps: type, entries, key and value sizes (datapath/map_table.hpp)
std::optional<std::string> generated_section(std::string_view name);

// `text` (the file `file`) with each generated section replaced by what the code
// generates now; an unknown name, or a section without its end, is an error naming the
// file and line. `sections` gets the names of the sections met, in order.
Result<std::string> regenerate_sections(const std::string& text, const std::string& file,
                                        std::vector<std::string>* sections = nullptr);

}  // namespace levee
