#include "bpf/policy_map.hpp"

#include <fmt/format.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <utility>

namespace levee {

Result<PolicyMap> PolicyMap::map(int fd) {
  long page = sysconf(_SC_PAGESIZE);
  size_t len = (sizeof(lv_control) + page - 1) / page * page;
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return sys_error("map the lv_policy map");
  return PolicyMap(static_cast<lv_control*>(p), len);
}

PolicyMap::PolicyMap(PolicyMap&& o) noexcept
    : ctl_(std::exchange(o.ctl_, nullptr)), len_(o.len_) {}

PolicyMap::~PolicyMap() {
  if (ctl_) munmap(ctl_, len_);
}

const lv_policy& PolicyMap::active() const {
  uint32_t a = std::atomic_ref(ctl_->active).load(std::memory_order_acquire);
  return ctl_->slot[a & 1];
}

void PolicyMap::init(const lv_policy& p, unsigned ifindex, lv_attach_mode mode) {
  ctl_->abi_version = LV_ABI_VERSION;
  ctl_->ifindex = ifindex;
  ctl_->attach_mode = mode;
  ctl_->slot[0] = p;
  ctl_->slot[1] = p;
  std::atomic_ref(ctl_->active).store(0, std::memory_order_release);
}

Status PolicyMap::publish(lv_policy next) {
  // The inactive slot may have been active until the previous publish, possibly a
  // moment ago from another process: let packets still reading it finish first.
  LV_TRY(wait_for_datapath_readers());
  uint32_t cur = std::atomic_ref(ctl_->active).load(std::memory_order_acquire) & 1;
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
