// detach.hpp - `levee detach IFACE`: remove levee from an interface and everything it
// pinned.
#pragma once

#include <string>

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

CLI::App* add_detach_command(CLI::App& app, std::string& iface);

Status detach(const std::string& iface);

}  // namespace levee::cli
