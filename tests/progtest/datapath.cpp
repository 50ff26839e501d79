#include "datapath.hpp"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <thread>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/reasons.hpp"
#include "levee_bpf.skel.h"
#include "policy/compile.hpp"
#include "policy/keys.hpp"
#include "policy/validate.hpp"
#include "syn_cells.h"

namespace levee::progtest {
namespace {

std::runtime_error failure(const std::string& what, int err) {
  return std::runtime_error(what + ": " + std::strerror(err < 0 ? -err : err));
}

size_t percpu_value_size() { return (sizeof(lv_percpu) + 7) / 8 * 8; }

}  // namespace

void Datapath::SkelDeleter::operator()(::levee_bpf* s) const { levee_bpf__destroy(s); }

Datapath::Datapath(uint32_t max_sources) : max_sources_(max_sources) {
  skel_.reset(levee_bpf__open());
  if (!skel_) throw failure("open levee_bpf skeleton", errno);
  int err = bpf_map__set_max_entries(skel_->maps.lv_state, max_sources);
  if (err) throw failure("size lv_state", err);
  err = levee_bpf__load(skel_.get());
  if (err) throw failure("load levee_bpf (run as root; the verifier log is above)", err);
}

Datapath::~Datapath() = default;

int Datapath::prog_fd() const { return bpf_program__fd(skel_->progs.levee_xdp); }
int Datapath::policy_fd() const { return bpf_map__fd(skel_->maps.lv_policy); }
int Datapath::state_fd() const { return bpf_map__fd(skel_->maps.lv_state); }
int Datapath::local_fd() const { return bpf_map__fd(skel_->maps.lv_local); }

ListFds Datapath::list_fds() const { return list_fds_of(skel_.get()); }

lv_control Datapath::control() const {
  lv_control ctl{};
  uint32_t zero = 0;
  if (bpf_map_lookup_elem(policy_fd(), &zero, &ctl)) throw failure("read lv_policy", errno);
  return ctl;
}

void Datapath::write_control(const lv_control& ctl) {
  uint32_t zero = 0;
  if (bpf_map_update_elem(policy_fd(), &zero, &ctl, BPF_ANY)) throw failure("write lv_policy", errno);
}

void Datapath::set_class(const lv_class& cls) {
  lv_control ctl = control();
  ctl.abi_version = LV_ABI_VERSION;
  lv_policy& pol = ctl.slot[ctl.active & 1];
  pol.nr_classes = 1;
  pol.generation++;
  pol.classes[0] = cls;
  write_control(ctl);
}

RunResult Datapath::run(std::span<const uint8_t> frame, int repeat) const {
  bpf_test_run_opts opts{};
  opts.sz = sizeof(opts);
  opts.data_in = frame.data();
  opts.data_size_in = static_cast<uint32_t>(frame.size());
  opts.repeat = repeat;
  RunResult r;
  r.err = bpf_prog_test_run_opts(prog_fd(), &opts);
  r.retval = opts.retval;
  r.duration = opts.duration;
  return r;
}

RunResult Datapath::run_out(std::span<const uint8_t> frame) const {
  RunResult r;
  r.out.resize(frame.size() + 256);
  bpf_test_run_opts opts{};
  opts.sz = sizeof(opts);
  opts.data_in = frame.data();
  opts.data_size_in = static_cast<uint32_t>(frame.size());
  opts.data_out = r.out.data();
  opts.data_size_out = static_cast<uint32_t>(r.out.size());
  r.err = bpf_prog_test_run_opts(prog_fd(), &opts);
  r.retval = opts.retval;
  r.out.resize(r.err ? 0 : opts.data_size_out);
  return r;
}

Outcome Datapath::send(std::span<const uint8_t> frame) const {
  const Counters before = counters();
  const RunResult r = run(frame);
  const Counters after = counters();
  Outcome o;
  if (r.err) return o;
  o.verdict = r.retval;
  for (uint32_t reason = 0; reason < LV_REASON_MAX; ++reason) {
    const uint64_t moved = after[reason].packets - before[reason].packets;
    if (moved == 0) continue;
    if (moved != 1 || o.reason != LV_REASON_MAX) return Outcome{r.retval, LV_REASON_MAX};
    o.reason = reason;
  }
  return o;
}

void PrintTo(const Outcome& o, std::ostream* os) {
  *os << (o.verdict == XDP_PASS   ? "PASS"
          : o.verdict == XDP_DROP ? "DROP"
          : o.verdict == XDP_TX   ? "TX"
                                  : "XDP?")
      << "/" << (o.reason == LV_REASON_MAX ? "no-single-reason" : reason_name(o.reason));
}

std::vector<lv_hot> Datapath::hot(const lv_key& key) const {
  const int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0) throw failure("count possible CPUs", ncpus);
  std::vector<lv_hot> out(static_cast<size_t>(ncpus));  // 64 bytes: no per-CPU padding
  const uint32_t slot = lv_hot_slot(&key);
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.lv_hotset), &slot, out.data()))
    throw failure("read lv_hotset", errno);
  return out;
}

