#!/usr/bin/env bash
# scripts/tidy.sh - clang-tidy 14 over the product's C++ (userspace/), with the checks of
# .clang-tidy and the compile commands of a build, one process per CPU.
#
#   scripts/tidy.sh              every .cpp under userspace/ (and the userspace headers they include)
#   scripts/tidy.sh FILE...      those files only
#
# Prints each finding once (a header's findings come once per file that includes it) and
# a count per check, and exits 1 on any finding: .clang-tidy makes every warning an error.
# Uses build/compile_commands.json (LEVEE_BUILD names another build); configures the
# build if it is not, and generates the BPF skeleton header the sources include.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

TIDY=${CLANG_TIDY:-clang-tidy-14}
command -v "$TIDY" >/dev/null || { need_root; ensure_packages clang-tidy-14; }

[ -f "$LEVEE_BUILD/compile_commands.json" ] || configure_levee
# userspace/datapath includes levee_bpf.skel.h, which only the build generates.
cmake --build "$LEVEE_BUILD" --target levee_bpf_skel_gen >/dev/null || die "cannot generate the BPF skeleton"

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(find "$LEVEE_ROOT/userspace" -name '*.cpp' | sort)
fi
[ ${#files[@]} -gt 0 ] || die "no files to check"

out=$(mktemp -d /tmp/levee-tidy.XXXXXX)
trap 'rm -rf "$out"' EXIT
# One log per file, so that parallel runs do not interleave their lines. Exit status 1
# is a finding (counted below) unless clang-tidy could not compile the file ("Error while
# processing"); more than 1 is a crash.
check_one() {
  local log rc=0
  log=$out/$(echo "$1" | tr / _).log
  "$TIDY" -p "$LEVEE_BUILD" --quiet "$1" >"$log" 2>&1 || rc=$?
  if [ "$rc" -gt 1 ] || { [ "$rc" = 1 ] && grep -q '^Error while processing' "$log"; }; then
    echo "$1" >>"$out/failed"
  fi
  return 0
}
export -f check_one
export TIDY LEVEE_BUILD out
printf '%s\0' "${files[@]}" | xargs -0 -n 1 -P "$(nproc)" bash -c 'check_one "$1"' _

# A finding is a "path:line:col: warning|error: ... [check]" line and the lines below it,
# up to the next such line. A header reached through a layer's include root in the build
# tree (build/layers/LAYER/, links into userspace/) is named by its place in userspace/,
# and a finding seen again (from another file that includes the header) is dropped. So
# is one in the generated BPF skeleton (*.skel.h): the static analyzer follows a call
# into it and reports what it cannot see libbpf do (bpf_object__destroy_skeleton() frees
# what the error path "leaks"), in code bpftool writes. Paths are printed from the root.
cat "$out"/*.log | sed "s|$(cd "$LEVEE_BUILD" && pwd)/layers/[^/]*/|$LEVEE_ROOT/userspace/|g" | awk '
  BEGIN { keep = 1 }
  /^[0-9]+ (warnings?|errors?)( and [0-9]+ (warnings?|errors?))? generated\.$/ { next }
  /^[^ ]+:[0-9]+:[0-9]+: (warning|error): / { keep = $1 !~ /\.skel\.h:/ && !seen[$0]++ }
  keep' | sed "s|$LEVEE_ROOT/||g" | tee "$out/findings"

status=0
summary=$(grep -oE '^[^ ]+:[0-9]+:[0-9]+: (warning|error): .*\[[^]]+\]$' "$out/findings" \
  | sed -E 's/.*\[([^],]+)[^]]*\]$/\1/' | sort | uniq -c | sort -rn || true)
if [ -n "$summary" ]; then
  echo
  echo "tidy.sh: $(awk '{ n += $1 } END { print n }' <<<"$summary") finding(s), by check:"
  echo "$summary"
  status=1
fi
if [ -f "$out/failed" ]; then
  echo "tidy.sh: clang-tidy could not check: $(paste -sd ' ' "$out/failed")" >&2
  status=1
fi
[ "$status" = 1 ] || echo "tidy.sh: ${#files[@]} file(s), no findings"
exit "$status"
