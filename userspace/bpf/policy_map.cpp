#include "bpf/policy_map.hpp"

#include <bpf/bpf.h>
#include <fmt/format.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <tuple>
#include <utility>

namespace levee {
namespace {

// Empty a list map. Neither an LPM trie nor a hash without preallocation needs more
// than deleting the first key until there is none.
template <typename Key>
Status clear_map(int fd) {
  Key k{};
  while (bpf_map_get_next_key(fd, nullptr, &k) == 0)
    if (bpf_map_delete_elem(fd, &k) != 0 && errno != ENOENT) return sys_error("clear a list map");
  return {};
}

Status write_entry(int fd, const void* key, const lv_list_value& v) {
  if (bpf_map_update_elem(fd, key, &v, BPF_ANY) != 0)
    return sys_error("write a list entry", errno, errno == ENOSPC || errno == E2BIG ? "the list is full" : "");
  return {};
}

bool is_host(const lv_lpm4& k) { return k.prefixlen == 32; }
bool is_host(const lv_lpm6& k) { return k.prefixlen == 128; }
uint32_t host_key(const lv_lpm4& k) { return k.addr; }
lv_in6 host_key(const lv_lpm6& k) {
  lv_in6 h{};
  std::memcpy(h.addr, k.addr, sizeof h.addr);
  return h;
}

// One family: hosts into the hash, networks into the trie. Returns the counts.
template <typename Key, typename HostKey>
Result<std::pair<uint32_t, uint32_t>> fill_family(int net_fd, int host_fd,
                                                  const std::vector<std::pair<Key, lv_list_value>>& entries) {
  LV_TRY(clear_map<Key>(net_fd));
  LV_TRY(clear_map<HostKey>(host_fd));
  uint32_t nets = 0, hosts = 0;
  for (const auto& [k, v] : entries) {
    if (is_host(k)) {
      const HostKey h = host_key(k);
      LV_TRY(write_entry(host_fd, &h, v));
      ++hosts;
    } else {
      LV_TRY(write_entry(net_fd, &k, v));
      ++nets;
    }
  }
  return std::make_pair(nets, hosts);
}

template <typename HostKey, typename Key>
Status read_hosts(int fd, std::vector<std::pair<Key, lv_list_value>>& out) {
  HostKey k{}, next{};
  const HostKey* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    lv_list_value v{};
    if (bpf_map_lookup_elem(fd, &next, &v) == 0) {
      Key key{};
      key.prefixlen = sizeof(HostKey) * 8;
      std::memcpy(&key.addr, &next, sizeof next);
      out.emplace_back(key, v);
    }
    k = next;
    prev = &k;
  }
  if (errno != ENOENT) return sys_error("read a list hash");
  return {};
}

}  // namespace

template <typename Key>
Result<std::vector<std::pair<Key, lv_list_value>>> read_trie(int fd) {
  std::vector<std::pair<Key, lv_list_value>> out;
  Key k{}, next{};
  const Key* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    lv_list_value v{};
    if (bpf_map_lookup_elem(fd, &next, &v) == 0) out.emplace_back(next, v);
    k = next;
    prev = &k;
  }
  if (errno != ENOENT) return sys_error("read a list trie");
  return out;
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

Status PolicyMap::fill_slot_lists(unsigned slot, const Lists& lists, lv_policy& p) {
  LV_TRY_ASSIGN(auto n4, fill_family<lv_lpm4, uint32_t>(lists_[slot][kNet4], lists_[slot][kHost4], lists.v4));
  LV_TRY_ASSIGN(auto n6, fill_family<lv_lpm6, lv_in6>(lists_[slot][kNet6], lists_[slot][kHost6], lists.v6));
  std::tie(p.nr_list4, p.nr_host4) = n4;
  std::tie(p.nr_list6, p.nr_host6) = n6;
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

void PolicyMap::seed_filter(uint32_t seed) {
  ctl_->seen_seed = seed;
  ctl_->seen_active = 0;
}

uint32_t PolicyMap::flip_seen() {
  std::atomic_ref active(ctl_->seen_active);
  const uint32_t next = (active.load(std::memory_order_acquire) & 1) ^ 1;
  active.store(next, std::memory_order_release);
  return next;
}

Status PolicyMap::publish(lv_policy next, const Lists& lists) {
  // The inactive slot may have been active until the previous publish, possibly a
  // moment ago from another process: let packets still reading it finish first.
  LV_TRY(wait_for_datapath_readers());
  const uint32_t cur = std::atomic_ref(ctl_->active).load(std::memory_order_acquire) & 1;
  LV_TRY(fill_slot_lists(cur ^ 1, lists, next));
  next.generation = ctl_->slot[cur].generation + 1;
  ctl_->slot[cur ^ 1] = next;
  std::atomic_ref(ctl_->active).store(cur ^ 1, std::memory_order_release);
  return {};
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
