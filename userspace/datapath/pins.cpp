#include "datapath/pins.hpp"

#include <bpf/bpf.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "datapath/kernel.hpp"
#include "levee_abi.h"

namespace fs = std::filesystem;

namespace levee {

namespace {

std::string encode(const std::string& iface) {
  std::string out;
  for (char c : iface) {
    if (c == '.')
      out += "%2e";
    else if (c == '%')
      out += "%25";
    else
      out += c;
  }
  return out;
}

std::string decode(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name.compare(i, 3, "%2e") == 0)
      out += '.', i += 2;
    else if (name.compare(i, 3, "%25") == 0)
      out += '%', i += 2;
    else
      out += name[i];
  }
  return out;
}

// lv_control.abi_version of a pinned policy map (its first word), 0 if unreadable.
uint32_t abi_of(int policy_fd) {
  bpf_map_info info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(policy_fd, &info, &len) != 0 || info.value_size < sizeof(uint32_t)) return 0;
  std::vector<uint8_t> value(info.value_size);  // an older layout's size, not ours
  uint32_t key = 0;
  if (bpf_map_lookup_elem(policy_fd, &key, value.data()) != 0) return 0;
  uint32_t v;
  std::memcpy(&v, value.data(), sizeof v);
  return v;
}

// Who may trust a path: root, or the user levee runs as (with capabilities, not root).
bool trusted_owner(uid_t uid) { return uid == 0 || uid == geteuid(); }

// One path of the tree: foreign owners and writable directories are refused; false
// when it vanished meanwhile (a concurrent detach), which is no problem.
Status check_pin_path(const std::string& path, const std::string& clear, bool& is_dir) {
  struct stat st {};
  is_dir = false;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return sys_error(fmt::format("inspect {}", path));
  }
  if (!trusted_owner(st.st_uid))
    return Error{fmt::format("{} is owned by uid {}, not by root: another user made it, levee does not trust it", path,
                             st.st_uid),
                 0, fmt::format("remove it (pins in it go too, detaching their filters): rm -r {}", clear)};
  is_dir = S_ISDIR(st.st_mode);
  if (is_dir && (st.st_mode & (S_IWGRP | S_IWOTH)))
    return Error{fmt::format("{} is writable by other users (mode {:04o}): they could rename or plant what is in it",
                             path, st.st_mode & 07777),
                 0, fmt::format("make it levee's alone: chmod 0700 {}", path)};
  return {};
}

}  // namespace

Status check_pin_root() {
  bool is_dir = false;
  LV_TRY(check_pin_path(kPinRoot, kPinRoot, is_dir));
  if (!is_dir) {
    struct stat st {};
    if (lstat(kPinRoot, &st) != 0) return {};  // not there: attach makes it
    return Error{fmt::format("{} is not a directory", kPinRoot), 0, fmt::format("remove it: rm -r {}", kPinRoot)};
  }
  // Two levels: the interfaces' (and working) directories, and what is in them.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kPinRoot, ec)) {
    const std::string dir = e.path().string();
    LV_TRY(check_pin_path(dir, dir, is_dir));
    if (!is_dir) continue;
    std::error_code ec2;
    for (const auto& f : fs::directory_iterator(dir, ec2)) {
      bool sub_dir = false;
      LV_TRY(check_pin_path(f.path().string(), dir, sub_dir));
    }
  }
  return {};
}

Status make_pin_root() {
  if (mkdir(kPinRoot, 0700) != 0 && errno != EEXIST) return sys_error(fmt::format("create {}", kPinRoot));
  return check_pin_root();
}

std::string pin_dir(const std::string& iface) { return fmt::format("{}/{}", kPinRoot, encode(iface)); }

std::string work_dir(const std::string& iface, const char* what, int pid) {
  return fmt::format("{}/{}:{}:{}", kPinRoot, encode(iface), what, pid);
}

size_t remove_leftovers(const std::string& iface) {
  const std::string prefix = encode(iface) + ":";
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kPinRoot, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) found.push_back(e.path());
  for (const auto& p : found) (void)remove_pin_dir(p.string());
  return found.size();
}

Result<Pinned> open_pinned(const std::string& iface) {
  const std::string dir = pin_dir(iface);
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Error{fmt::format("{} is not attached by levee (no {})", iface, dir), 0,
                 fmt::format("attach it first: levee attach {} --rate PPS --burst PKTS", iface)};
  Pinned p;
  p.iface = iface;
  std::optional<Error> missing;
  for_each_pin(p, [&](Fd& into, const char* name, bool optional) {
    if (missing) return;
    auto fd = open_pin(fmt::format("{}/{}", dir, name));
    if (fd) {
      into = std::move(fd.value());
      return;
    }
    if (optional) return;
    // An attachment of an older levee lacks the maps of newer ones: say so, not "incomplete".
    if (p.policy.valid() && abi_of(p.policy.get()) != LV_ABI_VERSION)
      missing = Error{fmt::format("{} was attached by a levee with state layout {}, this one uses {}", iface,
                                  abi_of(p.policy.get()), LV_ABI_VERSION),
                      0, fmt::format("detach and attach again: levee detach {}", iface)};
    else
      missing = Error{fmt::format("{} is incompletely pinned: {}", dir, fd.error().message()), 0,
                      fmt::format("remove what is left with: levee detach {}", iface)};
  });
  if (missing) return *missing;
  return p;
}

bool pin_dir_exists(const std::string& iface) {
  std::error_code ec;
  return fs::exists(pin_dir(iface), ec);
}

bool orphaned(const Pinned& p) {
  bpf_link_info li{};
  uint32_t len = sizeof li;
  // The kernel detaches an XDP link when its device goes and reports ifindex 0 from then.
  return bpf_obj_get_info_by_fd(p.link.get(), &li, &len) == 0 && li.xdp.ifindex == 0;
}

Status refuse_orphaned(const Pinned& p) {
  if (!orphaned(p)) return {};
  return Error{fmt::format("{} has levee pins left from an interface that is gone", p.iface), 0,
               fmt::format("clear them with: levee detach {}, then attach it again", p.iface)};
}

std::vector<std::string> list_pinned() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kPinRoot, ec)) {
    std::string name = e.path().filename().string();
    if (!name.empty() && name.find(':') == std::string::npos && e.is_directory(ec)) out.push_back(decode(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status remove_pin_dir(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);  // unlinking a pin drops the pin's reference only
  if (ec) return sys_error(fmt::format("remove {}", dir), ec.value());
  return {};
}

ListFds list_fds(const Pinned& p) {
  ListFds out{};
  for (unsigned slot = 0; slot < 2; ++slot)
    for (unsigned m = 0; m < kListMaps; ++m) out[slot][m] = p.lists[slot][m].get();
  return out;
}

Result<PolicyMap> map_pinned_policy(const Pinned& p) {
  LV_TRY_ASSIGN(auto pm, PolicyMap::map(p.policy.get(), list_fds(p)));
  if (pm.control().abi_version != LV_ABI_VERSION)
    return Error{fmt::format("{} was attached by a levee with state layout {}, this one uses {}", p.iface,
                             pm.control().abi_version, LV_ABI_VERSION),
                 0, fmt::format("detach and attach again: levee detach {}", p.iface)};
  return pm;
}

}  // namespace levee
