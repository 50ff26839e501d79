// compile.hpp - a validated Policy in the datapath's form: one lv_policy slot (classes
// with their limits and prefix masks, the class table, overrides, the interface's
// flags) and the entries of its list tries; and a compiled class read back.
#pragma once

#include <cstdint>
#include <vector>

#include "core/clock.hpp"
#include "levee_abi.h"
#include "policy/lists.hpp"
#include "policy/policy.hpp"

namespace levee {

// The datapath's form of a validated policy.
struct CompiledPolicy {
  lv_policy slot{};              // generation left 0: the publisher sets it
  std::vector<uint8_t> new_ids;  // ids given to a class that did not hold them before
  List4 list4;
  List6 list6;
};

// With `prior` (the slot being replaced), classes keep their ids, epochs and counter
// baselines; an id given to a new class gets the next epoch (its old state is not
// found) and its baseline is left for the caller to take from the live counters.
CompiledPolicy compile(const Policy& p, const Clocks& clk, const lv_policy* prior = nullptr);

// Compile one class: limits, prefix masks, ban times, its own mode, its autopilot
// (lv_auto: LV_CLASS_AUTO_ADMIT for admission "auto" without a budget, LV_CLASS_ESCALATE
// when it escalates), and the fast-reject flag when the tau of every limit covers two
// ticks of the cached clock's staleness. `cpus` (possible CPUs, 0: ask libbpf) sizes the lease of a class total.
// LV_CLASS_MONITOR is the class's own mode here; apply_interface() folds in the
// interface's switch.
lv_class compile_class(const ClassSpec& c, uint64_t tick_ns, unsigned cpus = 0);

// What a whole slot derives from its classes and the interface's monitor switch
// (LV_POL_MONITOR in s.flags): each class's LV_CLASS_MONITOR (its own mode or the
// switch), LV_POL_BAN_ALL and the every-class ban prefix (ban_mask4/6). Call after
// any change of a class or of the switch.
void apply_interface(lv_policy& s);

// The most of a class total one CPU draws at once: min(1 ms, tau / (2 x cpus)) over
// the total limits the class has; 0 without one (or with a burst of one).
uint64_t lease_ns(const lv_class& c, unsigned cpus);

// When a full map refuses new sources (LV_POL_REFUSE_FULL), the count it refuses at:
// a little under `max_entries`, because the LRU starts evicting before it is full
// (each CPU may hold a batch of free nodes).
uint64_t refuse_full_at(uint64_t max_entries, unsigned cpus);

// Possible CPUs, as the kernel sizes per-CPU maps (libbpf_num_possible_cpus), >= 1.
unsigned possible_cpus();

// Compile one class or override limit (exposed for tests).
lv_limit compile_packet_limit(const Rate& r);
lv_limit compile_byte_limit(const Rate& r);

// The network watch charges one passed packet in 2^kWatchSampleShift (one in 32) of a
// class's sources, 32 times over (lv_auto.sample_shift): a watched network costs a map
// lookup per 32 packets, not per packet. A sample costs ~42 ns (levee-progbench with a
// shift of 0), so one in 16 cost the pass path ~5 ns and one in 32 costs ~2.5; an
// escalated network is charged every packet whatever the shift. Not configurable.
inline constexpr uint32_t kWatchSampleShift = 5;

// The most an escalated network's limit allows, packets per second: one a nanosecond,
// the finest cost the GCRA expresses (network_sources x a fast class's rate gets there).
inline constexpr uint64_t kMaxWatchRate = LV_NSEC_PER_SEC;

// The limit of an escalated network of the class (lv_auto.watch): [auto]'s network_rate,
// or network_sources times the class's per-source packet limit, its rate at most
// kMaxWatchRate. Its burst is at least 2^kWatchSampleShift + 1, so that a sample,
// charged 2^kWatchSampleShift packets' cost at once, fits the tolerance. Rate{} when the class does not
// escalate (ClassSpec::escalates()).
Rate watch_rate(const ClassSpec& c);

// The class table alone (exposed for tests): first match wins, default last. `ids`
// gives each class's id (default: its position).
void compile_table(const std::vector<ClassSpec>& classes, lv_class_table& t, const std::vector<uint8_t>& ids = {});

// A compiled class read back (status, show, set): its operator-facing view, its
// admission mode, escalation and the [auto] settings it was compiled with included
// (known_good_* are not compiled: [auto]'s defaults), so that compile_class(class_of(c))
// is c.
ClassSpec class_of(const lv_class& c);

}  // namespace levee
