// unban.hpp - `levee unban IFACE ADDRESS [--class NAME]`: lift the bans of one address.
#pragma once

#include <string>

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

struct UnbanArgs {
  std::string iface;
  std::string address;
  std::string class_name;  // empty: every class
};

CLI::App* add_unban_command(CLI::App& app, UnbanArgs& a);

Status unban(const UnbanArgs& a);

}  // namespace levee::cli
