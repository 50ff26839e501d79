#include "cli/status.hpp"

#include <fmt/format.h>

#include <signal.h>

#include <CLI/CLI.hpp>
#include <climits>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <vector>

#include "core/clock.hpp"
#include "core/input_file.hpp"
#include "core/lock.hpp"
#include "datapath/inspect.hpp"
#include "datapath/kernel.hpp"
#include "datapath/pins.hpp"
#include "export/render_status.hpp"

namespace levee::cli {

CLI::App* add_status_command(CLI::App& app, bool& json) {
  auto* status = app.add_subcommand("status", "every attached interface: mode, program, classes, lists, sources");
  status->add_flag("--json", json, "one JSON object");
  status->footer("\nExample: levee status --json");
  return status;
}

namespace {

// A state file is a few hundred bytes; a larger one is not levee run's.
constexpr size_t kMaxStateBytes = size_t{64} << 10;

// A field of a state file, or `def` when it is missing or of another type.
template <typename T>
T field(const nlohmann::json& j, const char* key, T def = {}) {
  const auto it = j.find(key);
  if (it == j.end()) return def;
  if constexpr (std::is_same_v<T, bool>)
    return it->is_boolean() ? it->template get<bool>() : def;
  else if constexpr (std::is_same_v<T, std::string>)
    return it->is_string() ? it->template get<std::string>() : def;
  else
    return it->is_number_unsigned() ? it->template get<T>() : def;
}

// One of levee run's state files (daemon/state_file.hpp): nothing when there is none, it
// is not one, or its daemon is gone (killed: it had no chance to remove the file).
std::optional<nlohmann::json> daemon_state(const std::string& path) {
  auto f = read_input(path, {.what = "levee run's state", .max_bytes = kMaxStateBytes});
  if (!f) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(f->text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  const auto pid = field<uint64_t>(j, "pid");
  if (pid == 0 || pid > INT_MAX || ::kill(static_cast<pid_t>(pid), 0) != 0) return std::nullopt;
  return j;
}

std::optional<IfaceStatus::Publish> publish_state(const std::string& iface) {
  const auto j = daemon_state(publish_state_path(iface));
  if (!j) return std::nullopt;
  IfaceStatus::Publish p;
  p.machine = field<std::string>(*j, "machine");
  p.up = field<bool>(*j, "up");
  p.published = field<uint64_t>(*j, "published");
  p.errors = field<uint64_t>(*j, "errors");
  p.queued = field<uint64_t>(*j, "queued");
  p.dropped = field<uint64_t>(*j, "dropped");
  return p;
}

std::optional<IfaceStatus::Bouncer> bouncer_state(const std::string& iface) {
  const auto j = daemon_state(bouncer_state_path(iface));
  if (!j) return std::nullopt;
  IfaceStatus::Bouncer b;
  b.up = field<bool>(*j, "up");
  const uint64_t since = field<uint64_t>(*j, "since_unix_ns"), now = unix_now_ns();
  b.for_ns = since && since < now ? now - since : 0;
  b.pull_errors = field<uint64_t>(*j, "pull_errors");
  b.pull_timeouts = field<uint64_t>(*j, "pull_timeouts");
  b.last_error = field<std::string>(*j, "last_error");
  return b;
}

}  // namespace

Status status(bool json) {
  LV_TRY(preflight("status"));
  std::vector<IfaceStatus> all;
  for (const auto& iface : list_pinned()) {
    auto p = open_pinned(iface);
    // Detached by someone else since the listing: it is simply not attached any more.
    if (!p && !pin_dir_exists(iface)) continue;
    // One interface levee cannot read (pins of another version, half removed) must not
    // hide the others: it is shown with what is wrong.
    auto s = p ? query_status(*p) : Result<IfaceStatus>(p.error());
    if (!s) {
      IfaceStatus broken;
      broken.iface = iface;
      broken.problem = s.error().message();
      all.push_back(std::move(broken));
      continue;
    }
    s->publish = publish_state(iface);
    s->bouncer = bouncer_state(iface);
    all.push_back(std::move(s.value()));
  }
  if (json)
    fmt::print("{}\n", status_json(all).dump());
  else
    fmt::print("{}", status_text(all));
  return {};
}

}  // namespace levee::cli
