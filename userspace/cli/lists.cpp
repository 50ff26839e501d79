// lists.cpp - the list commands: their command lines, and edits and reads of the lists.
#include "cli/lists.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <map>
#include <tuple>

#include "cli/blocklist.hpp"
#include "cli/options.hpp"
#include "cli/orphaned.hpp"
#include "core/clock.hpp"
#include "datapath/lists.hpp"
#include "export/render_lists.hpp"
#include "export/render_units.hpp"
#include "policy/policy.hpp"

namespace levee::cli {
namespace {

constexpr size_t kRejectedShown = 20;

constexpr const char* kExpiresHelp =
    "when the entry stops matching: a duration (90s, 30m, 2h, 1d12h, 1w) or an RFC 3339 time "
    "(2026-12-01T00:00:00Z); default never";

// `levee KIND OP IFACE ...`: one operation of a list command. Parsed, it says which
// list and what to do.
CLI::App* wire_op(CLI::App* group, ListArgs& la, lv_list_kind kind, ListOp op, const char* name,
                  const std::string& about) {
  auto* sub = group->add_subcommand(name, about);
  add_iface(sub, la.iface);
  sub->callback([&la, kind, op] {
    la.kind = kind;
    la.op = op;
  });
  return sub;
}

void wire_add(CLI::App* group, ListArgs& la, lv_list_kind kind, const std::string& name, const char* example_cidrs) {
  auto* add = wire_op(group, la, kind, ListOp::Add, "add",
                      fmt::format("add networks to the {} list (or replace their entries)", name));
  if (kind == LV_LIST_OVERRIDE)
    add->add_option("name", la.override_name, "an override defined in the config file ([[override]])")
        ->required()
        ->type_name("");
  add->add_option("cidr", la.cidrs, "networks or addresses: 198.51.100.0/24, 2001:db8::/48, 203.0.113.7")
      ->required()
      ->type_name("");
  if (kind == LV_LIST_DENY) add->add_option("--expires", la.expires, kExpiresHelp)->type_name("DURATION|TIME");
  add->footer(kind == LV_LIST_OVERRIDE ? fmt::format("\nExample: levee override add eth0 partner {}\n"
                                                     "The networks get the override's limits in the classes it names.",
                                                     example_cidrs)
              : kind == LV_LIST_DENY
                  ? fmt::format("\nExamples: levee deny add eth0 {}\n"
                                "          levee deny add eth0 203.0.113.7 --expires 2h",
                                example_cidrs)
                  : fmt::format("\nExample: levee allow add eth0 {}\n"
                                "Allowed sources are never limited; their packets are still counted.",
                                example_cidrs));
}

void wire_del(CLI::App* group, ListArgs& la, lv_list_kind kind, const std::string& name, const char* example_cidrs) {
  auto* del = wire_op(group, la, kind, ListOp::Del, "del", fmt::format("delete networks from the {} list", name));
  del->add_option("cidr", la.cidrs, "networks as they were added")->required()->type_name("");
  del->footer(
      fmt::format("\nExample: levee {} del eth0 {}\n"
                  "Entries from the config file come back with the next reload.",
                  name, example_cidrs));
}

void wire_list(CLI::App* group, ListArgs& la, lv_list_kind kind, const std::string& name) {
  auto* list = wire_op(group, la, kind, ListOp::List, "list", fmt::format("the entries of the {} list", name));
  list->add_option("cidr", la.cidrs, "only entries within, or covering, these networks")->type_name("");
  list->add_flag("--json", la.json, "one JSON object");
  list->footer(
      fmt::format("\nExamples: levee {0} list eth0\n          levee {0} list eth0 198.51.100.0/24 --json", name));
}

void wire_import(CLI::App* group, ListArgs& la) {
  auto* imp = wire_op(group, la, LV_LIST_DENY, ListOp::Import, "import",
                      "add every network of a blocklist file to the deny list, at once");
  imp->add_option("file", la.file, "one CIDR or address per line; '#' and ';' start comments")
      ->required()
      ->type_name("");
  imp->add_option("--expires", la.expires, kExpiresHelp)->type_name("DURATION|TIME");
  imp->footer(
      "\nExample: levee deny import eth0 /var/lib/levee/drop.netset --expires 1d\n"
      "Reports what was added, renewed, skipped and rejected (with line numbers). A file\n"
      "with no valid line adds nothing and exits 1.");
}

Result<std::vector<Cidr>> parse_cidrs(const std::vector<std::string>& texts) {
  std::vector<Cidr> out;
  for (const auto& t : texts) {
    LV_TRY_ASSIGN(auto c, Cidr::parse(t));
    out.push_back(c);
  }
  return out;
}

std::string kind_label(const ListArgs& a) {
  return a.kind == LV_LIST_OVERRIDE && !a.override_name.empty() ? fmt::format("override {}", a.override_name)
                                                                : list_kind_name(a.kind);
}

std::string expiry_note(uint64_t expires, uint64_t now) {
  return expires ? fmt::format(", expires {} ({})", format_time(expires), format_expiry(expires, now)) : "";
}

// --expires as given, or 0 (never) when absent.
Result<uint64_t> expiry_arg(const std::string& text, uint64_t now) {
  return text.empty() ? Result<uint64_t>(uint64_t{0}) : parse_expiry(text, now);
}

// add and del: say what happened to each network, as the edit reports it (the lists
// are not read: one entry added to a list of a million costs what it costs on a short
// one).
Status edit(const ListArgs& a) {
  LV_TRY_ASSIGN(auto cidrs, parse_cidrs(a.cidrs));
  const uint64_t now = Clocks::read().now_unix_ns;
  LV_TRY_ASSIGN(auto expiry, expiry_arg(a.expires, now));
  const uint64_t expires = expiry;
  const bool add = a.op == ListOp::Add;
  ListEdit ed;
  ed.kind = a.kind;
  ed.override_name = a.override_name;
  ed.expires_unix_ns = expires;
  ed.origin = LV_ORIGIN_CLI;
  (add ? ed.add : ed.del) = cidrs;

  LV_TRY_ASSIGN(auto r, levee::edit_lists(a.iface, ed));
  if (!add && r.deleted == 0) {
    std::string names;
    for (const Cidr& c : cidrs) names += (names.empty() ? "" : ", ") + c.to_string();
    return Error{fmt::format("{} has no {} entry {}", a.iface, list_kind_name(a.kind), names), 0,
                 fmt::format("see the entries with: levee {} list {}", list_kind_name(a.kind), a.iface)};
  }
  for (const EditedEntry& e : r.entries) {
    std::string what;
    switch (e.outcome) {
      case EditOutcome::Added:
        what = "added" + expiry_note(expires, now);
        break;
      case EditOutcome::Replaced:
        what = "replaced" + expiry_note(expires, now);
        break;
      case EditOutcome::Deleted:
        what = "deleted";
        if (e.origin == LV_ORIGIN_CONFIG) what += " (it came from the config file: a reload brings it back)";
        break;
      case EditOutcome::Missing:
        what = "not found";
        break;
    }
    fmt::print("{}: {} {} {}\n", a.iface, kind_label(a), e.cidr.to_string(), what);
  }
  return {};
}

Status list(const ListArgs& a) {
  LV_TRY_ASSIGN(auto filter, parse_cidrs(a.cidrs));
  LV_TRY_ASSIGN(auto rows, list_rows(a.iface));
  warn_if_orphaned(a.iface);
  std::vector<ListRow> mine;
  for (const ListRow& r : rows) {
    if (r.kind != a.kind) continue;
    const bool overlaps = filter.empty() || std::any_of(filter.begin(), filter.end(), [&](const Cidr& f) {
                            return f.contains(r.cidr) || r.cidr.contains(f);
                          });
    if (overlaps) mine.push_back(r);
  }
  std::sort(mine.begin(), mine.end(), [](const ListRow& x, const ListRow& y) {
    return std::tie(x.cidr.family, x.cidr.addr, x.cidr.len) < std::tie(y.cidr.family, y.cidr.addr, y.cidr.len);
  });
  const uint64_t now = Clocks::read().now_unix_ns;
  if (a.json)
    fmt::print("{}\n", list_json(a.iface, a.kind, mine, now).dump());
  else
    fmt::print("{}", list_text(a.iface, a.kind, mine, now));
  return {};
}

Status import(const ListArgs& a) {
  const uint64_t now = Clocks::read().now_unix_ns;
  LV_TRY_ASSIGN(auto expiry, expiry_arg(a.expires, now));
  const uint64_t expires = expiry;
  LV_TRY_ASSIGN(const std::string text, read_blocklist(a.file));
  const Blocklist b = parse_blocklist(text);
  LV_TRY(check_blocklist_limits(b, a.file));

  std::string rejected;
  for (size_t i = 0; i < b.rejected.size() && i < kRejectedShown; ++i)
    rejected += fmt::format("  line {}: {}\n", b.rejected[i].line, b.rejected[i].why);
  if (b.rejected_lines > kRejectedShown)
    rejected += fmt::format("  ... and {} more rejected lines\n", group_digits(b.rejected_lines - kRejectedShown));
  if (b.entries.empty()) {
    fmt::print("{}", rejected);
    return Error{fmt::format("{} has no valid entry, nothing was added ({} line{} rejected)", a.file,
                             group_digits(b.rejected_lines), b.rejected_lines == 1 ? "" : "s"),
                 0, "write one CIDR or address per line; '#' and ';' start comments"};
  }

  // What is there already: an entry on the deny list that lasts at least as long is
  // skipped, one that expires sooner (or has expired) is renewed; a network on another
  // list is left to that list.
  LV_TRY_ASSIGN(auto rows, list_rows(a.iface));
  std::map<CidrKey, const ListRow*> have;
  for (const ListRow& r : rows) have.emplace(key_of(r.cidr), &r);
  ListEdit ed;
  ed.kind = LV_LIST_DENY;
  ed.origin = LV_ORIGIN_IMPORT;
  ed.expires_unix_ns = expires;
  size_t on_deny = 0, on_other = 0;
  for (const Cidr& c : b.entries) {
    auto it = have.find(key_of(c));
    if (it == have.end()) {
      ed.add.push_back(c);
      continue;
    }
    const ListRow& r = *it->second;
    if (r.kind != LV_LIST_DENY)
      ++on_other;
    else if (r.expires_unix_ns && (r.expires_unix_ns <= now || !expires || expires > r.expires_unix_ns))
      ed.add.push_back(c);
    else
      ++on_deny;
  }
  // One publish for the whole file; called with nothing to add too, so that a filter
  // whose interface is gone is refused as for any change.
  LV_TRY_ASSIGN(const ListEditResult done, levee::edit_lists(a.iface, ed));

  std::string skipped;
  for (auto [n, why] : {std::pair<size_t, const char*>{b.repeated, "repeated in the file"},
                        {on_deny, "already on the deny list"},
                        {on_other, "on the allow or override list"}})
    if (n) skipped += fmt::format("{}{} {}", skipped.empty() ? "" : ", ", group_digits(n), why);
  const size_t nskipped = b.repeated + on_deny + on_other;
  fmt::print("{}: deny import of {}: {} added, {} renewed, {} skipped{}, {} rejected{}\n{}", a.iface, a.file,
             group_digits(done.added), group_digits(done.replaced), group_digits(nskipped),
             skipped.empty() ? "" : " (" + skipped + ")", group_digits(b.rejected_lines), expiry_note(expires, now),
             rejected);
  return {};
}

}  // namespace

CLI::App* add_list_command(CLI::App& app, ListArgs& la, lv_list_kind kind) {
  const std::string name = list_kind_name(kind);
  const char* about = kind == LV_LIST_ALLOW  ? "allow list: networks never limited (still counted)"
                      : kind == LV_LIST_DENY ? "deny list: networks always dropped, optionally until a time"
                                             : "override list: networks with limits of their own (from the config)";
  const char* example_cidrs = kind == LV_LIST_ALLOW  ? "198.51.100.0/24 2001:db8:1::/48"
                              : kind == LV_LIST_DENY ? "203.0.113.0/24"
                                                     : "192.0.2.0/24";
  auto* group = app.add_subcommand(name, about);
  group->require_subcommand(1);
  wire_add(group, la, kind, name, example_cidrs);
  wire_del(group, la, kind, name, example_cidrs);
  wire_list(group, la, kind, name);
  if (kind == LV_LIST_DENY) wire_import(group, la);
  group->footer(fmt::format("\nExamples: levee {0} add eth0 {1}\n          levee {0} list eth0 --json", name,
                            kind == LV_LIST_OVERRIDE ? std::string("partner ") + example_cidrs : example_cidrs));
  return group;
}

Result<uint64_t> parse_expiry(std::string_view text, uint64_t now_unix_ns) {
  auto t = levee::parse_expiry(text, now_unix_ns);
  if (!t) return usage_error("--expires " + t.error().what, t.error().hint);
  return t;
}

Status lists(const ListArgs& a) {
  switch (a.op) {
    case ListOp::Add:
    case ListOp::Del:
      return edit(a);
    case ListOp::List:
      return list(a);
    case ListOp::Import:
      return import(a);
  }
  return {};
}

}  // namespace levee::cli
