#include "datapath/mapped.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <utility>

namespace levee {

Result<MappedArray> MappedArray::map(int fd, size_t bytes, const char* name) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t len = (bytes + page - 1) / page * page;
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return sys_error(fmt::format("map the {} map", name));
  return MappedArray(p, len);
}

MappedArray::MappedArray(MappedArray&& o) noexcept : p_(std::exchange(o.p_, nullptr)), len_(o.len_) {}

MappedArray::~MappedArray() {
  if (p_) munmap(p_, len_);
}

}  // namespace levee
