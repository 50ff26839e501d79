// markdown.hpp - reading levee's own docs in tests: a file whole, one section of it (a
// heading and what follows up to the next heading of its level or above), and the
// rows of the tables in a text. For the tests that hold the docs to the code: the
// generated sections, the options each command's help lists, the JSON each command
// prints (tests/docs/json_doc.hpp).
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace lvdocs {

#ifndef LEVEE_SOURCE_DIR
#error "LEVEE_SOURCE_DIR names the source tree, where docs/ is"
#endif

// docs/NAME, whole; throws if it cannot be read.
inline std::string read_doc(const std::string& name) {
  const std::string path = std::string(LEVEE_SOURCE_DIR) + "/docs/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The section under the heading line `heading` ("## levee stats"), without the heading:
// up to the next heading with as many '#' or fewer, outside fenced code blocks (where a
// line "# levee attach ..." is a shell prompt). Empty if there is no such heading.
inline std::string section(const std::string& text, const std::string& heading) {
  const std::string at = "\n" + heading + "\n";
  const size_t begin = text.find(at);
  if (begin == std::string::npos) return {};
  const size_t level = heading.find(' ');
  const size_t body = begin + at.size();
  bool fenced = false;
  for (size_t line = body; line < text.size();) {
    const size_t nl = text.find('\n', line);
    const size_t next = nl == std::string::npos ? text.size() : nl + 1;
    if (text.compare(line, 3, "```") == 0) fenced = !fenced;
    if (!fenced && text[line] == '#') {
      const size_t hashes = text.find_first_not_of('#', line) - line;
      if (hashes <= level && text[line + hashes] == ' ') return text.substr(body, line - body);
    }
    line = next;
  }
  return text.substr(body);
}

// The cells of a table row "| a | b |", trimmed; empty for a line that is no row, and for
// the rule under a table's header ("|---|---|").
inline std::vector<std::string> row_cells(const std::string& line) {
  std::vector<std::string> cells;
  if (line.size() < 2 || line.front() != '|' || line.back() != '|') return cells;
  std::string cell;
  bool code = false;
  for (size_t i = 1; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '`') code = !code;
    if (c == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
      continue;
    }
    if (c == '|' && !code) {
      const size_t a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
      cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
      cell.clear();
      continue;
    }
    cell += c;
  }
  if (!cells.empty() && cells[0].find_first_not_of("-: ") == std::string::npos) return {};
  return cells;
}

// The lines of a text.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace lvdocs
