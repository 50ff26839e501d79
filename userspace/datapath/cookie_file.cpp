#include "datapath/cookie_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/clock.hpp"
#include "core/fd.hpp"
#include "core/lock.hpp"

namespace levee {

namespace {

constexpr const char* kMagic = "levee-cookie-keys 1";

// Hex without a prefix, 16 digits.
std::optional<uint64_t> hex64(const std::string& s) {
  if (s.empty() || s.size() > 16 || s.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
  return std::stoull(s, nullptr, 16);
}

}  // namespace

std::string format_cookie_keys(const SavedCookieKeys& k) {
  return fmt::format("{}\nboot_id={}\nsaved_ns={}\nkey0={:016x}{:016x}\nkey1={:016x}{:016x}\n", kMagic, k.boot_id,
                     k.saved_ns, k.keys[0][0], k.keys[0][1], k.keys[1][0], k.keys[1][1]);
}

std::optional<SavedCookieKeys> parse_cookie_keys(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kMagic) return std::nullopt;
  SavedCookieKeys k;
  unsigned seen = 0;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const std::string key = line.substr(0, eq), v = line.substr(eq + 1);
    if (key == "boot_id" && !v.empty()) {
      k.boot_id = v;
      seen |= 1;
    } else if (key == "saved_ns" && !v.empty() && v.size() <= 20 && v.find_first_not_of("0123456789") == v.npos) {
      k.saved_ns = std::stoull(v);
      seen |= 2;
    } else if ((key == "key0" || key == "key1") && v.size() == 32) {
      const auto hi = hex64(v.substr(0, 16)), lo = hex64(v.substr(16));
      if (!hi || !lo) return std::nullopt;
      const unsigned slot = key == "key1";
      k.keys[slot][0] = *hi;
      k.keys[slot][1] = *lo;
      seen |= 4u << slot;
    } else {
      return std::nullopt;
    }
  }
  if (seen != 15) return std::nullopt;
  return k;
}

bool cookie_keys_reusable(const SavedCookieKeys& k, const std::string& boot, uint64_t now_ns) {
  return !boot.empty() && k.boot_id == boot && now_ns >= k.saved_ns && now_ns - k.saved_ns < kCookieKeysKeepNs &&
         (k.keys[0][0] | k.keys[0][1]) && (k.keys[1][0] | k.keys[1][1]);
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

Status save_cookie_keys(const std::string& iface, const uint64_t (&keys)[2][2]) {
  if (mkdir(kLockDir, 0700) != 0 && errno != EEXIST) return sys_error(fmt::format("create {}", kLockDir));
  SavedCookieKeys k;
  k.boot_id = boot_id();
  k.saved_ns = Clocks::read().now_mono_ns;
  for (unsigned s = 0; s < 2; ++s)
    for (unsigned i = 0; i < 2; ++i) k.keys[s][i] = keys[s][i];
  const std::string path = cookie_keys_path(iface), tmp = path + ".tmp";
  const std::string text = format_cookie_keys(k);
  {
    Fd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid()) return sys_error(fmt::format("write {}", tmp));
    if (fchmod(fd.get(), 0600) != 0 || write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
      const int err = errno;
      std::remove(tmp.c_str());
      return sys_error(fmt::format("write {}", tmp), err);
    }
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return sys_error(fmt::format("write {}", path), err);
  }
  return {};
}

std::optional<SavedCookieKeys> take_cookie_keys(const std::string& iface) {
  const std::string path = cookie_keys_path(iface);
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd.valid()) return std::nullopt;
  struct stat st {};
  std::string text;
  // Only a small regular file of root's that nobody else may read: anything else was not
  // written by a detach.
  if (fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077) &&
      st.st_size < 4096) {
    text.resize(static_cast<size_t>(st.st_size));
    if (read(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) text.clear();
  }
  std::remove(path.c_str());
  auto k = parse_cookie_keys(text);
  if (!k || !cookie_keys_reusable(*k, boot_id(), Clocks::read().now_mono_ns)) return std::nullopt;
  return k;
}

}  // namespace levee
