#include "cli/status.hpp"

#include <fmt/format.h>

#include <signal.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <vector>

#include "bpf/inspect.hpp"
#include "bpf/kernel.hpp"
#include "bpf/pins.hpp"
#include "core/input_file.hpp"
#include "core/lock.hpp"
#include "export/render_status.hpp"

namespace levee::cli {

CLI::App* add_status_command(CLI::App& app, bool& json) {
  auto* status = app.add_subcommand("status", "every attached interface: mode, program, classes, lists, sources");
  status->add_flag("--json", json, "one JSON object");
  status->footer("\nExample: levee status --json");
  return status;
}

namespace {

// The state file is a few hundred bytes; a larger one is not levee run's.
constexpr size_t kMaxPublishStateBytes = size_t{64} << 10;

// levee run's CrowdSec publisher, from its state file: nothing when there is none, it
// is not one, or its daemon is gone (killed: it had no chance to remove the file).
std::optional<IfaceStatus::Publish> publish_state(const std::string& iface) {
  auto f = read_input(publish_state_path(iface), {.what = "the publisher's state", .max_bytes = kMaxPublishStateBytes});
  if (!f) return std::nullopt;
  const std::string& text = f->text;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  const int pid = j.value("pid", 0);
  if (pid <= 0 || ::kill(pid, 0) != 0) return std::nullopt;
  IfaceStatus::Publish p;
  p.machine = j.value("machine", "");
  p.up = j.value("up", false);
  p.published = j.value("published", uint64_t{0});
  p.errors = j.value("errors", uint64_t{0});
  p.queued = j.value("queued", uint64_t{0});
  p.dropped = j.value("dropped", uint64_t{0});
  return p;
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
    all.push_back(std::move(s.value()));
  }
  if (json)
    fmt::print("{}\n", status_json(all).dump());
  else
    fmt::print("{}", status_text(all));
  return {};
}

}  // namespace levee::cli
