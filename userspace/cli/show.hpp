// show.hpp - `levee show IFACE ADDRESS [--json]`: what levee knows of one address, its
// list entry and, per class, its tokens, wait and counters.
#pragma once

#include <string>

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

struct ShowArgs {
  std::string iface;
  std::string address;
  bool json = false;
};

CLI::App* add_show_command(CLI::App& app, ShowArgs& a);

Status show(const ShowArgs& a);

}  // namespace levee::cli
