# common.sh - shared by the scripts: root check, Debian packages, bpffs, build.
# Sourced, not run.

LEVEE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LEVEE_BUILD=${LEVEE_BUILD:-$LEVEE_ROOT/build}
# More CMake arguments for the configure, split at spaces: LEVEE_CMAKE_ARGS=-DLEVEE_WERROR=ON
# (.ci/run). A build directory keeps what it was configured with, so a later configure
# without them (scripts/bench.sh after scripts/test.sh) does not undo them.
read -r -a LEVEE_CMAKE_EXTRA <<<"${LEVEE_CMAKE_ARGS:-}"

# What building and testing levee needs from Debian 12. help2man: levee(8), made from
# levee --help (cmake/Manpage.cmake); without it the build has no manual page and no package.
LEVEE_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libtomlplusplus-dev libcpp-httplib-dev libmnl-dev libgtest-dev libgmock-dev
  iproute2 util-linux procps
  help2man
)
# What scripts/fuzz.sh adds: the compiler its harnesses need and libFuzzer.
FUZZ_PACKAGES=(clang-14 libfuzzer-14-dev)

die() { echo "$(basename "$0"): $*" >&2; exit 1; }

need_root() {
  [ "$(id -u)" = 0 ] || die "run as root: it loads XDP programs and creates network namespaces"
}

# Install the packages in "$@" that are missing, with one apt-get call.
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null || die "apt-get update failed"
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
}

ensure_bpffs() {
  mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || die "cannot mount bpffs on /sys/fs/bpf"
}

# The prefix /usr: the Debian package is made from this build (the unit names the
# binary's and the config's absolute paths), and its test runs with the others.
configure_levee() {
  cmake -S "$LEVEE_ROOT" -B "$LEVEE_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
    "${LEVEE_CMAKE_EXTRA[@]}" >/dev/null || die "cmake configure failed"
}

# Configure and build the targets in "$@", or every target.
build_levee() {
  local targets=()
  [ $# -eq 0 ] || targets=(--target "$@")
  configure_levee
  cmake --build "$LEVEE_BUILD" -j "$(nproc)" "${targets[@]}" || die "build failed (run: cmake --build $LEVEE_BUILD)"
}

# CrowdSec's Local API and cscli for the bouncer's end-to-end test (tests/e2e/crowdsec_test.cpp),
# unpacked into $1 (default /var/cache/levee-test/crowdsec) if not there yet. Never
# `apt-get install crowdsec`: its postinst registers with CrowdSec's online API, fails
# offline and leaves dpkg half-configured. Unpacked, no script of the package runs.
LEVEE_CROWDSEC_DIR=${LEVEE_CROWDSEC_DIR:-/var/cache/levee-test/crowdsec}
ensure_crowdsec() {
  local dir=${1:-$LEVEE_CROWDSEC_DIR} tmp
  [ -x "$dir/usr/bin/crowdsec" ] && [ -x "$dir/usr/bin/cscli" ] && return 0
  tmp=$(mktemp -d) || die "cannot make a temporary directory"
  (cd "$tmp" && apt-get download -q crowdsec >/dev/null 2>&1) \
    || (apt-get update -q >/dev/null && cd "$tmp" && apt-get download -q crowdsec >/dev/null) \
    || { rm -rf "$tmp"; die "apt-get download crowdsec failed"; }
  mkdir -p "$dir" && dpkg -x "$tmp"/crowdsec_*.deb "$dir" || { rm -rf "$tmp"; die "dpkg -x crowdsec failed"; }
  rm -rf "$tmp"
}
