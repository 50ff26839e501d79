#include "policy/config_edit.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <map>

#include "core/units.hpp"
#include "policy/config.hpp"

namespace levee {
namespace {

constexpr size_t kContext = 3;

// A value replaced on its line: columns [begin, end), 1-based, as toml++ counts them.
struct Replace {
  size_t begin = 0, end = 0;
  std::string text;
};

// What changes in the file: values replaced by line, lines inserted after a line
// (0: before the first).
struct Edits {
  std::map<size_t, std::vector<Replace>> replace;
  std::map<size_t, std::vector<std::string>> insert;
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    if (nl == std::string::npos) {
      lines.push_back(text.substr(at));
      break;
    }
    lines.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  return lines;
}

std::string indent_of(const std::string& line) { return line.substr(0, line.find_first_not_of(" \t")); }

// The new_sources to write into a class whose admission in the file is `now`: a budget
// is changed; the autopilot or "off" is kept, unless asked, and a note says which.
std::optional<uint64_t> new_sources_to_set(const ClassLimits& l, Admission now, std::vector<std::string>& notes) {
  if (!l.new_sources || now == Admission::Budget) return l.new_sources;
  const std::string budget = config_count(*l.new_sources);
  const bool autopilot = now == Admission::Auto;
  if (!l.budget_new_sources) {
    notes.push_back(fmt::format(
        "class {}: new_sources stays \"{}\" ({}); a number there is a fixed budget that {}: "
        "--new-sources-budget writes the one suggested ({})",
        l.name, admission_name(now), autopilot ? "the autopilot admits new sources" : "every new source gets state",
        autopilot ? "turns the class's autopilot off" : "refuses new sources over it", budget));
    return std::nullopt;
  }
  notes.push_back(fmt::format(
      "class {}: new_sources = {} {}", l.name, budget,
      autopilot ? "turns the class's autopilot off: a fixed budget replaces \"auto\" (leave the line out to keep it)"
                : "replaces \"off\": new sources over it are refused"));
  return l.new_sources;
}

// The edits of one class's table.
void edit_table(const toml::table& t, const ClassLimits& l, Admission admission, const std::vector<std::string>& lines,
                Edits& e, std::vector<std::string>& notes) {
  const std::optional<uint64_t> new_sources = new_sources_to_set(l, admission, notes);
  const std::pair<const char*, const std::optional<uint64_t>&> keys[] = {{"rate", l.rate},
                                                                         {"burst", l.burst},
                                                                         {"bytes_rate", l.bytes_rate},
                                                                         {"bytes_burst", l.bytes_burst},
                                                                         {"new_sources", new_sources}};
  // Where a missing key goes: after the last of these the table has, else its header.
  size_t after = t.source().begin.line;
  for (const char* k : {"name", "rate", "burst", "bytes_rate", "bytes_burst", "new_sources"})
    if (const toml::node* n = t.get(k)) after = std::max<size_t>(after, n->source().end.line);
  const std::string indent = after > 0 && after <= lines.size() && after != t.source().begin.line
                                 ? indent_of(lines[after - 1])
                                 : std::string();
  for (const auto& [key, value] : keys) {
    if (!value) continue;
    const std::string text = config_count(*value);
    if (const toml::node* n = t.get(key)) {
      const auto& s = n->source();
      if (s.begin.line != s.end.line || s.begin.line == 0 || s.begin.line > lines.size()) {
        notes.push_back(fmt::format("class {}: {} spans lines; set it to {} by hand", l.name, key, text));
        continue;
      }
      e.replace[s.begin.line].push_back({s.begin.column, s.end.column, text});
    } else if (t.is_inline()) {
      notes.push_back(fmt::format("class {}: an inline table; add {} = {} by hand", l.name, key, text));
    } else {
      e.insert[after].push_back(fmt::format("{}{} = {}", indent, key, text));
    }
  }
}

std::string replaced(std::string line, std::vector<Replace> rs) {
  // From the right, so that each replacement's columns still hold.
  std::sort(rs.begin(), rs.end(), [](const Replace& a, const Replace& b) { return a.begin > b.begin; });
  for (const Replace& r : rs)
    if (r.begin >= 1 && r.end >= r.begin && r.end - 1 <= line.size())
      line = line.substr(0, r.begin - 1) + r.text + line.substr(r.end - 1);
  return line;
}

std::vector<LineOp> ops_of(const std::vector<std::string>& lines, const Edits& e, bool no_newline) {
  // Removed lines before the lines that replace them, as diff(1) writes a change of a
  // run of lines: the added ones wait for the next kept line.
  std::vector<LineOp> ops, added;
  auto inserts = [&](size_t after) {
    if (auto it = e.insert.find(after); it != e.insert.end())
      for (const std::string& s : it->second) added.push_back({'+', s});
  };
  auto flush = [&] {
    ops.insert(ops.end(), added.begin(), added.end());
    added.clear();
  };
  inserts(0);
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t no = i + 1;
    std::string now = lines[i];
    if (auto it = e.replace.find(no); it != e.replace.end()) now = replaced(lines[i], it->second);
    // A last line without a newline that gets lines after it changes too: it gains one.
    const bool gains_newline = no_newline && no == lines.size() && e.insert.contains(no);
    if (now == lines[i] && !gains_newline) {
      flush();
      ops.push_back({' ', now});
    } else {
      ops.push_back({'-', lines[i]});
      added.push_back({'+', now});
    }
    inserts(no);
  }
  flush();
  return ops;
}

}  // namespace