std::vector<lv_percpu> Datapath::percpu() const {
  const int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0) throw failure("count possible CPUs", ncpus);
  // A per-CPU value is copied out as one slot per possible CPU, each rounded to 8 bytes.
  const size_t stride = percpu_value_size();
  std::vector<uint8_t> buf(stride * static_cast<size_t>(ncpus));
  uint32_t zero = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.lv_percpu), &zero, buf.data()))
    throw failure("read lv_percpu", errno);
  std::vector<lv_percpu> out(static_cast<size_t>(ncpus));
  for (size_t cpu = 0; cpu < out.size(); ++cpu) std::memcpy(&out[cpu], buf.data() + stride * cpu, sizeof(lv_percpu));
  return out;
}

void Datapath::put_percpu(const lv_percpu& value) {
  const int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0) throw failure("count possible CPUs", ncpus);
  const size_t stride = percpu_value_size();
  std::vector<uint8_t> buf(stride * static_cast<size_t>(ncpus));
  for (size_t cpu = 0; cpu < static_cast<size_t>(ncpus); ++cpu)
    std::memcpy(buf.data() + stride * cpu, &value, sizeof(value));
  uint32_t zero = 0;
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.lv_percpu), &zero, buf.data(), BPF_ANY))
    throw failure("write lv_percpu", errno);
}

void Datapath::put_percpu(const std::vector<lv_percpu>& each) {
  const size_t stride = percpu_value_size();
  std::vector<uint8_t> buf(stride * each.size());
  for (size_t cpu = 0; cpu < each.size(); ++cpu) std::memcpy(buf.data() + stride * cpu, &each[cpu], sizeof(lv_percpu));
  uint32_t zero = 0;
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.lv_percpu), &zero, buf.data(), BPF_ANY))
    throw failure("write lv_percpu", errno);
}

Counters Datapath::counters() const {
  Counters sum{};
  for (const lv_percpu& pc : percpu()) {
    for (size_t r = 0; r < LV_REASON_MAX; ++r) {
      sum[r].packets += pc.by_reason[r].packets;
      sum[r].bytes += pc.by_reason[r].bytes;
    }
  }
  return sum;
}

Datapath::ClassCounters Datapath::class_counters() const {
  ClassCounters sum{};
  for (const lv_percpu& pc : percpu()) {
    for (size_t c = 0; c < LV_MAX_CLASSES; ++c) {
      sum[c].passed.packets += pc.by_class[c].passed.packets;
      sum[c].passed.bytes += pc.by_class[c].passed.bytes;
      sum[c].dropped.packets += pc.by_class[c].dropped.packets;
      sum[c].dropped.bytes += pc.by_class[c].dropped.bytes;
    }
  }
  return sum;
}

std::optional<lv_state> Datapath::state(const lv_key& key) const {
  lv_state st{};
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.lv_state), &key, &st)) {
    if (errno == ENOENT) return std::nullopt;
    throw failure("read lv_state", errno);
  }
  return st;
}

