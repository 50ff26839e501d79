// config_reader.hpp - the reader of the TOML config file, for the files that make it
// up: config.cpp (the document and its top-level tables), config_values.cpp (errors and
// the value readers) and config_class.cpp (a class and what it takes from [defaults]).
// Nothing outside policy/config*.cpp includes it: load_config() and parse_config()
// (policy/config.hpp) are the interface.
//
// A Reader walks the document one table at a time and keeps the first error it meets,
// as one line "FILE:LINE: KEY: problem; hint". What no single key shows (a class
// without a limit, a network listed twice) is left to validate(), which reports it at
// the Where of its class, override or list entry.
#pragma once

#include <toml++/toml.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "policy/policy.hpp"

namespace levee::config_reader {

using Keys = std::initializer_list<std::string_view>;

// Key paths for errors: join("class[0]", "rate") is "class[0].rate", index("class", 2)
// "class[2]".
std::string join(const std::string& path, std::string_view key);
std::string index(const std::string& path, size_t i);
unsigned line_of(const toml::node& n);

// A decimal number that is all of `s`, at most `max`.
std::optional<uint64_t> number(std::string_view s, uint64_t max);

// Keys a class may set and otherwise takes from [defaults] (prefix4 and prefix6 aside).
// Each with where it was given, for errors.
template <typename T>
struct Given {
  std::optional<T> value;
  Where where;
  explicit operator bool() const { return value.has_value(); }
  const T& operator*() const { return *value; }
  const T* operator->() const { return &*value; }
};
// new_sources: "auto", "off", or a number (Budget, with the rate).
struct NewSources {
  Admission admission = Admission::Auto;
  uint64_t rate = 0;
};
struct Inheritable {
  Given<NewSources> new_sources;
  Given<uint64_t> new_sources_burst;
  Given<uint64_t> ban, ban_max, forget_after;
  Given<bool> ban_all, monitor, escalate;
};
inline constexpr std::array<std::string_view, 8> kInheritableKeys = {
    "new_sources", "new_sources_burst", "ban", "ban_max", "forget_after", "ban_scope", "mode", "escalate"};

class Reader {
 public:
  Reader(std::string file, uint64_t now_ns) : file_(std::move(file)), now_ns_(now_ns) {}

  Result<Policy> read(const toml::table& root);

 private:
  // ---- errors: the first one is kept (config_values.cpp) ----
  void fail(unsigned line, const std::string& key, const std::string& what, std::string hint = {});
  void fail(const toml::node& n, const std::string& key, const std::string& what, std::string hint = {});
  void wrong_type(const toml::node& n, const std::string& key, const std::string& want, std::string hint = {});
  Where where(const toml::node& n, const std::string& key) const;

  // Every key of `t` is one of `keys`; the first unknown one (by line) is the error.
  void known(const toml::table& t, const std::string& path, Keys keys);
  void known(const toml::table& t, const std::string& path, const std::vector<std::string_view>& keys);

  // ---- values (config_values.cpp) ----
  const toml::table* table(const toml::table& parent, const char* key);

  // An array of tables ([[class]]), each with its key path; more than `max` is an error.
  std::vector<std::pair<const toml::table*, std::string>> tables(const toml::node& n, const std::string& key,
                                                                 size_t max, const char* max_hint);

  // An array with at least one element; each is passed to `each` with its key path.
  template <typename F>
  void elements(const toml::node& n, const std::string& key, const std::string& want, F each) {
    const toml::array* a = n.as_array();
    if (!a) return wrong_type(n, key, want);
    if (a->empty()) return fail(n, key, "empty array", "give at least one, or leave the key out");
    for (size_t i = 0; i < a->size(); ++i) each((*a)[i], index(key, i));
  }

  std::optional<std::string> string(const toml::node& n, const std::string& key);

  // A count: a TOML integer or a string like "10k", within [lo, hi].
  std::optional<uint64_t> count(const toml::node& n, const std::string& key, uint64_t lo, uint64_t hi,
                                const std::string& zero_hint = {});

  std::optional<unsigned> prefix(const toml::table& t, const std::string& path, const char* key, unsigned max);
  std::optional<Cidr> cidr(const toml::node& n, const std::string& key);

