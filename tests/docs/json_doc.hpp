// json_doc.hpp - the JSON levee prints, held to docs/JSON.md: its tables, read as the
// description of each command's object, and a check of an object against one.
//
// A table follows a line `<!-- json: NAME -->` and has the columns field, type, meaning.
// A field cell names one or more fields in backquotes: the first is a path from the top
// of the object (`interfaces[].classes[].name`: `[]` an array's elements, `*` any key of
// an object whose keys are names), and each later one is either a path too or a name
// beside the first (`prog_id`, `link_id`). The type is words joined by " or ": string,
// integer, number, boolean, object, array, null, absent (may be left out).
//
// check() finds every field the object has that the table does not describe, every
// field the table describes that the object lacks, and every field of another type;
// and it records which described fields it saw, so that a test can make sure each
// described field was seen in some output (no field described that nothing prints).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "markdown.hpp"

namespace lvdocs {

// path -> the types it may have
using JsonSchema = std::map<std::string, std::set<std::string>>;

inline std::string parent_of(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

inline std::string child_of(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : parent + "." + name;
}

// The table under `<!-- json: NAME -->` in a Markdown text; throws if there is none, or
// if a row names no field or a type it does not know.
inline JsonSchema json_schema(const std::string& md, const std::string& name) {
  const std::string marker = "<!-- json: " + name + " -->\n";
  const size_t at = md.find(marker);
  if (at == std::string::npos) throw std::runtime_error("no table \"" + name + "\" (" + marker + ")");
  static const std::set<std::string> kTypes = {"string", "integer", "number", "boolean",
                                               "object", "array",   "null",   "absent"};
  const std::regex quoted("`([^`]+)`");
  JsonSchema out;
  bool header = true;
  for (const std::string& line : lines_of(md.substr(at + marker.size()))) {
    if (line.empty() || line[0] != '|') break;
    const std::vector<std::string> cells = row_cells(line);
    if (cells.empty()) continue;  // the rule under the header
    if (header) {
      header = false;
      continue;
    }
    if (cells.size() != 3) throw std::runtime_error(name + ": a row without 3 cells: " + line);
    std::set<std::string> types;
    size_t from = 0;
    for (;;) {
      const size_t to = cells[1].find(" or ", from);
      const std::string word = cells[1].substr(from, to == std::string::npos ? std::string::npos : to - from);
      if (!kTypes.contains(word)) throw std::runtime_error(name + ": unknown type \"" + word + "\" in: " + line);
      types.insert(word);
      if (to == std::string::npos) break;
      from = to + 4;
    }
    std::vector<std::string> paths;
    for (auto it = std::sregex_iterator(cells[0].begin(), cells[0].end(), quoted); it != std::sregex_iterator(); ++it) {
      const std::string field = (*it)[1];
      const bool path = paths.empty() || field.find_first_of(".[") != std::string::npos;
      paths.push_back(path ? field : child_of(parent_of(paths.front()), field));
    }
    if (paths.empty()) throw std::runtime_error(name + ": a row names no field: " + line);
    for (const std::string& p : paths) {
      if (out.contains(p)) throw std::runtime_error(name + ": " + p + " is described twice");
      out[p] = types;
    }
  }
  if (out.empty()) throw std::runtime_error(name + ": the table is empty");
  return out;
}

// Several tables as one: events of a type are the common table's fields and the type's.
inline JsonSchema merged(JsonSchema a, const JsonSchema& b) {
  for (const auto& [path, types] : b) a[path] = types;
  return a;
}

struct JsonCheck {
  std::vector<std::string> problems;  // one line each
  std::set<std::string> seen;         // described paths met
};

inline std::string type_of(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_object()) return "object";
  return "array";
}

namespace detail {

inline void check_value(const nlohmann::json& v, const std::string& path, const JsonSchema& s, JsonCheck& c);

// The fields of an object at `path` (a path of the schema: "" for the top).
inline void check_object(const nlohmann::json& o, const std::string& path, const JsonSchema& s, JsonCheck& c) {
  const std::string any = child_of(path, "*");
  for (const auto& [key, v] : o.items()) {
    std::string p = child_of(path, key);
    if (!s.contains(p)) {
      if (!s.contains(any)) {
        c.problems.push_back("undescribed field " + p);
        continue;
      }
      p = any;
    }
    check_value(v, p, s, c);
  }
  for (const auto& [p, types] : s) {
    if (parent_of(p) != path || p == any || p.ends_with("[]")) continue;
    const std::string key = p.substr(path.empty() ? 0 : path.size() + 1);
    if (!o.contains(key) && !types.contains("absent")) c.problems.push_back("missing field " + p);
  }
}

inline void check_value(const nlohmann::json& v, const std::string& path, const JsonSchema& s, JsonCheck& c) {
  const std::set<std::string>& types = s.at(path);
  const std::string t = type_of(v);
  if (!types.contains(t) && !(t == "integer" && types.contains("number"))) {
    c.problems.push_back(path + " is " + t + ": " + v.dump().substr(0, 80));
    return;
  }
  c.seen.insert(path);
  if (v.is_object()) check_object(v, path, s, c);
  if (v.is_array())
    for (const nlohmann::json& e : v) {
      const std::string element = path + "[]";
      if (s.contains(element))
        check_value(e, element, s, c);
      else if (e.is_object())
        check_object(e, element, s, c);
      else
        c.problems.push_back(element + " is " + type_of(e) + ", which is not described");
    }
}

}  // namespace detail

// Checks one object printed against its schema; adds to `c`.
inline void check_json(const nlohmann::json& j, const JsonSchema& s, JsonCheck& c) {
  if (!j.is_object()) {
    c.problems.push_back("not an object: " + j.dump().substr(0, 80));
    return;
  }
  detail::check_object(j, "", s, c);
}

// The described paths no output showed, one per line; "" when each was seen.
inline std::string unseen(const JsonSchema& s, const std::set<std::string>& seen) {
  std::string out;
  for (const auto& [p, types] : s)
    if (!seen.contains(p)) out += p + "\n";
  return out;
}

inline std::string joined(const std::vector<std::string>& problems) {
  std::string out;
  for (const std::string& p : problems) out += p + "\n";
  return out;
}

}  // namespace lvdocs
