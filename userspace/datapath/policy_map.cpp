#include "datapath/policy_map.hpp"

#include <bpf/bpf.h>
#include <fmt/format.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "datapath/maps.hpp"

namespace levee {

ListOps& list_ops() {
  static ListOps ops;
  return ops;
}

namespace {

template <typename K>
using Entries = std::vector<std::pair<K, lv_list_value>>;

// Batch calls are given this many entries at most, as the other map walks do.
constexpr uint32_t kBatch = 8192;

Status write_entry(int fd, const void* key, const lv_list_value& v) {
  ++list_ops().updates;
  if (bpf_map_update_elem(fd, key, &v, BPF_ANY) != 0)
    return sys_error("write a list entry", errno, errno == ENOSPC || errno == E2BIG ? "the list is full" : "");
  return {};
}

// Deletes one entry; false when it was not there.
Result<bool> delete_entry(int fd, const void* key) {
  ++list_ops().deletes;
  if (bpf_map_delete_elem(fd, key) == 0) return true;
  if (errno != ENOENT) return sys_error("delete a list entry");
  return false;
}

bool is_host(const lv_lpm4& k) { return k.prefixlen == 32; }
bool is_host(const lv_lpm6& k) { return k.prefixlen == 128; }
uint32_t host_key(const lv_lpm4& k) { return k.addr; }
lv_in6 host_key(const lv_lpm6& k) {
  lv_in6 h{};
  std::memcpy(h.addr, k.addr, sizeof h.addr);
  return h;
}
template <typename Key, typename HostKey>
Key lpm_key(const HostKey& h) {
  Key key{};
  key.prefixlen = sizeof(HostKey) * 8;
  std::memcpy(&key.addr, &h, sizeof h);
  return key;
}

// Every entry of a hash of hosts, a batch at a time.
template <typename HostKey>
Result<Entries<HostKey>> read_hash(int fd) {
  Entries<HostKey> out;
  ++list_ops().walks;
  LV_TRY((walk_batches<HostKey, lv_list_value>(
      fd, kBatch, "a list hash", [&](std::span<const HostKey> keys, std::span<const lv_list_value> values) {
        ++list_ops().scans;
        for (size_t i = 0; i < keys.size(); ++i) out.emplace_back(keys[i], values[i]);
        return Status{};
      })));
  return out;
}

template <typename HostKey, typename Key>
Status read_hosts(int fd, std::vector<std::pair<Key, lv_list_value>>& out) {
  LV_TRY_ASSIGN(auto hosts, read_hash<HostKey>(fd));
  out.reserve(out.size() + hosts.size());
  for (const auto& [h, v] : hosts) out.emplace_back(lpm_key<Key>(h), v);
  return {};
}

// A strict order of keys by their bytes read as words. The difference needs an order
// both sides share, not the bytes' lexicographic one; a call of memcmp per comparison
// was a tenth of a 1M-entry reload.
template <typename K>
bool key_less(const K& a, const K& b) {
  std::array<uint64_t, (sizeof(K) + 7) / 8> wa{}, wb{};
  std::memcpy(wa.data(), &a, sizeof a);
  std::memcpy(wb.data(), &b, sizeof b);
  return wa < wb;
}

// What a map must change to hold `want` instead of `have`: keys to delete, entries to
// write (new, or with another value). Sorted by key_less; a key given twice in `want`
// keeps its last value.
template <typename K>
struct MapDiff {
  std::vector<K> del;
  std::vector<K> put_keys;
  std::vector<lv_list_value> put_values;
  size_t after = 0;  // entries the map holds once changed
};

template <typename K>
MapDiff<K> difference(Entries<K> have, Entries<K> want) {
  auto less = [](const auto& a, const auto& b) { return key_less(a.first, b.first); };
  std::sort(have.begin(), have.end(), less);
  std::stable_sort(want.begin(), want.end(), less);
  MapDiff<K> d;
  size_t h = 0;
  for (size_t w = 0; w < want.size(); ++w) {
    if (w + 1 < want.size() && !less(want[w], want[w + 1])) continue;  // a later value for the same key
    ++d.after;
    while (h < have.size() && less(have[h], want[w])) d.del.push_back(have[h++].first);
    if (h < have.size() && !less(want[w], have[h])) {
      const bool same = std::memcmp(&have[h].second, &want[w].second, sizeof(lv_list_value)) == 0;
      ++h;
      if (same) continue;
    }
    d.put_keys.push_back(want[w].first);
    d.put_values.push_back(want[w].second);
  }
  for (; h < have.size(); ++h) d.del.push_back(have[h].first);
  return d;
}

// A map takes the difference in batches: a hash, and a trie too (the kernel's generic
// batch, an entry at a time inside one system call). Deletes first, so that a full map
// has room for what replaces them.
template <typename K>
Status apply_batches(int fd, const MapDiff<K>& d) {
  for (size_t at = 0; at < d.del.size();) {
    auto count = static_cast<uint32_t>(std::min<size_t>(d.del.size() - at, kBatch));
    const int err = bpf_map_delete_batch(fd, d.del.data() + at, &count, nullptr);
    const int saved = errno;
    list_ops().deletes += count;
    at += count;
    if (!err) continue;
    if (saved != ENOENT) return sys_error("delete list entries (batch delete)", saved);
    ++at;  // gone already: the batch stopped at it
  }
  for (size_t at = 0; at < d.put_keys.size();) {
    auto count = static_cast<uint32_t>(std::min<size_t>(d.put_keys.size() - at, kBatch));
    const int err = bpf_map_update_batch(fd, d.put_keys.data() + at, d.put_values.data() + at, &count, nullptr);
    const int saved = errno;
    list_ops().updates += count;
    at += count;
    if (err)
      return sys_error("write list entries (batch update)", saved,
                       saved == ENOSPC || saved == E2BIG ? "the list is full" : "");
  }
  return {};
}

// One family's entries split as a slot holds them: networks for the trie, hosts (by
// address) for the hash.
template <typename Key, typename HostKey>
std::pair<Entries<Key>, Entries<HostKey>> split(const Entries<Key>& entries) {
  std::pair<Entries<Key>, Entries<HostKey>> out;
  out.second.reserve(entries.size());
  for (const auto& [k, v] : entries) {
    if (is_host(k))
      out.second.emplace_back(host_key(k), v);
    else
      out.first.emplace_back(k, v);
  }
  return out;
}

// What one family's two maps must change.
template <typename Key, typename HostKey>
struct FamilyDiff {
  MapDiff<Key> nets;
  MapDiff<HostKey> hosts;
};

template <typename Key, typename HostKey>
FamilyDiff<Key, HostKey> family_difference(const Entries<Key>& have, const Entries<Key>& want) {
  auto [have_nets, have_hosts] = split<Key, HostKey>(have);
  auto [want_nets, want_hosts] = split<Key, HostKey>(want);
  return {difference(std::move(have_nets), std::move(want_nets)),
          difference(std::move(have_hosts), std::move(want_hosts))};
}

// The same, from what a slot's maps hold: each map walked once.
template <typename Key, typename HostKey>
Result<FamilyDiff<Key, HostKey>> read_family_difference(int net_fd, int host_fd, const Entries<Key>& want) {
  auto [want_nets, want_hosts] = split<Key, HostKey>(want);
  LV_TRY_ASSIGN(auto have_nets, read_trie<Key>(net_fd));
  LV_TRY_ASSIGN(auto have_hosts, read_hash<HostKey>(host_fd));
  return FamilyDiff<Key, HostKey>{difference(std::move(have_nets), std::move(want_nets)),
                                  difference(std::move(have_hosts), std::move(want_hosts))};
}

template <typename Key, typename HostKey>
Status apply_family(int net_fd, int host_fd, const FamilyDiff<Key, HostKey>& d) {
  LV_TRY(apply_batches(net_fd, d.nets));
  return apply_batches(host_fd, d.hosts);
}

// One family's part of a delta, on one slot: deletes, then writes. With counts, keeps
// them (an entry written where none was adds one).
template <typename Key, typename HostKey>
Status apply_family_delta(int net_fd, int host_fd, const Entries<Key>& put, const std::vector<Key>& del, uint32_t* nets,
                          uint32_t* hosts) {
  for (const Key& k : del) {
    const bool h = is_host(k);
    const HostKey hk = host_key(k);
    LV_TRY_ASSIGN(bool gone, delete_entry(h ? host_fd : net_fd, h ? static_cast<const void*>(&hk) : &k));
    if (gone && nets) --*(h ? hosts : nets);
  }
  for (const auto& [k, v] : put) {
    const bool h = is_host(k);
    const HostKey hk = host_key(k);
    const int fd = h ? host_fd : net_fd;
    const void* key = h ? static_cast<const void*>(&hk) : &k;
    if (nets) {
      ++list_ops().updates;
      if (bpf_map_update_elem(fd, key, &v, BPF_NOEXIST) == 0) {
        ++*(h ? hosts : nets);
        continue;
      }
      if (errno != EEXIST)
        return sys_error("write a list entry", errno, errno == ENOSPC || errno == E2BIG ? "the list is full" : "");
    }
    LV_TRY(write_entry(fd, key, v));  // there already, or the catch-up of a slot that lacks it
  }
  return {};
}

template <typename Key>
Result<std::optional<lv_list_value>> lookup_host(int fd, const Key& k) {
  const auto hk = host_key(k);
  lv_list_value v{};
  ++list_ops().lookups;
  if (bpf_map_lookup_elem(fd, &hk, &v) == 0) return std::optional<lv_list_value>(v);
  if (errno != ENOENT) return sys_error("look up a list entry");
  return std::optional<lv_list_value>();
}

}  // namespace

template <typename Key>
Result<std::vector<std::pair<Key, lv_list_value>>> read_trie(int fd) {
  std::vector<std::pair<Key, lv_list_value>> out;
  std::vector<Key> keys(kBatch);
  std::vector<lv_list_value> values(kBatch);
  // A trie's batch is the kernel's generic one: its token is the last key read, and
  // each batch goes on from it, so a walk is one pass over the map.
  Key token_in{}, token_out{};
  bool first = true;
  ++list_ops().walks;
  for (;;) {
    auto count = static_cast<uint32_t>(kBatch);
    ++list_ops().scans;
    const int err =
        bpf_map_lookup_batch(fd, first ? nullptr : &token_in, &token_out, keys.data(), values.data(), &count, nullptr);
    const int saved = errno;
    if (err && saved != ENOENT) return sys_error("read a list trie (batch lookup)", saved);
    for (uint32_t i = 0; i < count; ++i) out.emplace_back(keys[i], values[i]);
    if (err) return out;  // ENOENT: no key after the last
    token_in = token_out;
    first = false;
  }
}
template Result<std::vector<std::pair<lv_lpm4, lv_list_value>>> read_trie(int);
template Result<std::vector<std::pair<lv_lpm6, lv_list_value>>> read_trie(int);

Result<PolicyMap> PolicyMap::map(int fd, ListFds lists) {
  LV_TRY_ASSIGN(auto m, MappedArray::map(fd, sizeof(lv_control), LV_MAP_POLICY));
  return PolicyMap(std::move(m), lists);
}

const lv_policy& PolicyMap::active() const {
  uint32_t a = std::atomic_ref(ctl_->active).load(std::memory_order_acquire);
  return ctl_->slot[a & 1];
}

Result<Lists> PolicyMap::active_lists() const {
  const unsigned a = std::atomic_ref(ctl_->active).load(std::memory_order_acquire) & 1;
  LV_TRY_ASSIGN(auto v4, read_trie<lv_lpm4>(lists_[a][kNet4]));
  LV_TRY_ASSIGN(auto v6, read_trie<lv_lpm6>(lists_[a][kNet6]));
  Lists out{std::move(v4), std::move(v6)};
  LV_TRY((read_hosts<uint32_t, lv_lpm4>(lists_[a][kHost4], out.v4)));
  LV_TRY((read_hosts<lv_in6, lv_lpm6>(lists_[a][kHost6], out.v6)));
  return out;
}

// What a slot's four maps must change to hold other lists.
struct PolicyMap::ListsDiff {
  FamilyDiff<lv_lpm4, uint32_t> v4;
  FamilyDiff<lv_lpm6, lv_in6> v6;
  void counts(lv_policy& p) const {
    p.nr_list4 = static_cast<uint32_t>(v4.nets.after), p.nr_host4 = static_cast<uint32_t>(v4.hosts.after);
    p.nr_list6 = static_cast<uint32_t>(v6.nets.after), p.nr_host6 = static_cast<uint32_t>(v6.hosts.after);
  }
};

Result<PolicyMap::ListsDiff> PolicyMap::read_difference(unsigned slot, const Lists& lists) const {
  const auto& fds = lists_[slot & 1];
  LV_TRY_ASSIGN(auto v4, (read_family_difference<lv_lpm4, uint32_t>(fds[kNet4], fds[kHost4], lists.v4)));
  LV_TRY_ASSIGN(auto v6, (read_family_difference<lv_lpm6, lv_in6>(fds[kNet6], fds[kHost6], lists.v6)));
  return ListsDiff{std::move(v4), std::move(v6)};
}

Status PolicyMap::apply_difference(unsigned slot, const ListsDiff& d) {
  const auto& fds = lists_[slot & 1];
  LV_TRY((apply_family<lv_lpm4, uint32_t>(fds[kNet4], fds[kHost4], d.v4)));
  return apply_family<lv_lpm6, lv_in6>(fds[kNet6], fds[kHost6], d.v6);
}

Status PolicyMap::fill_slot_lists(unsigned slot, const Lists& lists, lv_policy& p) {
  LV_TRY_ASSIGN(const ListsDiff d, read_difference(slot, lists));
  LV_TRY(apply_difference(slot, d));
  d.counts(p);
  return {};
}

Status PolicyMap::init(const lv_policy& p, const Lists& lists, unsigned ifindex, lv_attach_mode mode) {
  ctl_->abi_version = LV_ABI_VERSION;
  ctl_->ifindex = ifindex;
  ctl_->attach_mode = mode;
  for (unsigned s = 0; s < 2; ++s) {
    lv_policy slot = p;
    LV_TRY(fill_slot_lists(s, lists, slot));
    ctl_->slot[s] = slot;
  }
  std::atomic_ref(ctl_->active).store(0, std::memory_order_release);
  return {};
}

void PolicyMap::seed_filter(uint32_t seed, const uint64_t (&cookie_keys)[2][2]) {
  for (unsigned slot = 0; slot < 2; ++slot) set_cookie_key(slot, cookie_keys[slot]);
  ctl_->seen_seed = seed;
  ctl_->seen_active = 0;
  ctl_->good_active = 0;
}

void PolicyMap::set_handoff(bool on, uint16_t mss4, uint16_t mss6) {
  ctl_->mss4 = mss4;
  ctl_->mss6 = mss6;
  ctl_->handoff = on ? 1 : 0;
}

void PolicyMap::set_local_known() { std::atomic_ref(ctl_->local_known).store(1, std::memory_order_release); }

void PolicyMap::set_proxying(bool on) { std::atomic_ref(ctl_->handoff).store(on ? 1 : 0, std::memory_order_release); }

void PolicyMap::set_tcp_off(uint32_t bits) { std::atomic_ref(ctl_->tcp_off).store(bits, std::memory_order_release); }

void PolicyMap::set_tc_place(uint32_t handle, uint16_t priority, uint8_t flags) {
  // Read by controllers only (detach, status, levee run), each under the interface's lock
  // or only to display: plain stores.
  ctl_->tc_handle = handle;
  ctl_->tc_priority = priority;
  ctl_->tc_flags = flags;
}

void PolicyMap::bump_good_epoch() { std::atomic_ref(ctl_->good_epoch).fetch_add(1, std::memory_order_acq_rel); }

void PolicyMap::set_cookie_key(unsigned slot, const uint64_t (&key)[2]) {
  // Two plain stores: no packet reads this slot now (lv_cookie_spare_slot), and the
  // release orders them before whatever the caller publishes next.
  ctl_->cookie_key[slot & 1][0] = key[0];
  ctl_->cookie_key[slot & 1][1] = key[1];
  std::atomic_thread_fence(std::memory_order_release);
}

namespace {

uint32_t flip(__u32& half) {
  std::atomic_ref active(half);
  const uint32_t next = (active.load(std::memory_order_acquire) & 1) ^ 1;
  active.store(next, std::memory_order_release);
  return next;
}

}  // namespace

uint32_t PolicyMap::flip_seen() { return flip(ctl_->seen_active); }
uint32_t PolicyMap::flip_good() { return flip(ctl_->good_active); }

void PolicyMap::set_cs_present(uint32_t bits) {
  std::atomic_ref(ctl_->cs_present).store(bits, std::memory_order_release);
}

Status PolicyMap::publish(lv_policy next, const Lists& lists, const Lists* active_now) {
  if (!lists_synced()) return publish_walking(next, lists);
  // Both slots hold the active lists: one difference, from them, brings either slot to
  // the new lists, and no map of the inactive slot need be walked.
  std::optional<Lists> read;
  if (!active_now) {
    LV_TRY_ASSIGN(read, active_lists());
    active_now = &*read;
  }
  const ListsDiff d{family_difference<lv_lpm4, uint32_t>(active_now->v4, lists.v4),
                    family_difference<lv_lpm6, lv_in6>(active_now->v6, lists.v6)};
  read.reset();
  // The inactive slot may have been active until the previous publish, possibly a
  // moment ago from another process: let packets still reading it finish first.
  LV_TRY(wait_for_datapath_readers());
  const uint32_t cur = std::atomic_ref(ctl_->active).load(std::memory_order_acquire) & 1;
  mark_unsynced(cur ^ 1);
  LV_TRY(apply_difference(cur ^ 1, d));
  d.counts(next);
  flip_to(cur ^ 1, next);
  catch_up(cur, [&] { return apply_difference(cur, d); });
  return {};
}

Status PolicyMap::publish_walking(lv_policy next, const Lists& lists) {
  LV_TRY(wait_for_datapath_readers());
  const uint32_t cur = std::atomic_ref(ctl_->active).load(std::memory_order_acquire) & 1;
  mark_unsynced(cur ^ 1);
  LV_TRY(fill_slot_lists(cur ^ 1, lists, next));
  flip_to(cur ^ 1, next);
  catch_up(cur, [&] {
    lv_policy counts{};
    return fill_slot_lists(cur, lists, counts);
  });
  return {};
}

void PolicyMap::flip_to(unsigned slot, lv_policy next) {
  next.generation = ctl_->slot[(slot & 1) ^ 1].generation + 1;
  ctl_->slot[slot & 1] = next;
  std::atomic_ref(ctl_->active).store(slot & 1, std::memory_order_release);
}

Result<bool> PolicyMap::publish_delta(lv_policy next, const ListDelta& delta) {
  if (!lists_synced()) return false;
  // No grace period first: the slots hold the same lists only once a catch-up has
  // waited for the packets that read the inactive slot before its flip.
  const uint32_t cur = std::atomic_ref(ctl_->active).load(std::memory_order_acquire) & 1;
  const lv_policy& now = ctl_->slot[cur];
  next.nr_list4 = now.nr_list4, next.nr_host4 = now.nr_host4;
  next.nr_list6 = now.nr_list6, next.nr_host6 = now.nr_host6;
  mark_unsynced(cur ^ 1);
  LV_TRY(apply_delta(cur ^ 1, delta, &next));
  next.generation = now.generation + 1;
  ctl_->slot[cur ^ 1] = next;
  std::atomic_ref(ctl_->active).store(cur ^ 1, std::memory_order_release);
  catch_up(cur, [&] { return apply_delta(cur, delta, nullptr); });
  return true;
}

bool PolicyMap::lists_synced() const { return ctl_->slot[0].generation == ctl_->slot[1].generation; }

void PolicyMap::mark_unsynced(unsigned inactive) {
  ctl_->slot[inactive & 1].generation = ctl_->slot[(inactive & 1) ^ 1].generation - 1;
}

template <typename Write>
void PolicyMap::catch_up(unsigned old, const Write& write) {
  // The change is in force once flipped. Should this fail, the slots stay marked apart
  // and the next publish compares the maps instead of trusting them equal: the error
  // would only mislead the caller.
  if (!wait_for_datapath_readers()) return;
  if (!write()) return;
  ctl_->slot[old & 1] = ctl_->slot[(old & 1) ^ 1];
}

Status PolicyMap::apply_delta(unsigned slot, const ListDelta& d, lv_policy* p) {
  const auto& fds = lists_[slot & 1];
  LV_TRY((apply_family_delta<lv_lpm4, uint32_t>(fds[kNet4], fds[kHost4], d.put.v4, d.del4, p ? &p->nr_list4 : nullptr,
                                                p ? &p->nr_host4 : nullptr)));
  LV_TRY((apply_family_delta<lv_lpm6, lv_in6>(fds[kNet6], fds[kHost6], d.put.v6, d.del6, p ? &p->nr_list6 : nullptr,
                                              p ? &p->nr_host6 : nullptr)));
  return {};
}

Result<std::optional<lv_list_value>> PolicyMap::active_host(const lv_lpm4& k) const {
  return lookup_host(lists_[std::atomic_ref(ctl_->active).load(std::memory_order_acquire) & 1][kHost4], k);
}

Result<std::optional<lv_list_value>> PolicyMap::active_host(const lv_lpm6& k) const {
  return lookup_host(lists_[std::atomic_ref(ctl_->active).load(std::memory_order_acquire) & 1][kHost6], k);
}

Result<Lists> PolicyMap::active_networks() const {
  const unsigned a = std::atomic_ref(ctl_->active).load(std::memory_order_acquire) & 1;
  LV_TRY_ASSIGN(auto v4, read_trie<lv_lpm4>(lists_[a][kNet4]));
  LV_TRY_ASSIGN(auto v6, read_trie<lv_lpm6>(lists_[a][kNet6]));
  return Lists{std::move(v4), std::move(v6)};
}

Status wait_for_datapath_readers() {
  // XDP runs inside RCU read-side sections (NAPI, BH disabled); MEMBARRIER_CMD_GLOBAL
  // is implemented with synchronize_rcu(), so when it returns every packet that could
  // have seen the old slot has left the program.
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0) return {};
  if (errno != EINVAL && errno != ENOSYS) return sys_error("wait for the datapath (membarrier)");
  // nohz_full kernels refuse it. A packet spends microseconds in the program; a pause
  // three orders of magnitude longer is the fallback.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return {};
}

}  // namespace levee
