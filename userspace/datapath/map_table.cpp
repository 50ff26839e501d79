#include "datapath/map_table.hpp"

#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <memory>

#include "levee_bpf.skel.h"

namespace levee {

Result<std::vector<MapFacts>> program_maps() {
  std::unique_ptr<levee_bpf, decltype(&levee_bpf__destroy)> skel(levee_bpf__open(), levee_bpf__destroy);
  if (!skel) return sys_error("open the embedded XDP program");
  std::vector<MapFacts> out;
  const bpf_map* m = nullptr;
  bpf_object__for_each_map(m, skel->obj) {
    const std::string name = bpf_map__name(m);
    if (name.find('.') != std::string::npos) continue;  // .rodata, .bss, .data: the program's globals
    const char* type = libbpf_bpf_map_type_str(bpf_map__type(m));
    const uint32_t flags = bpf_map__map_flags(m);
    out.push_back({name, type ? type : "unknown", bpf_map__max_entries(m), bpf_map__key_size(m), bpf_map__value_size(m),
                   (flags & BPF_F_MMAPABLE) != 0, (flags & BPF_F_NO_PREALLOC) != 0});
  }
  return out;
}

}  // namespace levee
