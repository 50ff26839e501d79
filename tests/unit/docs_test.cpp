// docs_test.cpp - the docs held to the code: the sections generated from the code's
// tables (reasons, would-be drops, event types) are what it generates now, and those
// tables cover the ABI; each command's --help and its section of CLI.md name the same
// options, and no value is called by CLI11's type; every link to a heading of a doc
// leads to one, and CLI.md leaves the JSON to JSON.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "core/event_types.hpp"
#include "export/events.hpp"
#include "export/reference.hpp"
#include "markdown.hpp"

namespace levee {
namespace {

// Each doc with generated sections, and the sections it must have.
TEST(Docs, GeneratedSectionsAreWhatTheCodeGenerates) {
  const std::pair<const char*, std::vector<std::string>> docs[] = {
      {"CLI.md", {"reasons", "would_drop", "event_types"}},
      {"ARCHITECTURE.md", {"maps"}},
  };
  for (const auto& [name, want] : docs) {
    const std::string text = lvdocs::read_doc(name);
    std::vector<std::string> met;
    auto now = regenerate_sections(text, name, &met);
    ASSERT_TRUE(now) << now.error().message();
    EXPECT_EQ(met, want) << name;
    EXPECT_TRUE(*now == text) << name << ": its generated sections lag the code; rewrite them with: "
                              << "build/levee-docgen docs/" << name;
  }
}

TEST(Docs, RegenerateReplacesBodiesAndRefusesUnknownOrOpenSections) {
  const std::string text =
      "intro\n<!-- generated: event_types (levee-docgen) -->\nold table\n<!-- end: event_types -->\nafter\n";
  auto now = regenerate_sections(text, "t.md");
  ASSERT_TRUE(now) << now.error().message();
  EXPECT_EQ(now->find("old table"), std::string::npos);
  EXPECT_NE(now->find("| `answer_limited` |"), std::string::npos) << *now;
  EXPECT_EQ(now->rfind("intro\n<!-- generated: event_types (levee-docgen) -->\n| type |", 0), 0u) << *now;
  EXPECT_NE(now->find("|\n<!-- end: event_types -->\nafter\n"), std::string::npos) << *now;
  EXPECT_EQ(regenerate_sections(*now, "t.md").value(), *now) << "a second run changes nothing";

  auto unknown = regenerate_sections("a\n<!-- generated: colours -->\n<!-- end: colours -->\n", "t.md");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("t.md:2: no generated section is named colours"), std::string::npos)
      << unknown.error().message();
  auto open = regenerate_sections("<!-- generated: reasons -->\n| x |\n", "t.md");
  ASSERT_FALSE(open);
  EXPECT_NE(open.error().message().find("t.md:1:"), std::string::npos) << open.error().message();
}

// Whether the ABI has this event type. A switch over every enumerator, without a
// default: a type added to enum lv_event_type and not here is a -Wswitch warning (an
// error with LEVEE_WERROR, as CI builds), and once here the test below wants its row.
constexpr bool abi_event_type(unsigned id) {
  switch (static_cast<lv_event_type>(id)) {
    case LV_EV_LIMITED:
    case LV_EV_BANNED:
    case LV_EV_ADMISSION:
    case LV_EV_MAP_FULL:
    case LV_EV_BAN_ENDED:
    case LV_EV_ENGAGED:
    case LV_EV_RELEASED:
    case LV_EV_ESCALATED:
    case LV_EV_DEESCALATED:
    case LV_EV_ANSWER_LIMITED:
      return true;
  }
  return false;
}

// The event types, as the ABI numbers them (1 up, none skipped), each with a name and
// what it means, in ABI order: what the events, the metrics, --help and CLI.md name.
// Every type of the ABI has its row.
TEST(EventTypes, EveryAbiTypeHasANameAndHelp) {
  for (size_t i = 0; i < kEventTypes.size(); ++i) {
    EXPECT_EQ(kEventTypes[i].id, i + 1) << kEventTypes[i].name;
    EXPECT_FALSE(kEventTypes[i].help.empty()) << kEventTypes[i].name;
    EXPECT_EQ(event_type_name(kEventTypes[i].id), kEventTypes[i].name);
  }
  for (unsigned id = 0; id < 256; ++id)  // lv_event.type is a __u8
    EXPECT_TRUE(!abi_event_type(id) || event_type_name_of(id) != "unknown") << "event type " << id << " has no row";
  EXPECT_STREQ(event_type_name(0), "unknown");
}

// `levee events --help` names every type there is, from the same table.
TEST(Help, EventsListsEveryEventType) {
  const char* argv[] = {"levee", "events", "--help"};
  const cli::Parsed p = cli::parse(3, argv);
  ASSERT_EQ(p.exit_code, cli::kExitOk);
  std::string help = p.out;
  std::replace(help.begin(), help.end(), '\n', ' ');
  for (const EventTypeInfo& t : kEventTypes) {
    const std::string word = " " + std::string(t.name);
    EXPECT_TRUE(help.find(word + ",") != std::string::npos || help.find(word + ".") != std::string::npos)
        << t.name << " is not in levee events --help:\n"
        << p.out;
  }
}

// ---- links between the docs ------------------------------------------------------

// The anchors of a doc's headings, as GitHub makes them: lower case, punctuation but
// '-' and '_' left out, spaces as '-'; a repeated one gets "-1", "-2", ...
std::set<std::string> anchors_of(const std::string& text) {
  std::set<std::string> out;
  std::map<std::string, int> seen;
  bool fenced = false;
  for (const std::string& line : lvdocs::lines_of(text)) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || line.empty() || line[0] != '#') continue;
    const size_t text_at = line.find_first_not_of('#');
    if (text_at == std::string::npos || line[text_at] != ' ') continue;
    std::string slug;
    for (const char c : line.substr(text_at + 1)) {
      const auto u = static_cast<unsigned char>(c);
      if (std::isalnum(u) || c == '_' || c == '-')
        slug += static_cast<char>(std::tolower(u));
      else if (c == ' ')
        slug += '-';
    }
    const int n = seen[slug]++;
    out.insert(n == 0 ? slug : slug + "-" + std::to_string(n));
  }
  return out;
}