void Datapath::put_state(const lv_key& key, const lv_state& st) {
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.lv_state), &key, &st, BPF_ANY))
    throw failure("write lv_state", errno);
  // A source created from outside is marked known (or on probation), as the datapath
  // marks its own: under its key as a source.
  if (lv_key_is_source(key.family)) {
    lv_key as_source = key;
    as_source.family = lv_key_family(key.family);
    const uint32_t h = lv_seen_hash(&as_source, control().seen_seed);
    for (uint32_t half = 0; half < 2; ++half) {
      const uint32_t w = (h >> 6) + half * LV_SEEN_WORDS;
      lv_seen_pair pair{};
      bpf_map_lookup_elem(bpf_map__fd(skel_->maps.lv_seen), &w, &pair);
      ((key.family & LV_KEY_PROBATION) ? pair.probation : pair.known) |= uint64_t{1} << (h & 63);
      if (bpf_map_update_elem(bpf_map__fd(skel_->maps.lv_seen), &w, &pair, BPF_ANY))
        throw failure("write lv_seen", errno);
    }
  }
  // State written from outside may move ready_ns back: like the controller, publish a
  // new policy generation so no CPU rejects on a remembered (lv_hot) value.
  lv_control ctl = control();
  ctl.slot[ctl.active & 1].generation++;
  write_control(ctl);
}

namespace {

// Keys of a hash map that satisfy `keep`, walked with get_next_key.
template <typename Pred>
size_t count_keys(int fd, Pred keep) {
  lv_key key{}, next{};
  size_t n = 0;
  for (const lv_key* prev = nullptr; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
    key = next;
    n += keep(key) ? 1 : 0;
  }
  return n;
}

}  // namespace

void Datapath::reset_state() {
  for (bpf_map* m : {skel_->maps.lv_state, skel_->maps.lv_bans}) {
    const int fd = bpf_map__fd(m);
    lv_key key{};
    while (bpf_map_get_next_key(fd, nullptr, &key) == 0)
      if (bpf_map_delete_elem(fd, &key)) throw failure("clear " + std::string(bpf_map__name(m)), errno);
  }
  for (uint32_t id = 0; id <= LV_MAX_CLASSES; ++id) put_shared(id, lv_shared{});
  for (bpf_map* m : {skel_->maps.lv_seen, skel_->maps.lv_good}) {
    const size_t len = size_t{bpf_map__value_size(m)} * bpf_map__max_entries(m);
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
    if (p == MAP_FAILED) throw failure("mmap " + std::string(bpf_map__name(m)), errno);
    std::memset(p, 0, len);
    munmap(p, len);
  }
  // What SYN authentication remembers (retry passes, fresh marks, marks per network).
  {
    std::vector<uint32_t> keys(LV_SYN_CELLS);
    const std::vector<uint64_t> zeros(LV_SYN_CELLS);
    for (uint32_t i = 0; i < LV_SYN_CELLS; ++i) keys[i] = i;
    uint32_t count = LV_SYN_CELLS;
    if (bpf_map_update_batch(bpf_map__fd(skel_->maps.lv_syn), keys.data(), zeros.data(), &count, nullptr))
      throw failure("clear lv_syn", errno);
  }
  put_percpu(lv_percpu{});
  // The sources each CPU rejected last: the new state owes them nothing. One batch (a
  // slot at a time took 50 ms).
  const int ncpus = libbpf_num_possible_cpus();
  const std::vector<lv_hot> none(LV_HOT_SLOTS * static_cast<size_t>(std::max(ncpus, 1)));
  std::vector<uint32_t> slots(LV_HOT_SLOTS);
  for (uint32_t slot = 0; slot < LV_HOT_SLOTS; ++slot) slots[slot] = slot;
  uint32_t count = LV_HOT_SLOTS;
  if (bpf_map_update_batch(bpf_map__fd(skel_->maps.lv_hotset), slots.data(), none.data(), &count, nullptr))
    throw failure("clear lv_hotset", errno);
}

size_t Datapath::state_count() const {
  return count_keys(bpf_map__fd(skel_->maps.lv_state), [](const lv_key&) { return true; });
}

size_t Datapath::network_count() const {
  return count_keys(bpf_map__fd(skel_->maps.lv_state),
                    [](const lv_key& k) { return (k.family & LV_KEY_NETWORK) != 0; });
}

