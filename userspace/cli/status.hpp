// status.hpp - `levee status [--json]`: every attached interface, its mode, program,
// classes, lists and sources.
#pragma once

#include "core/result.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace levee::cli {

CLI::App* add_status_command(CLI::App& app, bool& json);

Status status(bool json);

}  // namespace levee::cli