// Every link to a heading of a doc ("JSON.md#levee-stats", "#reasons") in the docs and
// the README leads to a heading that is there: CLI.md sends each command's JSON to
// JSON.md, JSON.md sends the reasons back, and a renamed heading must not strand them.
TEST(Docs, EveryLinkToAHeadingLeadsToOne) {
  const std::vector<std::string> docs = {"../README.md",  "ARCHITECTURE.md", "CLI.md",    "CONFIG.md",
                                         "DEVELOPING.md", "JSON.md",         "LIMITS.md", "OPERATING.md"};
  std::map<std::string, std::set<std::string>> anchors;  // by the doc's name under docs/
  for (const std::string& d : docs) anchors[d] = anchors_of(lvdocs::read_doc(d));
  const std::regex link(R"(\]\(([A-Za-z./]*\.md)?#([^)\s]+)\))");
  size_t links = 0;
  for (const std::string& d : docs) {
    const std::string text = lvdocs::read_doc(d);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), link); it != std::sregex_iterator(); ++it) {
      std::string target = (*it)[1].matched ? (*it)[1].str() : d;
      // Relative to the doc: the README's "docs/X.md" is "X.md", a doc's "../README.md" stays.
      if (d == "../README.md" && target.rfind("docs/", 0) == 0) target = target.substr(5);
      if (d == "../README.md" && target == "README.md") target = d;
      ++links;
      ASSERT_TRUE(anchors.contains(target)) << d << " links to " << target << ", which this test does not read";
      EXPECT_TRUE(anchors[target].contains((*it)[2])) << d << ": " << (*it)[0] << " leads to no heading of " << target;
    }
  }
  EXPECT_GE(links, 40u) << "the links were not found";
}

