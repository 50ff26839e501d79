#include "daemon/state_file.hpp"

#include <cstdio>

namespace levee::daemon {

void write_state_file(const std::string& path, const std::string& json) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "we");
  if (!f) return;
  const bool ok = std::fwrite(json.data(), 1, json.size(), f) == json.size();
  if (std::fclose(f) == 0 && ok) std::rename(tmp.c_str(), path.c_str());
}

}  // namespace levee::daemon
