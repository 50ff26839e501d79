#include "cli/unban.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <optional>

#include "cli/options.hpp"
#include "datapath/live.hpp"
#include "export/render_units.hpp"

namespace levee::cli {

CLI::App* add_unban_command(CLI::App& app, UnbanArgs& a) {
  auto* unban = app.add_subcommand("unban", "lift the bans of one address: its packets pass again at once");
  add_iface_address(unban, a.iface, a.address, "the banned address, IPv4 or IPv6");
  unban->add_option("--class", a.class_name, "only this class's ban (a ban in every class is lifted too)")
      ->type_name("NAME");
  unban->footer(
      "\nExamples: levee unban eth0 198.18.0.7\n"
      "          levee unban eth0 2001:db8::7 --class dns\n"
      "Its offence count is forgotten: a next offence bans it for the first ban's length.");
  return unban;
}

Status unban(const UnbanArgs& a) {
  std::optional<std::string> cls;
  if (!a.class_name.empty()) cls = a.class_name;
  LV_TRY_ASSIGN(auto r, levee::unban(a.iface, a.address, cls));  // checks the address before anything else
  bool any_banned = false;
  for (const LiftedBan& b : r.lifted) {
    const std::string where = b.scope.empty() ? "every class" : "class " + b.scope;
    const std::string offences = fmt::format("{} offence{}", b.offences, b.offences == 1 ? "" : "s");
    if (b.banned) {
      any_banned = true;
      fmt::print("{}: unbanned {} in {}: {} were left, {}\n", a.iface, a.address, where,
                 format_remaining(b.remaining_ns), offences);
    } else {
      fmt::print("{}: {} was not banned in {}: its offence history ({}) is forgotten\n", a.iface, a.address, where,
                 offences);
    }
  }
  if (r.states_released && !any_banned)
    fmt::print("{}: released {} in {} class{}: a ban whose record was gone still held it back\n", a.iface, a.address,
               r.states_released, r.states_released == 1 ? "" : "es");
  if (r.lifted.empty() && !r.states_released)
    fmt::print("{}: {} is not banned{}\n", a.iface, a.address, cls ? " in class " + *cls : "");
  return {};
}

}  // namespace levee::cli