// ---- each command's --help against its section of CLI.md -----------------------------

std::string help_of(const std::vector<std::string>& words) {
  std::vector<const char*> argv{"levee"};
  for (const std::string& w : words) argv.push_back(w.c_str());
  argv.push_back("--help");
  const cli::Parsed p = cli::parse(static_cast<int>(argv.size()), argv.data());
  EXPECT_EQ(p.exit_code, cli::kExitOk) << p.err;
  return p.out;
}

// The names listed under "Subcommands:" in a help text.
std::vector<std::string> subcommands_of(const std::string& help) {
  std::vector<std::string> out;
  const size_t at = help.find("\nSubcommands:\n");
  if (at == std::string::npos) return out;
  const std::regex name(R"(^  ([a-z][a-z0-9-]*) )");
  for (const std::string& line : lvdocs::lines_of(help.substr(at + 14))) {
    std::smatch m;
    if (line.empty()) break;
    if (std::regex_search(line, m, name)) out.push_back(m[1]);
  }
  return out;
}

// Every command as its words: {"attach"}, ..., {"deny", "import"}.
std::vector<std::vector<std::string>> every_command() {
  std::vector<std::vector<std::string>> out;
  for (const std::string& c : subcommands_of(help_of({}))) {
    const auto subs = subcommands_of(help_of({c}));
    if (subs.empty()) out.push_back({c});
    for (const std::string& sub : subs) out.push_back({c, sub});
  }
  return out;
}

// The long options a help text lists ("--config"), --help aside.
std::set<std::string> help_options(const std::string& help) {
  std::set<std::string> out;
  const std::regex opt(R"(^  (?:-[a-z],)?(--[a-z0-9-]+))");
  for (const std::string& line : lvdocs::lines_of(help)) {
    std::smatch m;
    if (std::regex_search(line, m, opt) && m[1] != "--help") out.insert(m[1]);
  }
  return out;
}

// The heading of CLI.md that documents a command.
std::string heading_of(const std::vector<std::string>& cmd) {
  if (cmd.size() == 2 && cmd[1] == "import") return "## levee deny import";
  if (cmd[0] == "allow" || cmd[0] == "deny" || cmd[0] == "override") return "## levee allow, deny, override";
  return "## levee " + cmd[0];
}

// The options a text names: `--config`, --rate, ... (not `--config-x` for --config).
std::set<std::string> named_options(const std::string& text) {
  std::set<std::string> out;
  const std::regex opt(R"((^|[^a-z0-9-])(--[a-z][a-z0-9-]*))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), opt); it != std::sregex_iterator(); ++it)
    out.insert((*it)[2]);
  return out;
}

// The first fenced block of a section: the command's synopsis.
std::string synopsis(const std::string& section) {
  const size_t begin = section.find("```\n");
  const size_t end = begin == std::string::npos ? begin : section.find("```", begin + 4);
  return begin == std::string::npos || end == std::string::npos ? "" : section.substr(begin + 4, end - begin - 4);
}

// JSON.md is the one place the JSON is described: each section of CLI.md whose command
// has --json links there, and CLI.md lists no JSON fields of its own (a table of them
// would lag the code, as CLI.md's once did: no syn_handoffs, no crowdsec).
TEST(Docs, CliMdLinksEachCommandsJsonToJsonMdAndDescribesNoneItself) {
  const std::string cli_md = lvdocs::read_doc("CLI.md");
  size_t with_json = 0;
  bool fenced = false;
  for (const std::string& line : lvdocs::lines_of(cli_md)) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || line.rfind("## levee ", 0) != 0) continue;
    const std::string section = lvdocs::section(cli_md, line);
    if (synopsis(section).find("--json") == std::string::npos) continue;
    ++with_json;
    EXPECT_NE(section.find("](JSON.md#"), std::string::npos) << "CLI.md's \"" << line << "\" does not link to JSON.md";
  }
  EXPECT_GE(with_json, 7u) << "the sections of the commands with --json were not found";
  for (const std::string& line : lvdocs::lines_of(cli_md)) {
    const auto cells = lvdocs::row_cells(line);
    EXPECT_FALSE(!cells.empty() && cells[0] == "field") << "CLI.md has a table of JSON fields: " << line;
  }
}

