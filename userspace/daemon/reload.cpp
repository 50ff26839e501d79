#include "daemon/reload.hpp"

#include "core/iface.hpp"
#include "daemon/log.hpp"
#include "datapath/attach.hpp"
#include "datapath/inspect.hpp"
#include "datapath/live.hpp"
#include "datapath/pins.hpp"
#include "export/render_synauth.hpp"
#include "export/render_units.hpp"
#include "policy/config.hpp"

namespace levee::daemon {
namespace {

// What a reload left out or could not change, as `levee reload` prints it.
void say_reload_notes(const std::string& iface, const ReloadResult& r) {
  for (const auto& d : r.dropped) say(iface, "dropped {}", d);
  for (const auto& n : r.notes) say(iface, "note: {}", n);
}

}  // namespace

Status start_filter(const DaemonOptions& o, Policy p) {
  const std::string& iface = o.iface;
  if (pin_dir_exists(iface)) {
    // Adopt: what is pinned keeps running; only the policy is replaced, as levee reload does.
    LV_TRY_ASSIGN(auto pins, open_pinned(iface));
    LV_TRY_ASSIGN(auto st, query_status(pins, false));  // also refuses pins of another ABI version
    if (st.other_netns)
      return Error{fmt::format("{}'s pinned filter is attached in another network namespace", iface), 0,
                   "run levee run in the namespace of the interface"};
    if (!st.defunct) {
      LV_TRY_ASSIGN(auto r, levee::reload(iface, p));
      say(iface,
          "adopted the running filter (program {}, {} mode): state and counters kept; policy generation {} from {}",
          st.prog_id, st.mode, r.generation, p.source);
      say_reload_notes(iface, r);
      if (o.mode && *o.mode != LV_MODE_AUTO && mode_name(*o.mode) != st.mode)
        say(iface,
            "note: --mode {} applies when levee run attaches; the running filter stays in {} mode "
            "(levee detach {} first to change it)",
            mode_name(*o.mode), st.mode, iface);
      return {};
    }
    // The interface was removed and has come back (a driver reload, a recreated veth):
    // the pinned link filters nothing any more, and its state was of the old device.
    say(iface, "the pinned filter belongs to a removed instance of {} (program {}): replacing it", iface, st.prog_id);
    pins = Pinned{};  // close the pins before they are removed
    LV_TRY(detach(iface));
  }
  AttachOptions a = attach_options(iface, std::move(p));
  if (o.mode) a.mode = *o.mode;
  LV_TRY_ASSIGN(auto r, attach(a));
  if (!r.fallback.empty()) say(iface, "{}; using generic mode", r.fallback);
  if (!r.no_proxy.empty() && has_syn_auth(a.policy))
    say(iface, "SYN authentication answers in reset mode (a new client connects a second later): {}", r.no_proxy);
  if (has_syn_auth(a.policy))
    for (const std::string& n : syn_attach_notes(r)) say(iface, "{}", n);
  say(iface, "attached in {} mode (program {}): policy from {}, {} sources at most", r.mode, r.prog_id, a.policy.source,
      group_digits(a.max_sources));
  return {};
}

bool reload_config(const DaemonOptions& o, Health& health, AutoSpec* autop, CrowdsecSpec* crowdsec) {
  auto p = load_config(o.config, o.iface);
  Result<ReloadResult> r = p ? levee::reload(o.iface, *p) : Result<ReloadResult>(p.error());
  health.reloaded(r.ok());
  if (!r) {
    say(o.iface, "reload failed, the running policy is unchanged: {}", r.error().message());
    return false;
  }
  say(o.iface, "reloaded {}: policy generation {}, {} classes, {} list entries", o.config, r->generation, r->classes,
      group_digits(r->list_entries));
  if (autop) *autop = p->autop;
  if (crowdsec) *crowdsec = p->crowdsec;
  say_reload_notes(o.iface, *r);
  return true;
}

}  // namespace levee::daemon
