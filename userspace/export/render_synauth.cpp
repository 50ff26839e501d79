#include "export/render_synauth.hpp"

#include <fmt/format.h>

#include "export/render_units.hpp"

namespace levee {

using nlohmann::json;

namespace {

// "priority 1, handle 0x1ee"
std::string place_text(TcPlace p) { return fmt::format("priority {}, handle {:#x}", p.priority, p.handle); }

std::string sysctl_text(int v) { return v < 0 ? "unreadable" : std::to_string(v); }

// Why SYN-ACKs are reset mode's now, in an interface that proxies when it can.
std::string reset_why(const IfaceStatus::SynAuth& y) {
  if (!y.tc.handle) return "levee's tc program is not on the interface (the kernel could not proxy at attach)";
  if (!y.tc_present)
    return fmt::format("levee's tc filter ({}) is missing from the ingress hook: levee run puts it back",
                       place_text(y.tc));
  if (!syncookies_on(y.sysctls)) return "net.ipv4.tcp_syncookies is 0 here: levee run proxies again once it is 1";
  return "levee run has not proxied again yet";
}

}  // namespace

std::vector<std::string> tcp_off_names(uint32_t tcp_off) {
  std::vector<std::string> out;
  if (tcp_off & LV_TCP_OFF_TS) out.emplace_back("timestamps");
  if (tcp_off & LV_TCP_OFF_SACK) out.emplace_back("sack");
  if (tcp_off & LV_TCP_OFF_WSCALE) out.emplace_back("window_scaling");
  return out;
}

json syn_auth_json(const IfaceStatus& s) {
  if (!s.syn) return nullptr;
  const IfaceStatus::SynAuth& y = *s.syn;
  json tc = nullptr;
  if (y.tc.handle)
    tc = {{"handle", y.tc.handle}, {"priority", y.tc.priority}, {"present", y.tc_present}, {"own_hook", y.own_hook}};
  return {{"mode", y.proxying ? "proxy" : "reset"},
          {"tc_filter", tc},
          {"tcp_options_off", tcp_off_names(y.tcp_off)},
          {"sysctls",
           {{"tcp_timestamps", y.sysctls.timestamps},
            {"tcp_sack", y.sysctls.sack},
            {"tcp_window_scaling", y.sysctls.window_scaling},
            {"tcp_syncookies", y.sysctls.syncookies}}},
          {"known_good_per_network", y.marks_per_network}};
}

json known_good_json(const IfaceStatus& s) {
  if (!s.known_good) return nullptr;
  return {{"fill", s.known_good->fill}, {"false_positive", s.known_good->false_positive}, {"ageings", s.good_epoch}};
}

std::string syn_auth_text(const IfaceStatus& s) {
  if (!s.syn) return "";
  const IfaceStatus::SynAuth& y = *s.syn;
  std::string out = y.proxying ? fmt::format("  syn auth proxy: levee's tc filter at ingress {}{}\n", place_text(y.tc),
                                             y.tc_present ? "" : " (missing)")
                               : fmt::format("  syn auth reset: {}\n", reset_why(y));
  out += fmt::format(
      "           SYN-ACKs leave out: {} (here net.ipv4.tcp_timestamps {}, tcp_sack {}, tcp_window_scaling {}, "
      "tcp_syncookies {})\n",
      tcp_options_text(y.tcp_off), sysctl_text(y.sysctls.timestamps), sysctl_text(y.sysctls.sack),
      sysctl_text(y.sysctls.window_scaling), sysctl_text(y.sysctls.syncookies));
  out += fmt::format("           known-good marks per /{} or /{}: {}\n", y.prefix4, y.prefix6,
                     y.marks_per_network ? group_digits(y.marks_per_network) : std::string("no bound"));
  return out;
}

std::string known_good_text(const IfaceStatus& s) {
  if (!s.known_good) return "";
  return fmt::format(
      "  known-good {:.2f} % of the filter's bits set, {:.3f} % false positives (estimated), {} ageing{}\n",
      100 * s.known_good->fill, 100 * s.known_good->false_positive, group_digits(s.good_epoch),
      s.good_epoch == 1 ? "" : "s");
}

std::vector<std::string> syn_attach_notes(const AttachResult& r) {
  std::vector<std::string> out;
  if (r.tc_place.handle)
    out.push_back(
        fmt::format("SYN authentication proxies: levee's tc filter on the ingress hook at {}", place_text(r.tc_place)));
  if (r.tcp_off)
    out.push_back(fmt::format("SYN-ACKs leave out {}: this network namespace turned {} off (net.ipv4 sysctls)",
                              tcp_options_text(r.tcp_off), r.tcp_off & (r.tcp_off - 1) ? "them" : "it"));
  if (r.kept_cookie_keys)
    out.emplace_back("kept the SYN cookie keys of the detach before: handshakes in flight complete");
  return out;
}

}  // namespace levee
