// config_crowdsec.cpp - the [crowdsec] table: levee run as a CrowdSec bouncer
// (policy/crowdsec.hpp). Read with the other tables; only `levee run` acts on it.
#include <fmt/format.h>

#include <algorithm>

#include "core/quote.hpp"
#include "core/units.hpp"
#include "policy/config_reader.hpp"

namespace levee::config_reader {
namespace {

// Polling faster than this is a busy loop against the Local API; slower than a minute
// leaves a fleet's ban unenforced for too long to be what the operator meant.
constexpr uint64_t kMinPollNs = 100'000'000;
constexpr uint64_t kMaxPollNs = 60'000'000'000;
// A ban shorter than a second ends before the fleet's bouncers pull it.
constexpr uint64_t kMinPublishBanNs = 1'000'000'000;
// cscli's names: its --auto ids are 48 hex digits; LAPI stores up to 255 characters.
constexpr size_t kMaxMachineId = 255;

bool machine_id_ok(const std::string& id) {
  return !id.empty() && id.size() <= kMaxMachineId && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.' || c == '@';
  });
}

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

// A required key naming a file that holds a secret: an absolute path (the daemon's
// working directory is not the operator's).
void Reader::secret_file(const toml::table& t, const char* key, const std::string& relative_hint,
                         const std::string& missing_hint, std::string& out) {
  const std::string path = std::string("crowdsec.") + key;
  const toml::node* n = t.get(key);
  if (!n) return fail(t, path, "missing", missing_hint);
  auto v = string(*n, path);
  if (!v) return;
  if (v->empty() || v->front() != '/')
    return fail(*n, path, fmt::format("{} is not an absolute path", quote_value(*v)), relative_hint);
  out = *v;
}

void Reader::crowdsec(const toml::table& t, CrowdsecSpec& s) {
  known(t, "crowdsec",
        {"url", "api_key_file", "poll", "timeout", "origins", "scenarios_containing", "scenarios_not_containing",
         "supported_decisions_types", "publish", "machine_id", "machine_password_file", "publish_min_ban",
         "publish_queue"});
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
  secret_file(t, "api_key_file", "give e.g. /etc/levee/crowdsec.key, holding the key of `cscli bouncers add levee`",
              "give the file holding the key of `cscli bouncers add levee`, e.g. /etc/levee/crowdsec.key",
              s.api_key_file);
  // A duration of the table within [lo, hi].
  const auto span = [&](const char* key, uint64_t lo, uint64_t hi, const char* give, uint64_t& out) {
    const std::string path = std::string("crowdsec.") + key;
    const toml::node* n = t.get(key);
    if (!n) return;
    if (auto v = duration(*n, path)) {
      if (*v < lo || *v > hi)
        fail(*n, path, fmt::format("{} is out of range", format_duration(*v)), give);
      else
        out = *v;
    }
  };
  span("poll", kMinPollNs, kMaxPollNs, "give 100ms to 1m", s.poll_ns);
  span("timeout", kMinCsTimeoutNs, kMaxCsTimeoutNs, "give 1s to 10m", s.timeout_ns);
  if (const toml::node* n = t.get("origins")) strings(*n, "crowdsec.origins", s.origins);
  if (const toml::node* n = t.get("scenarios_containing"))
    strings(*n, "crowdsec.scenarios_containing", s.scenarios_containing);
  if (const toml::node* n = t.get("scenarios_not_containing"))
    strings(*n, "crowdsec.scenarios_not_containing", s.scenarios_not_containing);
  if (const toml::node* n = t.get("supported_decisions_types"))
    strings(*n, "crowdsec.supported_decisions_types", s.types);
  crowdsec_machine(t, s);
}

// levee as a CrowdSec machine: publish = true and the machine's login; the other keys of
// publishing given without it are errors, never silently idle.
void Reader::crowdsec_machine(const toml::table& t, CrowdsecSpec& s) {
  const toml::node* publish = t.get("publish");
  if (publish) {
    if (!publish->is_boolean()) wrong_type(*publish, "crowdsec.publish", "true or false");
    s.publish = publish->value_or(false);
  }
  if (!s.publish) {
    for (const char* key : {"machine_id", "machine_password_file", "publish_min_ban", "publish_queue"})
      if (const toml::node* n = t.get(key))
        fail(*n, std::string("crowdsec.") + key, "given without publish = true",
             "add publish = true to share levee's bans with the fleet, or remove it");
    return;
  }
  if (const toml::node* n = t.get("machine_id")) {
    if (auto v = string(*n, "crowdsec.machine_id")) {
      if (!machine_id_ok(*v))
        fail(*n, "crowdsec.machine_id", fmt::format("{} is not a machine name", quote_value(*v)),
             "give the NAME of `cscli machines add NAME` (letters, digits, - _ . @)");
      else
        s.machine_id = *v;
    }
  } else {
    fail(t, "crowdsec.machine_id", "missing",
         "give the NAME levee was registered with: `cscli machines add NAME --password ...`");
  }
  secret_file(t, "machine_password_file",
              "give e.g. /etc/levee/crowdsec-machine.password, holding the machine's password, mode 600",
              "give the file holding the machine's password (mode 600), e.g. /etc/levee/crowdsec-machine.password",
              s.machine_password_file);
  if (const toml::node* n = t.get("publish_min_ban")) {
    if (auto v = duration(*n, "crowdsec.publish_min_ban")) {
      if (*v < kMinPublishBanNs)
        fail(*n, "crowdsec.publish_min_ban", fmt::format("{} is shorter than a second", format_duration(*v)),
             "give 1s or more: a shorter ban ends before the fleet pulls it");
      else
        s.publish_min_ban_ns = *v;
    }
  }
  if (const toml::node* n = t.get("publish_queue"))
    if (auto v = count(*n, "crowdsec.publish_queue", 1, kMaxCsPublishQueue)) s.publish_queue = *v;
}

}  // namespace levee::config_reader
