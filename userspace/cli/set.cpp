#include "cli/set.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <vector>

#include "cli/options.hpp"
#include "core/quote.hpp"
#include "datapath/live.hpp"
#include "export/render_policy.hpp"

namespace levee::cli {
namespace {

std::string join_names(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& n : v) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A count of 1 or more: 0 is no limit value (as in the config file), never "none".
Result<uint64_t> positive_count(const std::string& opt, const std::string& text, const char* hint = "give 1 or more") {
  auto v = count_arg(opt, text);
  if (v && *v == 0) return usage_error(fmt::format("{} 0 is out of range", opt), hint);
  return v;
}
// A count that may be "off" (0): what takes a limit away is spelled out.
Result<uint64_t> count_or_off(const std::string& opt, const std::string& text, const char* hint) {
  if (text == "off") return uint64_t{0};
  return positive_count(opt, text, hint);
}
Result<uint64_t> duration_or_off(const std::string& opt, const std::string& text) {
  if (text == "off") return uint64_t{0};
  return duration_arg(opt, text);
}

// The options given, read into one change; usage errors before anything is touched.
Result<LimitChange> limit_change(const SetArgs& a) {
  LimitChange ch;
  struct Opt {
    const char* name;
    const std::string& text;
    std::optional<uint64_t>& out;
  };
  for (Opt o : {Opt{"--rate", a.rate, ch.rate}, Opt{"--burst", a.burst, ch.burst},
                Opt{"--bytes-burst", a.bytes_burst, ch.bytes_burst},
                Opt{"--new-sources-burst", a.new_sources_burst, ch.new_sources_burst}}) {
    if (o.text.empty()) continue;
    LV_TRY_ASSIGN(auto v, positive_count(o.name, o.text));
    o.out = v;
  }
  if (!a.bytes_rate.empty()) {
    LV_TRY_ASSIGN(auto v, count_or_off("--bytes-rate", a.bytes_rate,
                                       "give 1 or more; --bytes-rate off removes the class's byte limit"));
    ch.bytes_rate = v;
  }
  if (a.new_sources == "auto" || a.new_sources == "off") {
    ch.admission = a.new_sources == "auto" ? Admission::Auto : Admission::Off;
  } else if (!a.new_sources.empty()) {
    LV_TRY_ASSIGN(auto v, positive_count("--new-sources", a.new_sources, "give 1 or more, auto or off"));
    ch.new_sources = v;
  }
  if (!a.escalate.empty()) ch.escalate = a.escalate == "auto";
  for (Opt o : {Opt{"--ban", a.ban, ch.ban_ns}, Opt{"--ban-max", a.ban_max, ch.ban_max_ns},
                Opt{"--forget-after", a.forget_after, ch.forget_ns}}) {
    if (o.text.empty()) continue;
    LV_TRY_ASSIGN(auto v, &o.out == &ch.ban_ns ? duration_or_off(o.name, o.text) : duration_arg(o.name, o.text));
    o.out = v;
  }
  if (ch.ban_ns && *ch.ban_ns == 0 && (ch.ban_max_ns || ch.forget_ns))
    return usage_error("--ban off with --ban-max or --forget-after", "turn bans off alone, or give --ban a duration");
  if (ch.bytes_rate && *ch.bytes_rate == 0 && ch.bytes_burst)
    return usage_error("--bytes-rate off with --bytes-burst", "remove the byte limit alone, or give it a rate");
  if (ch.admission && ch.new_sources_burst)
    return usage_error(fmt::format("--new-sources {} with --new-sources-burst", a.new_sources),
                       "a burst goes with a budget: give --new-sources a rate");
  if (!a.mode.empty()) {
    if (a.mode != "monitor" && a.mode != "enforce")
      return usage_error(fmt::format("--mode {} is not a mode", quote_value(a.mode)), "give monitor or enforce");
    ch.monitor = a.mode == "monitor";
  }
  ch.prefix4 = a.prefix4;
  ch.prefix6 = a.prefix6;
  if (!a.class_name.empty()) ch.class_name = a.class_name;
  if (ch.empty())
    return usage_error("levee set needs something to change",
                       "give --rate, --burst, --bytes-rate, --bytes-burst, --prefix4, --prefix6, --new-sources, "
                       "--new-sources-burst, --ban, --ban-max, --forget-after or --mode");
  return ch;
}

}  // namespace

CLI::App* add_set_command(CLI::App& app, SetArgs& a) {
  auto* set = app.add_subcommand("set", "change the limits of an attached interface, live");
  add_iface(set, a.iface);
  add_text_options(set,
                   {{"--class", a.class_name, "the class to change (needed when there are several)", "NAME"},
                    {"--rate", a.rate, "new packets per second per source", "PPS"},
                    {"--burst", a.burst, "new burst per source", "PKTS"},
                    {"--bytes-rate", a.bytes_rate, "new bytes per second per source; off: no byte limit", "BPS|off"},
                    {"--bytes-burst", a.bytes_burst, "new byte burst per source", "BYTES"}});
  set->add_option("--prefix4", a.prefix4, "new IPv4 source prefix length (starts new buckets)")->type_name("N");
  set->add_option("--prefix6", a.prefix6, "new IPv6 source prefix length (starts new buckets)")->type_name("N");
  add_text_options(
      set, {{"--new-sources", a.new_sources,
             "new sources per second the class admits (a budget); auto: the autopilot; off: neither", "N|auto|off"},
            {"--new-sources-burst", a.new_sources_burst, "new sources the class admits at once", "N"},
            {"--ban", a.ban, "ban a source over its limit for this long (500ms, 2s, 1m); off: no bans", "DURATION|off"},
            {"--ban-max", a.ban_max, "the longest a repeat offence's ban grows to", "DURATION"},
            {"--forget-after", a.forget_after, "a source quiet this long after its ban starts over", "DURATION"}});
  choices(set->add_option("--escalate", a.escalate, "the autopilot's escalation of networks over their limit"),
          {"auto", "off"});
  choices(
      set->add_option("--mode", a.mode, "the interface's mode: monitor counts what would be dropped and drops nothing"),
      {"monitor", "enforce"});
  set->footer(
      "\nExamples: levee set eth0 --rate 2k\n"
      "          levee set eth0 --class dns --rate 500 --burst 50\n"
      "          levee set eth0 --class web-syn --new-sources 1k --ban 5s\n"
      "          levee set eth0 --class dns --new-sources off --escalate off\n"
      "          levee set eth0 --mode monitor\n"
      "Options not given keep their value. Sources keep their state: one that was being\n"
      "limited continues at the new rate at once. --mode switches every class at once (a\n"
      "class whose own mode is monitor keeps monitoring under enforce) and outlasts reloads.\n"
      "A reload restores the file's limits.");
  return set;
}

Status set(const SetArgs& a) {
  LV_TRY_ASSIGN(auto ch, limit_change(a));
  LV_TRY_ASSIGN(auto r, set_limits(a.iface, ch));
  if (r.changed) fmt::print("{}: class {}: {}\n", a.iface, r.changed->name, describe_limits(*r.changed));
  if (ch.monitor) {
    if (r.monitor)
      fmt::print("{}: monitor mode: nothing is dropped by a limit, would-be drops are counted (levee stats)\n",
                 a.iface);
    else if (r.monitoring.empty())
      fmt::print("{}: enforce mode\n", a.iface);
    else
      fmt::print("{}: enforce mode; by their own mode, class{} {} still monitor{}\n", a.iface,
                 r.monitoring.size() == 1 ? "" : "es", join_names(r.monitoring), r.monitoring.size() == 1 ? "s" : "");
  }
  return {};
}

}  // namespace levee::cli
