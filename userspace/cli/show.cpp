// show.cpp - `levee show IFACE ADDRESS`: what levee knows of one address, and
// `levee unban IFACE ADDRESS`: lift its bans.
#include <fmt/format.h>

#include "bpf/loader.hpp"
#include "cli/commands.hpp"
#include "export/render_show.hpp"
#include "export/render_units.hpp"
#include "policy/policy.hpp"

namespace levee::cli {

Status show(const ShowArgs& a) {
  LV_TRY_ASSIGN(auto r, levee::show(a.iface, a.address));  // checks the address before anything else
  const uint64_t now = Clocks::read().now_unix_ns;
  if (a.json)
    fmt::print("{}\n", show_json(a.iface, r, now).dump());
  else
    fmt::print("{}", show_text(a.iface, r, now));
  return {};
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
      fmt::print("unbanned {} in {}: {} were left, {}\n", a.address, where, format_remaining(b.remaining_ns), offences);
    } else {
      fmt::print("{} was not banned in {}: its offence history ({}) is forgotten\n", a.address, where, offences);
    }
  }
  if (r.states_released && !any_banned)
    fmt::print("released {} in {} class{}: a ban whose record was gone still held it back\n", a.address,
               r.states_released, r.states_released == 1 ? "" : "es");
  if (r.lifted.empty() && !r.states_released)
    fmt::print("{} is not banned on {}{}\n", a.address, a.iface, cls ? " in class " + *cls : "");
  return {};
}

}  // namespace levee::cli
