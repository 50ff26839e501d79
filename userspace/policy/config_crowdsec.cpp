// config_crowdsec.cpp - the [crowdsec] table: levee run as a CrowdSec bouncer
// (policy/crowdsec.hpp). Read with the other tables; only `levee run` acts on it.
#include <fmt/format.h>

#include "core/quote.hpp"
#include "core/units.hpp"
#include "policy/config_reader.hpp"

namespace levee::config_reader {
namespace {

// Polling faster than this is a busy loop against the Local API; slower than a minute
// leaves a fleet's ban unenforced for too long to be what the operator meant.
constexpr uint64_t kMinPollNs = 100'000'000;
constexpr uint64_t kMaxPollNs = 60'000'000'000;

}  // namespace

void Reader::strings(const toml::node& n, const std::string& key, std::vector<std::string>& out) {
  out.clear();
  elements(n, key, "an array of strings", [&](const toml::node& el, const std::string& k) {
    auto s = string(el, k);
    if (!s) return;
    if (s->empty()) return fail(el, k, "empty string", "give a word, or remove it");
    out.push_back(*s);
  });
}

void Reader::crowdsec(const toml::table& t, CrowdsecSpec& s) {
  known(t, "crowdsec",
        {"url", "api_key_file", "poll", "origins", "scenarios_containing", "scenarios_not_containing",
         "supported_decisions_types"});
  s.enabled = true;
  if (const toml::node* n = t.get("url")) {
    if (auto v = string(*n, "crowdsec.url")) {
      if (auto hp = parse_cs_url(*v))
        std::tie(s.host, s.port) = *hp;
      else
        fail(*n, "crowdsec.url", hp.error().what, hp.error().hint);
    }
  } else {
    fail(t, "crowdsec.url", "missing", R"(give the Local API's address, e.g. url = "http://127.0.0.1:8080")");
  }
  if (const toml::node* n = t.get("api_key_file")) {
    if (auto v = string(*n, "crowdsec.api_key_file")) {
      if (v->empty() || v->front() != '/')
        fail(*n, "crowdsec.api_key_file", fmt::format("{} is not an absolute path", quote_value(*v)),
             "give e.g. /etc/levee/crowdsec.key, holding the key of `cscli bouncers add levee`");
      else
        s.api_key_file = *v;
    }
  } else {
    fail(t, "crowdsec.api_key_file", "missing",
         "give the file holding the key of `cscli bouncers add levee`, e.g. /etc/levee/crowdsec.key");
  }
  if (const toml::node* n = t.get("poll")) {
    if (auto v = duration(*n, "crowdsec.poll")) {
      if (*v < kMinPollNs || *v > kMaxPollNs)
        fail(*n, "crowdsec.poll", fmt::format("{} is out of range", format_duration(*v)), "give 100ms to 1m");
      else
        s.poll_ns = *v;
    }
  }
  if (const toml::node* n = t.get("origins")) strings(*n, "crowdsec.origins", s.origins);
  if (const toml::node* n = t.get("scenarios_containing"))
    strings(*n, "crowdsec.scenarios_containing", s.scenarios_containing);
  if (const toml::node* n = t.get("scenarios_not_containing"))
    strings(*n, "crowdsec.scenarios_not_containing", s.scenarios_not_containing);
  if (const toml::node* n = t.get("supported_decisions_types"))
    strings(*n, "crowdsec.supported_decisions_types", s.types);
}

}  // namespace levee::config_reader
