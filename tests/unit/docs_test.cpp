// docs_test.cpp - the docs held to the code: the sections generated from the code's
// tables (reasons, would-be drops, event types) are what it generates now, and those
// tables cover the ABI.
#include <gtest/gtest.h>

#include <algorithm>
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

// The event types, as the ABI numbers them (1 up, none skipped), each with a name and
// what it means, in ABI order: what the events, the metrics, --help and CLI.md name.
TEST(EventTypes, EveryAbiTypeHasANameAndHelp) {
  for (size_t i = 0; i < kEventTypes.size(); ++i) {
    EXPECT_EQ(kEventTypes[i].id, i + 1) << kEventTypes[i].name;
    EXPECT_FALSE(kEventTypes[i].help.empty()) << kEventTypes[i].name;
    EXPECT_EQ(event_type_name(kEventTypes[i].id), kEventTypes[i].name);
  }
  EXPECT_EQ(kEventTypes.back().id, static_cast<unsigned>(LV_EV_ANSWER_LIMITED));
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

}  // namespace
}  // namespace levee