// Each option --help lists is in the command's section of CLI.md, and each option its
// synopsis names is one the command has.
TEST(Help, EveryCommandsOptionsAreTheOnesCliMdDocuments) {
  const std::string cli_md = lvdocs::read_doc("CLI.md");
  std::map<std::string, std::set<std::string>> by_heading;  // a section may cover several commands
  const auto commands = every_command();
  ASSERT_GE(commands.size(), 20u) << "the commands were not found in levee --help";
  for (const auto& cmd : commands) {
    const std::string heading = heading_of(cmd);
    const std::string section = lvdocs::section(cli_md, heading);
    ASSERT_FALSE(section.empty()) << "CLI.md has no \"" << heading << "\"";
    const std::set<std::string> opts = help_options(help_of(cmd));
    const std::set<std::string> documented = named_options(section);
    for (const std::string& o : opts)
      EXPECT_TRUE(documented.contains(o)) << "levee " << cmd[0] << (cmd.size() > 1 ? " " + cmd[1] : "") << " " << o
                                          << " is not in CLI.md's \"" << heading << "\"";
    by_heading[heading].insert(opts.begin(), opts.end());
  }
  for (const auto& [heading, opts] : by_heading)
    for (const std::string& o : named_options(synopsis(lvdocs::section(cli_md, heading))))
      EXPECT_TRUE(opts.contains(o)) << "CLI.md's synopsis under \"" << heading << "\" names " << o
                                    << ", which --help does not list";
}

// What --config excludes, as CLI.md lists it and as the parser enforces it.
TEST(Help, AttachConfigExcludesWhatCliMdSays) {
  std::set<std::string> parser;
  for (const std::string& line : lvdocs::lines_of(help_of({"attach"}))) {
    const size_t at = line.find("Excludes: ");
    if (line.rfind("  --config ", 0) != 0 || at == std::string::npos) continue;
    std::istringstream words(line.substr(at + 10));
    for (std::string w; words >> w;) parser.insert(w);
  }
  ASSERT_FALSE(parser.empty()) << "attach --help says nothing --config excludes";
  std::set<std::string> documented;
  for (const std::string& line : lvdocs::lines_of(lvdocs::section(lvdocs::read_doc("CLI.md"), "## levee attach"))) {
    const auto cells = lvdocs::row_cells(line);
    if (cells.size() == 3 && cells[0].rfind("`--config", 0) == 0) {
      const size_t at = cells[2].find("excludes");
      ASSERT_NE(at, std::string::npos) << line;
      documented = named_options(cells[2].substr(at));
    }
  }
  EXPECT_EQ(documented, parser) << "the --config row of CLI.md's attach options";
}

// Each value has a name that says what it is ("FILE", "PPS", "auto|off"), in --help and
// so in levee(8), never CLI11's type ("TEXT", "UINT", "FLOAT").
TEST(Help, NoValueIsNamedByItsType) {
  const std::regex type(R"(\b(TEXT|UINT|INT|FLOAT)\b)");
  for (const auto& cmd : every_command()) {
    const std::string help = help_of(cmd);
    EXPECT_FALSE(std::regex_search(help, type))
        << "levee " << cmd[0] << (cmd.size() > 1 ? " " + cmd[1] : "") << " --help:\n"
        << help;
  }
}

}  // namespace
}  // namespace levee