lv_shared Datapath::shared(uint32_t id) const {
  lv_shared v{};
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.lv_shared), &id, &v)) throw failure("read lv_shared", errno);
  return v;
}

void Datapath::put_shared(uint32_t id, const lv_shared& v) {
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.lv_shared), &id, &v, BPF_ANY))
    throw failure("write lv_shared", errno);
}

std::optional<lv_ban> Datapath::ban(const lv_key& key) const {
  lv_ban b{};
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.lv_bans), &key, &b)) {
    if (errno == ENOENT) return std::nullopt;
    throw failure("read lv_bans", errno);
  }
  return b;
}

void Datapath::put_ban(const lv_key& key, const lv_ban& b) {
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.lv_bans), &key, &b, BPF_ANY)) throw failure("write lv_bans", errno);
  edit_policy([](lv_policy&) {});
}

size_t Datapath::ban_count() const {
  return count_keys(bpf_map__fd(skel_->maps.lv_bans), [](const lv_key&) { return true; });
}

std::vector<lv_event> Datapath::events() {
  std::vector<lv_event> out;
  auto take = [](void* ctx, void* data, size_t size) -> int {
    if (size >= sizeof(lv_event)) {
      lv_event e{};
      std::memcpy(&e, data, sizeof(e));
      static_cast<std::vector<lv_event>*>(ctx)->push_back(e);
    }
    return 0;
  };
  ring_buffer* rb = ring_buffer__new(bpf_map__fd(skel_->maps.lv_events), take, &out, nullptr);
  if (!rb) throw failure("open lv_events", errno);
  const int n = ring_buffer__consume(rb);
  ring_buffer__free(rb);
  if (n < 0) throw failure("read lv_events", n);
  return out;
}

Pinned Datapath::pinned(const std::string& iface) const {
  auto dup_of = [&](const char* name) {
    const bpf_map* m = bpf_object__find_map_by_name(skel_->obj, name);
    if (!m) throw std::runtime_error(std::string("no map ") + name + " in the program");
    const int fd = fcntl(bpf_map__fd(m), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) throw failure(std::string("dup ") + name, errno);
    return Fd(fd);
  };
  Pinned p;
  p.iface = iface;
  p.state = dup_of(LV_MAP_STATE);
  p.policy = dup_of(LV_MAP_POLICY);
  p.percpu = dup_of(LV_MAP_PERCPU);
  p.shared = dup_of(LV_MAP_SHARED);
  p.bans = dup_of(LV_MAP_BANS);
  p.seen = dup_of(LV_MAP_SEEN);
  p.good = dup_of(LV_MAP_GOOD);
  p.local = dup_of(LV_MAP_LOCAL);
  p.events = dup_of(LV_MAP_EVENTS);
  for (unsigned slot = 0; slot < 2; ++slot)
    for (unsigned m = 0; m < 4; ++m) p.lists[slot][m] = dup_of(kListPins[slot][m]);
  for (unsigned m = 0; m < kCsMaps; ++m) p.crowdsec[m] = dup_of(kCsPins[m]);
  return p;
}

// ---- PolicyMapping ---------------------------------------------------------------

PolicyMapping::PolicyMapping(const Datapath& dp) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  len_ = (sizeof(lv_control) + page - 1) / page * page;
  void* p = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_SHARED, dp.policy_fd(), 0);
  if (p == MAP_FAILED) throw failure("mmap lv_policy", errno);
  ctl_ = static_cast<lv_control*>(p);
}

PolicyMapping::~PolicyMapping() {
  if (ctl_) munmap(ctl_, len_);
}

void PolicyMapping::flip_to(uint32_t slot) { __atomic_store_n(&ctl_->active, slot, __ATOMIC_RELEASE); }

// ---- Controller ------------------------------------------------------------------

Controller::Controller(Datapath& dp) {
  auto m = PolicyMap::map(dp.policy_fd(), dp.list_fds());
  if (!m) throw std::runtime_error("PolicyMap::map: " + m.error().message());
  map_.emplace(std::move(m.value()));
}

