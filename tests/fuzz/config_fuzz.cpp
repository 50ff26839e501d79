// config_fuzz.cpp - the TOML config file, read, validated and compiled as attach and
// reload do it (policy: parse_config, validate, compile).
//
// Properties: a refusal names the file; a config that is accepted validates again and
// compiles; the compiled classes read back (class_of) as the classes the file gave, in
// its order, each under its own id, their autopilot included (every class has [auto],
// and a class compiled again from what it reads back has the same autopilot); no
// limit's tolerance wraps around in 64 bits, and a network watch's takes a sample (16
// packets' cost); compiling again over the compiled slot keeps every class's id, as a
// reload does.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "fuzz.hpp"
#include "policy/compile.hpp"
#include "policy/config.hpp"
#include "policy/validate.hpp"

namespace levee {
namespace {

using fuzz::escaped;

constexpr const char* kFile = "fuzz.toml";
constexpr uint64_t kNow = 1'767'225'600'000'000'000ull;  // 2026-01-01T00:00:00Z
const Clocks kClocks{.tick_ns = 4'000'000, .now_unix_ns = kNow, .now_mono_ns = 1'000'000'000'000};

// The GCRA's tolerance of a limit, (burst - 1) x cost, as the datapath needs it: exact.
void check_limit(const lv_limit& l, const char* what, const std::string& cls) {
  if (!l.cost) return;
  const bool bytes = std::string_view(what).find("bytes") != std::string_view::npos;
  const unsigned __int128 tau = bytes ? (static_cast<unsigned __int128>(l.burst) * l.cost) >> LV_BYTE_SHIFT
                                      : static_cast<unsigned __int128>(l.burst - 1) * l.cost;
  LV_PROPERTY(l.burst >= 1 && tau == l.tau_ns, "class {}: {} rate {} burst {} compiles to tau {} ns, not {}", cls, what,
              l.rate, l.burst, l.tau_ns, static_cast<double>(tau));
}

// The autopilot as the class asked for it, read back, and compiled again the same.
void check_autopilot(const ClassSpec& want, const lv_class& k, const ClassSpec& got) {
  LV_PROPERTY(got.admission == want.admission_in_force() && got.escalate == want.escalate,
              "class {}: admission {} escalate {} read back as {} {}", want.name,
              admission_name(want.admission_in_force()), want.escalate, admission_name(got.admission), got.escalate);
  LV_PROPERTY(bool(k.flags & LV_CLASS_AUTO_ADMIT) == (want.admission_in_force() == Admission::Auto) &&
                  bool(k.flags & LV_CLASS_ESCALATE) == want.escalates(),
              "class {}: flags {:#x} for admission {}, escalates {}", want.name, k.flags,
              admission_name(want.admission_in_force()), want.escalates());
  const lv_auto& a = k.autop;
  LV_PROPERTY(!(k.flags & LV_CLASS_ESCALATE) || a.watch.tau_ns >= a.watch.cost << a.sample_shift,
              "class {}: the network watch's tau {} ns takes no sample of 2^{} x {} ns", want.name, a.watch.tau_ns,
              a.sample_shift, a.watch.cost);
  const lv_class again = compile_class(got, kClocks.tick_ns, 2);
  constexpr uint32_t kAutoFlags = LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE | LV_CLASS_ADMIT;
  LV_PROPERTY(std::memcmp(&again.autop, &a, sizeof a) == 0 && (again.flags & kAutoFlags) == (k.flags & kAutoFlags),
              "class {}: its autopilot compiles otherwise from what it reads back", want.name);
}

void check_class(const ClassSpec& want, const lv_class& k) {
  const ClassSpec got = class_of(k);
  LV_PROPERTY(got.name == want.name, "class {} compiled as {}", want.name, got.name);
  LV_PROPERTY(got.packets == want.packets && got.bytes == want.bytes && got.new_sources == want.new_sources,
              "class {}: its limits read back otherwise", want.name);
  LV_PROPERTY(got.prefix4 == want.prefix4 && got.prefix6 == want.prefix6,
              "class {}: prefixes /{} /{} read back /{} /{}", want.name, want.prefix4, want.prefix6, got.prefix4,
              got.prefix6);
  LV_PROPERTY(got.network.packets == want.network.packets && got.network.bytes == want.network.bytes &&
                  got.total.packets == want.total.packets && got.total.bytes == want.total.bytes,
              "class {}: its network or total limits read back otherwise", want.name);
  LV_PROPERTY(got.ban.set() == want.ban.set() && got.ban.ban_ns == want.ban.ban_ns &&
                  got.ban.all_classes == want.ban.all_classes && got.monitor == want.monitor,
              "class {}: its ban or mode reads back otherwise", want.name);
  check_autopilot(want, k, got);
  for (auto [l, what] : {std::pair{&k.pkt, "packets"},
                         {&k.bytes, "bytes"},
                         {&k.admit, "new_sources"},
                         {&k.net_pkt, "network packets"},
                         {&k.net_bytes, "network bytes"},
                         {&k.total_pkt, "total packets"},
                         {&k.total_bytes, "total bytes"},
                         {&k.autop.watch, "network watch"}})
    check_limit(*l, what, want.name);
}

void check(const std::string& text) {
  auto p = parse_config(text, kFile, kNow);
  if (!p.ok()) {
    LV_PROPERTY(p.error().what.rfind(kFile, 0) == 0, "a refusal that does not name the file: {}",
                escaped(p.error().message()));
    return;
  }
  const Status again = validate(*p, kNow);
  LV_PROPERTY(again.ok(), "accepted, then refused by validate(): {}", again.ok() ? "" : again.error().message());
  LV_PROPERTY(!p->classes.empty() && p->classes.size() <= LV_MAX_CLASSES, "{} classes accepted", p->classes.size());
  for (const ClassSpec& c : p->classes)
    LV_PROPERTY(c.autop == p->autop, "class {} has other [auto] settings than the file's", c.name);

  const auto c = std::make_unique<CompiledPolicy>(compile(*p, kClocks));
  const lv_policy& s = c->slot;
  LV_PROPERTY(s.nr_classes == p->classes.size(), "{} classes compiled as {}", p->classes.size(), s.nr_classes);
  std::set<uint8_t> ids;
  for (size_t i = 0; i < p->classes.size(); ++i) {
    const uint8_t id = s.order[i];
    LV_PROPERTY(id < LV_MAX_CLASSES && ids.insert(id).second, "class {} has id {}, taken or out of range",
                p->classes[i].name, id);
    check_class(p->classes[i], s.classes[id]);
  }
  for (unsigned k = 0; k < LV_L4_KINDS; ++k)
    if (k >= LV_L4_PORTED) LV_PROPERTY(ids.count(s.table.by_kind[k]), "l4 kind {} goes to no class", k);

  const auto reloaded = std::make_unique<CompiledPolicy>(compile(*p, kClocks, &s));
  LV_PROPERTY(reloaded->new_ids.empty() && std::equal(s.order, s.order + s.nr_classes, reloaded->slot.order),
              "compiled over itself, {} classes change ids", reloaded->new_ids.size());
}

}  // namespace
}  // namespace levee

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  levee::check(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
