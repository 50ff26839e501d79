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
# userspace/bpf includes levee_bpf.skel.h, which only the build generates.
cmake --build "$LEVEE_BUILD" --target levee_bpf_skel_gen >/dev/null || die "cannot generate the BPF skeleton"

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(find "$LEVEE_ROOT/userspace" -name '*.cpp' | sort)
fi
[ ${#files[@]} -gt 0 ] || die "no files to check"

out=$(mktemp -d /tmp/levee-tidy.XXXXXX)
trap 'rm -rf "$out"' EXIT
# One log per file, so that parallel runs do not interleave their lines.
export TIDY LEVEE_BUILD out
printf '%s\0' "${files[@]}" | xargs -0 -n 1 -P "$(nproc)" bash -c \
  '"$TIDY" -p "$LEVEE_BUILD" --quiet "$1" >"$out/$(echo "$1" | tr / _).log" 2>&1 || echo "$1" >>"$out/failed"' _

# A finding is a "path:line:col: warning|error: ... [check]" line and the lines below it,
# up to the next such line; the same one seen again (from another file that includes
# the header) is dropped. Paths are printed from the root of the tree.
cat "$out"/*.log | sed "s|$LEVEE_ROOT/||g" | awk '
  BEGIN { keep = 1 }
  /^[0-9]+ (warnings?|errors?)( and [0-9]+ (warnings?|errors?))? generated\.$/ { next }
  /^[^ ]+:[0-9]+:[0-9]+: (warning|error): / { keep = !seen[$0]++ }
  keep' | tee "$out/findings"

summary=$(grep -oE '^[^ ]+:[0-9]+:[0-9]+: (warning|error): .*\[[^]]+\]$' "$out/findings" \
  | sed -E 's/.*\[([^],]+)[^]]*\]$/\1/' | sort | uniq -c | sort -rn || true)
if [ -n "$summary" ]; then
  echo
  echo "tidy.sh: $(awk '{ n += $1 } END { print n }' <<<"$summary") finding(s), by check:"
  echo "$summary"
  exit 1
fi
if [ -f "$out/failed" ]; then
  # clang-tidy failed without a finding of a check: a file that does not compile.
  echo "tidy.sh: clang-tidy failed on: $(paste -sd ' ' "$out/failed")" >&2
  exit 1
fi
echo "tidy.sh: ${#files[@]} file(s), no findings"