  // One of `options`, as a string.
  std::optional<std::string> choice(const toml::node& n, const std::string& key,
                                    std::initializer_list<std::string_view> options);

  // A positive duration as a string ("500ms", "2s", "1h30m"): ns. `zero_ok`: "0s" too.
  std::optional<uint64_t> duration(const toml::node& n, const std::string& key, bool zero_ok = false);

  // A duration from now ("2h") or a date-time, as a TOML date-time or a string: Unix ns, 0
  // after an error. The same rule as --expires (parse_expiry).
  uint64_t expiry(const toml::node& n, const std::string& key);

  // rate/burst and bytes_rate/bytes_burst: each pair both or neither. `burst_is`: what
  // a burst is there, for the hint when it is missing ("how much one source may send at
  // once"; a network's, the class's, the answers').
  void limits(const toml::table& t, const std::string& path, Rate& packets, Rate& bytes, const char* burst_is);
  Rate pair(const toml::table& t, const std::string& path, const char* rk, const char* bk, uint64_t max_rate,
            uint64_t max_burst, const char* burst_is);

  // ---- the top-level tables (config.cpp) ----
  void interface(const toml::table& t, InterfaceSettings& s);
  void autopilot(const toml::table& t, AutoSpec& a);             // [auto]
  void syn_auth(const toml::table& t, SynAuthSpec& s);           // [syn_auth]
  void crowdsec(const toml::table& t, CrowdsecSpec& s);          // [crowdsec] (config_crowdsec.cpp)
  void crowdsec_machine(const toml::table& t, CrowdsecSpec& s);  // its publish keys
  void secret_file(const toml::table& t, const char* key, const std::string& relative_hint,
                   const std::string& missing_hint, std::string& out);
  // An array of non-empty strings, into `out`.
  void strings(const toml::node& n, const std::string& key, std::vector<std::string>& out);
  void list(const toml::node& n, const std::string& key, lv_list_kind kind, Policy& p);
  void override_(const toml::table& t, const std::string& path, Policy& p);

  // Classes banning in every class share one ban per source, so one prefix.
  void ban_scopes(const Policy& p);

  // ---- a class (config_class.cpp) ----
  ClassSpec klass(const toml::table& t, const std::string& path, bool is_default);
  std::vector<std::string_view> with_inheritable(std::vector<std::string_view> keys) const;

  // The keys a class may take from [defaults], as given in `t` (a class or [defaults]).
  Inheritable inheritable(const toml::table& t, const std::string& path);

  // A class's own settings over [defaults]'.
  void inherit(const toml::table& t, const std::string& path, const Inheritable& own, ClassSpec& c);
  void inherit_admission(const Inheritable& own, ClassSpec& c);  // new_sources, new_sources_burst

  // new_sources: "auto", "off" or a count.
  std::optional<NewSources> new_sources(const toml::node& n, const std::string& key);

  // new_sources_burst given where new_sources is not a number (`ns`: the one in force).
  void burst_without_budget(const Given<uint64_t>& burst, const Given<NewSources>& ns);

  // network = { prefix4, prefix6, rate, burst, bytes_rate, bytes_burst }
  void network(const toml::node& n, const std::string& path, ClassSpec& c);

  // total = { rate, burst, bytes_rate, bytes_burst }
  void total(const toml::node& n, const std::string& path, ClassSpec& c);

  // A class's or override's name, valid and unique; `fallback` if absent (null: required).
  std::string name(const toml::table& t, const std::string& path, std::map<std::string, unsigned>& seen,
                   const char* what, const char* fallback);

  Match match(const toml::node& n, const std::string& path);
  void protos(const toml::node& n, const std::string& key, std::vector<Proto>& out);
  void ports(const toml::node& n, const std::string& key, std::vector<PortRange>& out);

  std::string file_;
  uint64_t now_ns_;
  std::optional<Error> error_;
  unsigned prefix4_ = 32, prefix6_ = 64;                          // [defaults]
  std::map<std::string, unsigned> class_lines_, override_lines_;  // name -> line
  Inheritable defaults_;                                          // [defaults]
};

}  // namespace levee::config_reader
