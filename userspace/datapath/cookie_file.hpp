// cookie_file.hpp - the SYN cookies' keys kept from a detach to the attach after it.
//
// A cookie is good for 8.6 to 17.2 s after levee answered its SYN (bpf/shared/syncookie.h). A
// detach and a new attach within that time (a restart of levee run with
// --detach-on-exit, an upgrade, an operator's detach + attach) would draw new keys, and
// every client between its SYN and its ACK would hang until it sent its SYN again. So a
// detach writes the two keys of lv_control.cookie_key to /run/levee/<iface>.cookies,
// with the boot's id (/proc/sys/kernel/random/boot_id) and CLOCK_MONOTONIC then, and the
// next attach of that interface takes them:
//   - only from this boot (CLOCK_MONOTONIC, which the cookies' periods count, starts over
//     at each boot) and only while a cookie they made may still be good
//     (kCookieKeysKeepNs, 2 x 2^33 ns); else it draws new ones, as always;
//   - and removes the file whatever it held: a key is reused once, never twice.
// The file is root's, 0600, written whole (a rename), in /run (a tmpfs: the keys never
// reach a disk). A file found unreadable, foreign or malformed is removed and ignored:
// new keys are always safe, only less convenient.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/result.hpp"

namespace levee {

using CookieKeyPair = uint64_t[2][2];

struct SavedCookieKeys {
  std::string boot_id;
  uint64_t saved_ns = 0;  // CLOCK_MONOTONIC at the detach
  uint64_t keys[2][2] = {};
};

// A cookie's longest life: two periods of 2^33 ns. Keys older than this made no cookie
// that is still good.
inline constexpr uint64_t kCookieKeysKeepNs = uint64_t{2} << 33;

// The file's text ("levee-cookie-keys 1", then one key=value line each) and back.
std::string format_cookie_keys(const SavedCookieKeys& k);
std::optional<SavedCookieKeys> parse_cookie_keys(const std::string& text);
// May keys saved as `k` serve an attach at `now_ns` in boot `boot_id`?
bool cookie_keys_reusable(const SavedCookieKeys& k, const std::string& boot_id, uint64_t now_ns);

// This boot's id, "" if unreadable (then nothing saved is ever reused).
std::string boot_id();
// Detach: the keys into /run/levee/<iface>.cookies (0600, replacing any).
Status save_cookie_keys(const std::string& iface, const uint64_t (&keys)[2][2]);
// Attach: the keys saved for the interface if they may be reused; the file is removed
// either way.
std::optional<SavedCookieKeys> take_cookie_keys(const std::string& iface);

}  // namespace levee
