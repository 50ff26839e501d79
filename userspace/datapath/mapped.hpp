// mapped.hpp - an mmapable BPF array mapped into the controller (lv_policy, lv_shared,
// lv_seen): read-write and shared with the datapath, unmapped when its owner goes.
#pragma once

#include <cstddef>

#include "core/result.hpp"

namespace levee {

class MappedArray {
 public:
  // The first `bytes` of the map behind `fd`, rounded up to whole pages; `name` is the
  // map's, for the error.
  static Result<MappedArray> map(int fd, size_t bytes, const char* name);
  MappedArray(MappedArray&& o) noexcept;
  MappedArray& operator=(MappedArray&&) = delete;
  MappedArray(const MappedArray&) = delete;
  MappedArray& operator=(const MappedArray&) = delete;
  ~MappedArray();

  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }

 private:
  MappedArray(void* p, size_t len) : p_(p), len_(len) {}
  void* p_;
  size_t len_;
};

}  // namespace levee
