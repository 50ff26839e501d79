// levee-benchrx - attaches one of the end-to-end baseline receivers (benchrx.bpf.c) to
// an interface in a network namespace, pins it, reads its frame counter, detaches it.
// scripts/bench.sh measures every receiver as its own counter's delta over a flood.
//
//   levee-benchrx attach DEV --prog drop|floor|pass [--netns NAME]
//   levee-benchrx count DEV [--json]
//   levee-benchrx detach DEV
//
// The link and the counter are pinned under /sys/fs/bpf/levee-bench/DEV/, so the
// program keeps running after attach returns; detach removes the program and the pins.
// Pins live in the BPF filesystem shared by all network namespaces (setns changes only
// the network namespace), so count and detach need no --netns.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <net/if.h>
#include <sched.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "benchrx.skel.h"

namespace {

namespace fs = std::filesystem;
const fs::path kPinRoot = "/sys/fs/bpf/levee-bench";

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string errno_text(int err) { return std::strerror(err < 0 ? -err : err); }

fs::path pin_dir(const std::string& dev) { return kPinRoot / dev; }

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

void enter_netns(const std::string& name) {
  Fd ns(open(("/var/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC));
  if (ns.fd < 0 || setns(ns.fd, CLONE_NEWNET) != 0)
    throw Error(fmt::format("enter netns {}: {}", name, errno_text(errno)));
}

void attach(const std::string& dev, const std::string& which, const std::string& netns) {
  if (!netns.empty()) enter_netns(netns);
  unsigned ifindex = if_nametoindex(dev.c_str());
  if (ifindex == 0) throw Error(fmt::format("no interface named {}{}", dev, netns.empty() ? "" : " in netns " + netns));
  const fs::path dir = pin_dir(dev);
  if (fs::exists(dir))
    throw Error(fmt::format("{} exists: detach {} first (levee-benchrx detach {})", dir.string(), dev, dev));

  struct Skel {
    benchrx* s = benchrx__open();
    ~Skel() {
      if (s) benchrx__destroy(s);
    }
  } sk;
  if (!sk.s) throw Error(fmt::format("open benchrx object: {}", errno_text(errno)));
  bpf_program* progs[] = {sk.s->progs.rx_drop, sk.s->progs.rx_floor, sk.s->progs.rx_pass};
  const char* names[] = {"drop", "floor", "pass"};
  bpf_program* prog = nullptr;
  for (size_t i = 0; i < std::size(progs); ++i) {
    bool mine = which == names[i];
    bpf_program__set_autoload(progs[i], mine);
    if (mine) prog = progs[i];
  }
  if (!prog) throw Error(fmt::format("unknown receiver {}", which));
  if (int err = benchrx__load(sk.s); err) throw Error(fmt::format("load benchrx object: {}", errno_text(err)));

  // No mode flag: the kernel takes the driver's native XDP when it has one (veth does).
  bpf_link* link = bpf_program__attach_xdp(prog, static_cast<int>(ifindex));
  if (!link)
    throw Error(fmt::format("attach {} to {}: {} (another XDP program on it?)", which, dev, errno_text(errno)));
  std::error_code ec;
  fs::create_directories(dir, ec);
  int err = ec ? -ec.value() : bpf_link__pin(link, (dir / "link").c_str());
  if (!err) err = bpf_map__pin(sk.s->maps.rx_count, (dir / "count").c_str());
  if (err) {
    bpf_link__destroy(link);  // not pinned: closing the last reference detaches
    fs::remove_all(dir, ec);
    throw Error(fmt::format("pin under {}: {}", dir.string(), errno_text(err)));
  }
  bpf_link__destroy(link);  // the pin keeps it attached
  fmt::print("attached rx_{} to {} (ifindex {})\n", which, dev, ifindex);
}

std::vector<uint64_t> read_count(const std::string& dev) {
  const fs::path path = pin_dir(dev) / "count";
  Fd fd(bpf_obj_get(path.c_str()));
  if (fd.fd < 0)
    throw Error(fmt::format("open {}: {} (nothing attached to {}?)", path.string(), errno_text(errno), dev));
  int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0) throw Error("count possible CPUs");
  std::vector<uint64_t> per_cpu(static_cast<size_t>(ncpus));
  uint32_t key = 0;
  if (bpf_map_lookup_elem(fd.fd, &key, per_cpu.data()) != 0)
    throw Error(fmt::format("read {}: {}", path.string(), errno_text(errno)));
  return per_cpu;
}

void detach(const std::string& dev) {
  const fs::path dir = pin_dir(dev);
  if (!fs::exists(dir)) return;  // nothing of ours: idempotent, so cleanup can always call it
  Fd link(bpf_obj_get((dir / "link").c_str()));
  if (link.fd >= 0 && bpf_link_detach(link.fd) != 0 && errno != ENOLINK)
    throw Error(fmt::format("detach the link pinned at {}: {}", (dir / "link").string(), errno_text(errno)));
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) throw Error(fmt::format("remove {}: {}", dir.string(), ec.message()));
  fs::remove(kPinRoot, ec);  // only if empty
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"levee-benchrx: baseline XDP receivers for the end-to-end benchmark"};
  app.require_subcommand(1);
  std::string dev, which = "drop", netns;
  bool json = false;

  auto* a = app.add_subcommand("attach", "attach a counting receiver and pin it");
  a->add_option("dev", dev, "interface")->required();
  a->add_option("--prog", which, "drop | floor | pass")
      ->check(CLI::IsMember({"drop", "floor", "pass"}))
      ->capture_default_str();
  a->add_option("--netns", netns, "network namespace of the interface (/var/run/netns/NAME)");
  auto* c = app.add_subcommand("count", "print the frames the receiver has seen, summed over CPUs");
  c->add_option("dev", dev, "interface")->required();
  c->add_flag("--json", json, "one object: {\"packets\": N, \"per_cpu\": [...]}");
  auto* d = app.add_subcommand("detach", "detach the receiver and remove its pins");
  d->add_option("dev", dev, "interface")->required();
  CLI11_PARSE(app, argc, argv);
  libbpf_set_print(nullptr);

  try {
    if (a->parsed()) {
      attach(dev, which, netns);
    } else if (c->parsed()) {
      auto per_cpu = read_count(dev);
      uint64_t total = std::accumulate(per_cpu.begin(), per_cpu.end(), uint64_t{0});
      if (json)
        fmt::print("{}\n", nlohmann::json{{"packets", total}, {"per_cpu", per_cpu}}.dump());
      else
        fmt::print("{}  (per CPU: {})\n", total, fmt::join(per_cpu, " "));
    } else {
      detach(dev);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "levee-benchrx: {}\n", e.what());
    return 1;
  }
  return 0;
}