CompiledPolicy Controller::compile_checked(const Policy& p, std::optional<Clocks> clocks) {
  const Clocks clk = clocks ? *clocks : Clocks::read();
  if (Status st = validate(p, clk.now_unix_ns); !st) throw std::runtime_error("validate: " + st.error().message());
  return compile(p, clk);
}

const CompiledPolicy& Controller::install(const Policy& p, std::optional<Clocks> clocks) {
  install(compile_checked(p, clocks));
  return compiled_;
}

const CompiledPolicy& Controller::publish(const Policy& p, std::optional<Clocks> clocks) {
  publish(compile_checked(p, clocks));
  return compiled_;
}

void Controller::install(const CompiledPolicy& c) {
  if (Status st = map_->init(c.slot, Lists{c.list4, c.list6}, 1, LV_MODE_AUTO); !st)
    throw std::runtime_error("PolicyMap::init: " + st.error().message());
  compiled_ = c;
}

void Controller::publish(const CompiledPolicy& c) {
  if (Status st = map_->publish(c.slot, Lists{c.list4, c.list6}); !st)
    throw std::runtime_error("PolicyMap::publish: " + st.error().message());
  compiled_ = c;
}

// ---- policy helpers ---------------------------------------------------------------

Match on(std::vector<Proto> protos, std::vector<PortRange> ports, bool syn) {
  Match m;
  m.protos = std::move(protos);
  m.ports = std::move(ports);
  m.syn = syn;
  return m;
}

ClassSpec class_spec(std::string name, Match m, Rate packets, Rate bytes, unsigned prefix4, unsigned prefix6) {
  ClassSpec c;
  c.name = std::move(name);
  c.match = std::move(m);
  c.packets = packets;
  c.bytes = bytes;
  c.prefix4 = prefix4;
  c.prefix6 = prefix6;
  // The limiter alone, as make_class(): the autopilot's tests turn it on themselves.
  c.admission = Admission::Off;
  c.escalate = false;
  return c;
}

Cidr cidr(std::string_view text) {
  auto c = Cidr::parse(text);
  if (!c) throw std::invalid_argument(std::string(text) + ": " + c.error().message());
  return c.value();
}

ListEntry list_entry(std::string_view cidr_text, lv_list_kind kind, std::string override_name,
                     uint64_t expires_unix_ns) {
  ListEntry e;
  e.cidr = cidr(cidr_text);
  e.kind = kind;
  e.override_name = std::move(override_name);
  e.expires_unix_ns = expires_unix_ns;
  return e;
}

lv_key source_key(std::string_view addr, unsigned prefix, uint16_t class_id) {
  const std::string a(addr);
  lv_key k{};
  uint8_t bytes[16] = {};
  if (a.find(':') == std::string::npos) {
    if (inet_pton(AF_INET, a.c_str(), bytes + 12) != 1) throw std::invalid_argument(a);
    bytes[10] = bytes[11] = 0xff;  // ::ffff:a.b.c.d
    prefix += 96;
    k.family = LV_AF_INET;
  } else {
    if (inet_pton(AF_INET6, a.c_str(), bytes) != 1) throw std::invalid_argument(a);
    k.family = LV_AF_INET6;
  }
  for (unsigned bit = prefix; bit < 128; ++bit) bytes[bit / 8] &= static_cast<uint8_t>(~(0x80u >> (bit % 8)));
  std::memcpy(k.addr, bytes, sizeof k.addr);
  k.class_id = class_id;
  return k;
}

// ---- helpers ---------------------------------------------------------------------

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * LV_NSEC_PER_SEC + static_cast<uint64_t>(ts.tv_nsec);
}

std::optional<uint64_t> kernel_jiffies() {
  std::ifstream in("/proc/timer_list");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("jiffies: ", 0) == 0) return std::stoull(line.substr(9));
  }
  return std::nullopt;
}