std::string config_count(uint64_t v) {
  const std::string s = format_count(v);
  return s == std::to_string(v) ? s : fmt::format("\"{}\"", s);
}

std::string unified_diff(const std::vector<LineOp>& ops, const std::string& name, bool no_newline_at_end) {
  // Each op's line number in the old and the new text (1-based, of the line it is or
  // would be), and where each text's last line is.
  std::vector<size_t> old_no(ops.size()), new_no(ops.size());
  size_t o = 0, n = 0, old_last = ops.size(), new_last = ops.size();
  for (size_t i = 0; i < ops.size(); ++i) {
    old_no[i] = o + 1;
    new_no[i] = n + 1;
    if (ops[i].kind != '+') ++o, old_last = i;
    if (ops[i].kind != '-') ++n, new_last = i;
  }
  std::string out;
  size_t i = 0;
  while (i < ops.size()) {
    while (i < ops.size() && ops[i].kind == ' ') ++i;
    if (i == ops.size()) break;
    const size_t begin = i > kContext ? i - kContext : 0;
    size_t end = i;  // one past the hunk's last change
    for (;;) {
      while (end < ops.size() && ops[end].kind != ' ') ++end;
      size_t next = end;
      while (next < ops.size() && ops[next].kind == ' ') ++next;
      if (next == ops.size() || next - end > 2 * kContext) break;
      end = next;
    }
    const size_t stop = std::min(ops.size(), end + kContext);
    size_t old_count = 0, new_count = 0;
    for (size_t j = begin; j < stop; ++j) {
      old_count += ops[j].kind != '+';
      new_count += ops[j].kind != '-';
    }
    if (out.empty()) out = fmt::format("--- {}\n+++ {}\n", name, name);
    // An empty side starts at the line before (unified diff's convention).
    out += fmt::format("@@ -{},{} +{},{} @@\n", old_count ? old_no[begin] : old_no[begin] - 1, old_count,
                       new_count ? new_no[begin] : new_no[begin] - 1, new_count);
    for (size_t j = begin; j < stop; ++j) {
      out += fmt::format("{}{}\n", ops[j].kind, ops[j].text);
      if (no_newline_at_end && (j == old_last || j == new_last)) out += "\\ No newline at end of file\n";
    }
    i = stop;
  }
  return out;
}

Result<ConfigDiff> config_limits_diff(const std::string& text, const std::string& name,
                                      const std::vector<ClassLimits>& limits) {
  LV_TRY_ASSIGN(const Policy p, parse_config(text, name));
  const toml::table root = toml::parse(std::string_view(text), std::string_view(name));  // valid: parsed above
  const std::vector<std::string> lines = split_lines(text);
  const bool no_newline = !text.empty() && text.back() != '\n';
  ConfigDiff out;
  Edits e;
  for (const ClassLimits& l : limits) {
    const auto it =
        std::find_if(p.classes.begin(), p.classes.end(), [&](const ClassSpec& c) { return c.name == l.name; });
    if (it == p.classes.end()) {
      out.notes.push_back(fmt::format("class {} is not in {}: left out", l.name, name));
      continue;
    }
    const auto i = static_cast<size_t>(it - p.classes.begin());
    // The last class is [default]; the others are [[class]] tables in the file's order.
    const toml::table* t = i + 1 == p.classes.size() ? root["default"].as_table() : root["class"][i].as_table();
    if (t) edit_table(*t, l, it->admission_in_force(), lines, e, out.notes);
  }
  out.diff = unified_diff(ops_of(lines, e, no_newline), name, no_newline);
  return out;
}

}  // namespace levee
