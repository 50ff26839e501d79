// lists.cpp - `levee allow|deny|override add|del|list` and `levee deny import`.
#include "cli/lists.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "bpf/loader.hpp"
#include "cli/commands.hpp"
#include "core/clock.hpp"
#include "export/render_lists.hpp"
#include "export/render_units.hpp"

namespace levee::cli {
namespace {

constexpr std::string_view kSpace = " \t\r\v\f";
constexpr size_t kRejectedShown = 20;

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

// Networks as map keys: family, length, address.
using CidrKey = std::tuple<uint8_t, unsigned, std::array<uint8_t, 16>>;
CidrKey key_of(const Cidr& c) { return {c.family, c.len, c.addr}; }

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

// add and del: say what happened to each network. The outcome of each is worked out
// from the lists as they were just before the change; when the counts the change
// reports disagree (another controller changed the lists in between), only the
// counts are printed.
Status edit(const ListArgs& a) {
  LV_TRY_ASSIGN(auto cidrs, parse_cidrs(a.cidrs));
  const uint64_t now = Clocks::read().now_unix_ns;
  LV_TRY_ASSIGN(auto expiry, expiry_arg(a.expires, now));
  const uint64_t expires = expiry;
  LV_TRY_ASSIGN(auto rows, list_rows(a.iface));
  std::map<CidrKey, const ListRow*> before;
  for (const ListRow& r : rows)
    if (r.kind == a.kind) before.emplace(key_of(r.cidr), &r);

  const bool add = a.op == ListOp::Add;
  ListEdit ed;
  ed.kind = a.kind;
  ed.override_name = a.override_name;
  ed.expires_unix_ns = expires;
  ed.origin = LV_ORIGIN_CLI;
  (add ? ed.add : ed.del) = cidrs;

  ListEditResult predicted;
  std::vector<std::string> lines;
  std::set<CidrKey> present;
  for (const auto& [k, r] : before) present.insert(k);
  for (const Cidr& c : cidrs) {
    const bool there = present.count(key_of(c)) > 0;
    std::string what;
    if (add) {
      what = there ? "replaced" : "added";
      ++(there ? predicted.replaced : predicted.added);
      present.insert(key_of(c));
      what += expiry_note(expires, now);
    } else {
      what = there ? "deleted" : "not found";
      ++(there ? predicted.deleted : predicted.missing);
      auto b = before.find(key_of(c));
      if (there && b != before.end() && b->second->origin == LV_ORIGIN_CONFIG)
        what += " (it came from the config file: a reload brings it back)";
      present.erase(key_of(c));
    }
    lines.push_back(fmt::format("{}: {} {} {}", a.iface, kind_label(a), c.to_string(), what));
  }

  LV_TRY_ASSIGN(auto r, levee::edit_lists(a.iface, ed));
  if (!add && r.deleted == 0) {
    std::string names;
    for (const Cidr& c : cidrs) names += (names.empty() ? "" : ", ") + c.to_string();
    return Error{fmt::format("{} has no {} entry {}", a.iface, list_kind_name(a.kind), names), 0,
                 fmt::format("see the entries with: levee {} list {}", list_kind_name(a.kind), a.iface)};
  }
  const bool exact = r.added == predicted.added && r.replaced == predicted.replaced && r.deleted == predicted.deleted &&
                     r.missing == predicted.missing;
  if (exact) {
    for (const auto& l : lines) fmt::print("{}\n", l);
  } else if (add) {
    fmt::print("{}: {}: {} added, {} replaced{}\n", a.iface, kind_label(a), r.added, r.replaced,
               expiry_note(expires, now));
  } else {
    fmt::print("{}: {}: {} deleted, {} not found\n", a.iface, kind_label(a), r.deleted, r.missing);
  }
  return {};
}

Status list(const ListArgs& a) {
  LV_TRY_ASSIGN(auto filter, parse_cidrs(a.cidrs));
  LV_TRY_ASSIGN(auto rows, list_rows(a.iface));
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
  std::ifstream in(a.file, std::ios::binary);
  if (!in) return sys_error(fmt::format("read {}", a.file));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return sys_error(fmt::format("read {}", a.file));
  const Blocklist b = parse_blocklist(text.str());

  std::string rejected;
  for (size_t i = 0; i < b.rejected.size() && i < kRejectedShown; ++i)
    rejected += fmt::format("  line {}: {}\n", b.rejected[i].line, b.rejected[i].why);
  if (b.rejected.size() > kRejectedShown)
    rejected += fmt::format("  ... and {} more rejected lines\n", group_digits(b.rejected.size() - kRejectedShown));
  if (b.entries.empty()) {
    fmt::print("{}", rejected);
    return Error{fmt::format("{} has no valid entry, nothing was added ({} line{} rejected)", a.file,
                             group_digits(b.rejected.size()), b.rejected.size() == 1 ? "" : "s"),
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
  ListEditResult done;
  if (!ed.add.empty()) {
    LV_TRY_ASSIGN(auto r, levee::edit_lists(a.iface, ed));  // one publish for the whole file
    done = r;
  }

  std::string skipped;
  for (auto [n, why] : {std::pair<size_t, const char*>{b.repeated, "repeated in the file"},
                        {on_deny, "already on the deny list"},
                        {on_other, "on the allow or override list"}})
    if (n) skipped += fmt::format("{}{} {}", skipped.empty() ? "" : ", ", group_digits(n), why);
  const size_t nskipped = b.repeated + on_deny + on_other;
  fmt::print("{}: deny import of {}: {} added, {} renewed, {} skipped{}, {} rejected{}\n{}", a.iface, a.file,
             group_digits(done.added), group_digits(done.replaced), group_digits(nskipped),
             skipped.empty() ? "" : " (" + skipped + ")", group_digits(b.rejected.size()), expiry_note(expires, now),
             rejected);
  return {};
}

}  // namespace

Blocklist parse_blocklist(std::string_view text) {
  Blocklist out;
  std::set<CidrKey> seen;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  unsigned line = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    l = trim(l.substr(0, l.find_first_of("#;")));
    if (l.empty()) continue;
    auto reject = [&](std::string why) {
      std::string shown(l.substr(0, 60));
      if (l.size() > 60) shown += "...";
      out.rejected.push_back({line, std::move(shown), std::move(why)});
    };
    if (l.find_first_of(kSpace) != std::string_view::npos) {
      reject(fmt::format("'{}' is more than one field; give one CIDR per line", l.substr(0, 60)));
      continue;
    }
    auto c = Cidr::parse(l);
    if (!c) {
      // The general hint (what a CIDR looks like) would repeat on every line; a
      // correction is worth keeping.
      const Error& e = c.error();
      reject(e.hint.rfind("did you mean", 0) == 0 ? e.message() : e.what);
      continue;
    }
    if (c->len == 0) {
      reject(fmt::format("'{}' covers every address; deny it with levee deny add if you mean it", l));
      continue;
    }
    if (seen.insert(key_of(*c)).second)
      out.entries.push_back(*c);
    else
      ++out.repeated;
  }
  return out;
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