lv_class make_class(uint64_t rate, uint64_t burst, unsigned prefix4, unsigned prefix6,
                    std::optional<bool> fast_reject) {
  lv_class c = compile_class(Limits{rate, burst, prefix4, prefix6}, clock_tick_ns());
  // The limiter alone: the autopilot's tests turn it on themselves (autopilot_test.cpp).
  c.flags &= ~uint32_t{LV_CLASS_AUTO_ADMIT | LV_CLASS_ESCALATE};
  if (fast_reject) {
    if (*fast_reject)
      c.flags |= LV_CLASS_FAST_REJECT;
    else
      c.flags &= ~uint32_t{LV_CLASS_FAST_REJECT};
  }
  return c;
}

lv_key key4(std::string_view addr, const lv_class& cls) {
  in_addr a{};
  if (inet_pton(AF_INET, std::string(addr).c_str(), &a) != 1) throw std::invalid_argument(std::string(addr));
  lv_key k{};
  k.addr[2] = htonl(0xffff);
  k.addr[3] = a.s_addr & cls.mask4;
  k.family = LV_AF_INET;
  return k;
}

lv_key key6(std::string_view addr, const lv_class& cls) {
  in6_addr a{};
  if (inet_pton(AF_INET6, std::string(addr).c_str(), &a) != 1) throw std::invalid_argument(std::string(addr));
  lv_key k{};
  std::memcpy(k.addr, &a, sizeof(k.addr));
  for (int i = 0; i < 4; ++i) k.addr[i] &= cls.mask6[i];
  k.family = LV_AF_INET6;
  return k;
}

lv_key watch_key4(std::string_view addr, const lv_class& cls) {
  lv_key k = key4(addr, cls);
  k.addr[3] &= cls.autop.watch_mask4;
  k.family |= LV_KEY_WATCH;
  return k;
}

void escalate_network(Datapath& dp, const lv_class& cls, std::string_view addr) {
  const uint64_t now = monotonic_ns();
  lv_watch w{};
  w.escalated_ns = now;
  w.last_over_ns = now;
  w.runup_ns = now;
  dp.put_state(watch_key4(addr, cls), std::bit_cast<lv_state>(w));
  lv_shared sh = dp.shared(0);
  sh.escalated_until_ns = now + cls.autop.release_ns;
  dp.put_shared(0, sh);
}

void put_source(Datapath& dp, const lv_key& key, uint64_t ago_ns) {
  lv_state st{};
  st.born_ns = monotonic_ns() - ago_ns;
  dp.put_state(key, st);
}

OneCpu::OneCpu() {
  sched_getaffinity(0, sizeof old_, &old_);
  cpu_ = sched_getcpu();
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu_, &one);
  ok_ = sched_setaffinity(0, sizeof one, &one) == 0;
}

OneCpu::~OneCpu() { sched_setaffinity(0, sizeof old_, &old_); }

TwoCpuRun run_on_two_cpus(const Datapath& dp, std::span<const uint8_t> frame, int repeat) {
  TwoCpuRun out;
  out.repeat = repeat;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  auto worker = [&](int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    out.pin_err[cpu] = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    ready.fetch_add(1);
    while (!go.load(std::memory_order_acquire)) {
    }
    out.run[cpu] = dp.run(frame, repeat);
  };
  std::thread t0(worker, 0), t1(worker, 1);
  while (ready.load() < 2) std::this_thread::yield();
  out.begin = monotonic_ns();
  go.store(true, std::memory_order_release);
  t0.join();
  t1.join();
  out.end = monotonic_ns();
  return out;
}

uint64_t TwoCpuRun::busy_ns() const {
  return std::max(uint64_t{run[0].duration}, uint64_t{run[1].duration}) * static_cast<uint64_t>(repeat);
}

std::string_view reason_name(uint32_t reason) {
  for (const ReasonInfo& r : kReasons)
    if (r.id == reason) return r.name;
  return "reason?";
}

std::string describe(const Counters& c) {
  std::ostringstream out;
  for (uint32_t r = 0; r < LV_REASON_MAX; ++r)
    if (c[r].packets || c[r].bytes)
      out << reason_name(r) << "(" << r << ")=" << c[r].packets << "p/" << c[r].bytes << "B ";
  return out.str();
}

void ProgTest::SetUp() {
  if (geteuid() != 0) GTEST_SKIP() << "program tests need root (BPF_PROG_TEST_RUN)";
  dp_.emplace();
}

}  // namespace levee::progtest
