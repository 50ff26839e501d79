#include "export/reference.hpp"

#include <fmt/format.h>

#include "core/event_types.hpp"
#include "core/reasons.hpp"
#include "datapath/map_table.hpp"

namespace levee {
namespace {

constexpr std::string_view kBegin = "<!-- generated: ";
constexpr std::string_view kEnd = "<!-- end: ";

std::string reasons_table() {
  std::string out = "| reason | verdict | meaning |\n|---|---|---|\n";
  for (const ReasonInfo& r : kReasons)
    out += fmt::format("| `{}` | {} | {} |\n", r.name, lv_reason_drops(r.id) ? "drop" : "pass", r.help);
  return out;
}

std::string would_drop_list() {
  std::string out;
  for (const ReasonInfo& r : kReasons)
    if (would_drop_reason(r.id)) out += fmt::format("{}`{}`", out.empty() ? "" : ", ", r.name);
  return out + ".\n";
}

std::string event_types_table() {
  std::string out = "| type | what happened |\n|---|---|\n";
  for (const EventTypeInfo& t : kEventTypes) out += fmt::format("| `{}` | {} |\n", t.name, t.help);
  return out;
}

// The program's maps as its object declares them (datapath/map_table.hpp); entries, key and
// value in the object's units (a ring buffer's entries are its bytes).
std::string maps_table() {
  auto maps = program_maps();
  if (!maps) return "the program's maps could not be read: " + maps.error().message() + "\n";
  std::string out = "| map | type | entries | key B | value B | flags |\n|---|---|--:|--:|--:|---|\n";
  for (const MapFacts& m : *maps) {
    std::string flags = m.mmapable ? "mmapable" : "";
    if (m.no_prealloc) flags += std::string(flags.empty() ? "" : ", ") + "no prealloc";
    out +=
        fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", m.name, m.type, m.entries, m.key_size, m.value_size, flags);
  }
  return out;
}

// "NAME" of a line "<!-- generated: NAME (levee-docgen) -->", or "" for another line.
std::string_view begin_name(std::string_view line) {
  if (line.substr(0, kBegin.size()) != kBegin) return {};
  line.remove_prefix(kBegin.size());
  return line.substr(0, line.find_first_of(" -"));
}

}  // namespace

std::optional<std::string> generated_section(std::string_view name) {
  if (name == "reasons") return reasons_table();
  if (name == "would_drop") return would_drop_list();
  if (name == "event_types") return event_types_table();
  if (name == "maps") return maps_table();
  return std::nullopt;
}

Result<std::string> regenerate_sections(const std::string& text, const std::string& file,
                                        std::vector<std::string>* sections) {
  std::string out;
  size_t at = 0, line_no = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    const size_t next = nl == std::string::npos ? text.size() : nl + 1;
    const std::string_view line(text.data() + at, next - at);
    ++line_no;
    out += line;
    at = next;
    const std::string_view name = begin_name(line);
    if (name.empty()) continue;
    const auto body = generated_section(name);
    if (!body)
      return Error{fmt::format("{}:{}: no generated section is named {}", file, line_no, name), 0,
                   "see export/reference.hpp for the names"};
    if (sections) sections->emplace_back(name);
    // Skip the old body, up to the end line, which is kept.
    const std::string end = fmt::format("{}{} -->", kEnd, name);
    const size_t end_at = text.find(end, at);
    if (end_at == std::string::npos || (end_at > 0 && text[end_at - 1] != '\n'))
      return Error{fmt::format("{}:{}: the generated section {} has no line \"{}\"", file, line_no, name, end), 0,
                   "end it with that line"};
    for (size_t i = at; i < end_at; ++i) line_no += text[i] == '\n';
    out += *body;
    at = end_at;
  }
  return out;
}

}  // namespace levee
