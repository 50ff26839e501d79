#!/usr/bin/env bash
# scripts/test.sh - install what is missing (Debian), build, run every test.
#
# Needs root: the program tests load XDP programs into the kernel and the end-to-end
# tests create network namespaces joined by veth pairs (198.18.0.0/15, 2001:db8::/32).
# Everything a test creates is removed by the test, and swept again here on exit.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

# The end-to-end flood tests (tests/e2e/admission_test.cpp) run a private nginx in the
# receiver's namespace and wrk as its load client in the sender's (each started by the
# test on its own config; a system nginx service the package may start is not used).
# tests/e2e/daemon_test.cpp runs Debian's Prometheus server (and promtool) against `levee run`;
# tests/e2e/crowdsec_test.cpp Debian's CrowdSec Local API, unpacked, not installed (ensure_crowdsec),
# and sqlite3 to change its database while it is down.
# tests/install/package_test.sh lints the Debian package with lintian; cpack finds the
# binaries to give dpkg-shlibdeps with file (dpkg-shlibdeps and dpkg-deb come with
# build-essential's dpkg-dev).
TEST_PACKAGES=(nginx wrk prometheus sqlite3 lintian file)

need_root
ensure_packages "${LEVEE_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
ensure_crowdsec
ensure_bpffs
build_levee

# Last line of defence: remove sandboxes the tests name "lvt<pid>..." if a test
# process died before its own cleanup ran.
sweep() {
  local ns dir
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^lvt[0-9]' || true); do
    ip netns del "$ns" 2>/dev/null || true
  done
  for dir in /sys/fs/bpf/levee/lvt[0-9]*; do
    [ -e "$dir" ] && rm -rf "$dir"
  done
  rmdir /sys/fs/bpf/levee 2>/dev/null || true
}
trap sweep EXIT

cd "$LEVEE_BUILD"
# Serially: the end-to-end tests measure rates and must not compete for the 2 CPUs.
ctest --output-on-failure --timeout 600 "$@"
