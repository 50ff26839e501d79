#include "cli/preflight.hpp"

#include "bpf/kernel.hpp"

namespace levee::cli {

Status readers_preflight(const char* action) {
  LV_TRY(check_privileges(action));
  LV_TRY(check_bpffs());
  return {};
}

}  // namespace levee::cli
