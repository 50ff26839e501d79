// levee-docgen - writes the parts of the docs that the code generates (reason and event
// type tables, the would-drop list, the program's maps: export/reference.hpp) into the
// Markdown files given, between their <!-- generated: NAME --> and <!-- end: NAME -->
// lines.
//
//   levee-docgen FILE...           rewrite the generated sections of each file
//   levee-docgen --check FILE...   change nothing; exit 1, naming each file that lags
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "export/reference.hpp"

int main(int argc, char** argv) {
  bool check = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check") == 0)
      check = true;
    else
      files.emplace_back(argv[i]);
  }
  if (files.empty()) {
    fmt::print(stderr, "usage: levee-docgen [--check] FILE.md...\n");
    return 2;
  }
  int lagging = 0;
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      fmt::print(stderr, "levee-docgen: cannot read {}\n", file);
      return 1;
    }
    std::ostringstream text;
    text << in.rdbuf();
    std::vector<std::string> sections;
    auto now = levee::regenerate_sections(text.str(), file, &sections);
    if (!now) {
      fmt::print(stderr, "levee-docgen: {}\n", now.error().message());
      return 1;
    }
    if (sections.empty()) {
      fmt::print(stderr, "levee-docgen: {} has no generated section\n", file);
      return 1;
    }
    if (*now == text.str()) continue;
    if (check) {
      fmt::print(stderr, "levee-docgen: {}: its generated sections lag the code; rewrite them with: levee-docgen {}\n",
                 file, file);
      ++lagging;
      continue;
    }
    std::ofstream(file, std::ios::binary | std::ios::trunc) << *now;
    fmt::print("levee-docgen: {} rewritten\n", file);
  }
  return lagging ? 1 : 0;
}
