// crowdsec.cpp - the [crowdsec] values, the key and password files (crowdsec.hpp).
#include "policy/crowdsec.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>

#include "core/input_file.hpp"
#include "core/quote.hpp"
#include "core/units.hpp"

namespace levee {
namespace {

constexpr std::string_view kUrlHint = R"(give the Local API's address, e.g. url = "http://127.0.0.1:8080")";

bool printable_line(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

// A port: 1 to 5 digits.
std::optional<unsigned> port_of(std::string_view s) {
  if (s.empty() || s.size() > 5 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  unsigned v = 0;
  for (char c : s) v = v * 10 + static_cast<unsigned>(c - '0');
  return v;
}

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

Result<std::pair<std::string, uint16_t>> parse_cs_url(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.starts_with("https://"))
    return usage_error(
        fmt::format("{}: https is not supported", quote_value(std::string(url))),
        "levee speaks plain HTTP: run the Local API on this host or a private network, " + std::string(kUrlHint));
  if (!url.starts_with(kScheme))
    return usage_error(fmt::format("{} is not an http:// URL", quote_value(std::string(url))), std::string(kUrlHint));
  std::string_view rest = url.substr(kScheme.size());
  if (rest.ends_with('/')) rest.remove_suffix(1);
  std::string host(rest);
  uint16_t port = 80;
  const auto colon = rest.rfind(':');
  const bool bracketed = rest.starts_with('[');
  if (colon != std::string_view::npos && (!bracketed || rest[colon - 1] == ']')) {
    const auto p = port_of(rest.substr(colon + 1));
    if (!p || *p < 1 || *p > 65535)
      return usage_error(fmt::format("{} has no valid port", quote_value(std::string(url))), std::string(kUrlHint));
    port = static_cast<uint16_t>(*p);
    host = std::string(rest.substr(0, colon));
  }
  if (bracketed && host.size() > 2 && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty() || host.find_first_of("/?#@ ") != std::string::npos)
    return usage_error(fmt::format("{} is not a host and port", quote_value(std::string(url))), std::string(kUrlHint));
  return std::pair{host, port};
}

namespace {

// A secret alone in a file of its own: `what` names the file in messages.
Result<std::string> read_secret(const std::string& path, std::string_view what, const std::string& hint) {
  LV_TRY_ASSIGN(const InputFile f, read_input(path, {.what = what, .max_bytes = kMaxCsKeyBytes, .hint = hint}));
  if (f.mode & S_IROTH)
    return usage_error(fmt::format("{}: {} is readable by everyone", path, what), fmt::format("chmod 600 {}", path));
  const std::string_view secret = trim(f.text);
  if (secret.empty()) return usage_error(fmt::format("{}: {} is empty", path, what), hint);
  if (!printable_line(secret))
    return usage_error(fmt::format("{}: {} holds more than one printable word", path, what), hint);
  return std::string(secret);
}

}  // namespace

bool same_pull(const CrowdsecSpec& a, const CrowdsecSpec& b) {
  return a.enabled == b.enabled && a.host == b.host && a.port == b.port && a.poll_ns == b.poll_ns &&
         a.timeout_ns == b.timeout_ns && a.origins == b.origins && a.scenarios_containing == b.scenarios_containing &&
         a.scenarios_not_containing == b.scenarios_not_containing && a.types == b.types;
}

bool same_publish(const CrowdsecSpec& a, const CrowdsecSpec& b) {
  return a.publish == b.publish && a.host == b.host && a.port == b.port && a.timeout_ns == b.timeout_ns &&
         a.machine_id == b.machine_id && a.publish_min_ban_ns == b.publish_min_ban_ns &&
         a.publish_queue == b.publish_queue;
}

Result<std::string> read_cs_key(const std::string& path) {
  return read_secret(path, "the CrowdSec key file",
                     "write the key `cscli bouncers add levee -o raw` printed into it, alone, mode 600");
}

Result<std::string> read_cs_password(const std::string& path) {
  return read_secret(path, "the CrowdSec machine password file",
                     "write the password given to `cscli machines add NAME --password ...` into it, alone, mode 600");
}

}  // namespace levee
